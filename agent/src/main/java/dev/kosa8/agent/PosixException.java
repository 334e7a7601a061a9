package dev.kosa8.agent;

/** A failed libc call and its errno. */
final class PosixException extends RuntimeException {
    final int errno;

    PosixException(String call, int errno) {
        super(call + " failed: errno " + errno);
        this.errno = errno;
    }
}
