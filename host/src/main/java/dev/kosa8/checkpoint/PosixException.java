package dev.kosa8.checkpoint;

import java.io.IOException;

/**
 * A failed system call of {@link Posix}: which call, on which name, and the
 * errno, so callers can tell "not there" (ENOENT) from "not allowed" (EACCES)
 * without parsing the message. Names are byte strings; the message shows them
 * as UTF-8 where they are, with other bytes escaped.
 */
final class PosixException extends IOException {
    final int errno;

    PosixException(int errno, String call, String name) {
        super(call + (name.isEmpty() ? "" : " " + ByteNames.display(name)) + ": " + describe(errno)
                + " (errno " + errno + ")");
        this.errno = errno;
    }

    static String describe(int errno) {
        return switch (errno) {
            case Posix.EPERM -> "Operation not permitted";
            case Posix.ENOENT -> "No such file or directory";
            case 5 -> "Input/output error";
            case 9 -> "Bad file descriptor";
            case Posix.EACCES -> "Permission denied";
            case Posix.EEXIST -> "File exists";
            case 18 -> "Invalid cross-device link";
            case Posix.ENOTDIR -> "Not a directory";
            case Posix.EISDIR -> "Is a directory";
            case Posix.EINVAL -> "Invalid argument";
            case 24 -> "Too many open files";
            case 27 -> "File too large";
            case Posix.ENOSPC -> "No space left on device";
            case 30 -> "Read-only file system";
            case 36 -> "File name too long";
            case Posix.ENOSYS -> "Function not implemented";
            case Posix.ENOTEMPTY -> "Directory not empty";
            case Posix.ELOOP -> "Too many levels of symbolic links";
            case 95 -> "Operation not supported";
            case 122 -> "Disk quota exceeded";
            default -> "error";
        };
    }
}
