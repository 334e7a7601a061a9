package dev.kosa8.checkpoint;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.security.MessageDigest;

/**
 * Reading a file once for its SHA-256, through a buffer the caller owns: a
 * capture hashing the clone it stored, a restore hashing the object it copies
 * (each chunk then written on) or the clone it made.
 */
final class Digests {
    /** What else is done with each chunk read, from its position to its limit. */
    @FunctionalInterface
    interface Chunk {
        void accept(ByteBuffer chunk) throws IOException;
    }

    private Digests() {
    }

    /**
     * Reads {@code fd} to its end, adding every byte to {@code sha} and then handing each chunk to
     * {@code also} (null: nothing more); returns how many bytes were read.
     */
    static long readAll(int fd, ByteBuffer buf, MessageDigest sha, Chunk also) throws IOException {
        long total = 0;
        buf.clear();
        int n;
        while ((n = Posix.read(fd, buf)) > 0) {
            total += n;
            buf.flip();
            sha.update(buf.duplicate());
            if (also != null) {
                also.accept(buf);
            }
            buf.clear();
        }
        return total;
    }
}
