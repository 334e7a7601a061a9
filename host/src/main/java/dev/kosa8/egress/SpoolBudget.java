package dev.kosa8.egress;

import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.concurrent.atomic.AtomicLong;

/**
 * One sandbox's spool of request bodies: where the files go, and how many bytes they hold together, within
 * {@link SpoolLimits#perSandbox()}. Each file is made readable by its owner only, opened, and unlinked at once: its
 * name never lingers, whatever happens to the request or the daemon, and its space is freed when it is closed
 * ({@link SpoolFile#close()}).
 */
final class SpoolBudget {
    private final AtomicLong used = new AtomicLong();
    private volatile Path dir;
    private volatile SpoolLimits limits = SpoolLimits.DEFAULT;

    SpoolBudget(Path dir) {
        this.dir = dir;
    }

    SpoolLimits limits() {
        return limits;
    }

    void limits(SpoolLimits next) {
        limits = next;
    }

    Path dir() {
        return dir;
    }

    void dir(Path next) {
        dir = next;
    }

    /** The bytes all open spool files of the sandbox hold now. */
    long used() {
        return used.get();
    }

    /** Takes {@code n} bytes of the sandbox's budget; false, taking none, when that would pass it. */
    boolean reserve(long n) {
        long max = limits.perSandbox();
        while (true) {
            long now = used.get();
            if (now + n > max) {
                return false;
            }
            if (used.compareAndSet(now, now + n)) {
                return true;
            }
        }
    }

    void free(long n) {
        used.addAndGet(-n);
    }

    /** A new empty file, already unlinked; its bytes are {@link #reserve reserved} as they are written. */
    SpoolFile open() throws IOException {
        Path d = dev.kosa8.host.HostPaths.privateDirectory(dir);
        Path f = Files.createTempFile(d, "body-", ".spool",
                PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------")));
        try {
            return new SpoolFile(FileChannel.open(f, StandardOpenOption.READ, StandardOpenOption.WRITE), this);
        } finally {
            Files.delete(f);
        }
    }
}
