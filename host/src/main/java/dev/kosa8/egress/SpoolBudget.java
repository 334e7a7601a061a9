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
    /**
     * The threads every sandbox's spool files are read and written on: few (file I/O on a local disk is quick, and
     * what waits on it is bounded by {@link SpoolFile#AHEAD} per file), daemon threads, off every Netty event loop.
     */
    private static final java.util.concurrent.ExecutorService IO = java.util.concurrent.Executors.newFixedThreadPool(4,
            Thread.ofPlatform().daemon().name("kosa8-spool-io-", 0).factory());

    private final AtomicLong used = new AtomicLong();
    private volatile java.util.concurrent.Executor io = IO;
    /** A test's slow disk: each write waits this long first; 0, always, outside tests. */
    private volatile long slowWritesMillis;
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

    /** Where the spool's files are read and written. */
    java.util.concurrent.Executor io() {
        return io;
    }

    /** Tests: runs the spool's file I/O on {@code next} instead (a fuzz test runs it in line). */
    void io(java.util.concurrent.Executor next) {
        io = next;
    }

    /** Tests: makes every write to a spool file wait {@code millis} first, a disk far slower than the network. */
    void slowWrites(long millis) {
        slowWritesMillis = millis;
    }

    /** Called by a spool file's writer before each write: waits as {@link #slowWrites} says (no time outside tests). */
    void slowDown() {
        long ms = slowWritesMillis;
        if (ms > 0) {
            try {
                Thread.sleep(ms);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
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
