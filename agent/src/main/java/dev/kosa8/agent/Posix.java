package dev.kosa8.agent;

import dev.kosa8.protocol.LinuxAbi;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;

/**
 * The libc calls several of the agent's classes share: opening a file as a
 * bare descriptor, writing all of a buffer, closing. A call only one class
 * makes lives with that class ({@link RelayIo}, {@link Pty},
 * {@link WorkspaceMount}, {@link ProcessChannel}, {@link SandboxCgroup},
 * {@link ClockAndEntropy}); {@link Libc} is the plumbing under all of them.
 */
final class Posix {
    static final int O_RDONLY = LinuxAbi.O_RDONLY;
    static final int O_RDWR = LinuxAbi.O_RDWR;
    /**
     * Reads and writes straight between the device and the caller's memory, past the page cache. This
     * architecture's: x86-64's value is arm64's O_DIRECTORY ({@link LinuxAbi}).
     */
    static final int O_DIRECT = direct();
    static final int O_CLOEXEC = LinuxAbi.O_CLOEXEC;

    private static final MethodHandle OPEN = Libc.handle("open",
            ValueLayout.JAVA_INT, ValueLayout.ADDRESS, ValueLayout.JAVA_INT);
    private static final MethodHandle WRITE = Libc.handle("write",
            ValueLayout.JAVA_LONG, ValueLayout.JAVA_INT, ValueLayout.ADDRESS, ValueLayout.JAVA_LONG);
    private static final MethodHandle CLOSE = Libc.handle("close", ValueLayout.JAVA_INT, ValueLayout.JAVA_INT);

    private Posix() {
    }

    /** This architecture's O_DIRECT; on one kosa8 has no numbers for, a failure rather than a page-cached disk. */
    private static int direct() {
        if (!LinuxAbi.current().supported()) {
            throw new IllegalStateException("kosa8's agent has no system-call numbers for this architecture ("
                    + System.getProperty("os.arch") + ")");
        }
        return LinuxAbi.current().oDirect();
    }

    /** Opens a file as a bare descriptor, close-on-exec, for I/O into native memory without the JDK's streams. */
    static int open(String path, int flags) {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment name = arena.allocateFrom(path);
            return (int) Libc.call(Libc.callState(arena), "open " + path,
                    st -> (int) OPEN.invokeExact(st, name, flags | O_CLOEXEC));
        }
    }

    /**
     * Writes {@code length} bytes of {@code buf}, however many write(2) calls
     * that takes; a descriptor that would block (EAGAIN) is tried again.
     */
    static void writeAll(int fd, MemorySegment buf, long length, MemorySegment st) {
        long off = 0;
        while (off < length) {
            long from = off;
            long n = Libc.call(st, "write",
                    s -> (long) WRITE.invokeExact(s, fd, buf.asSlice(from), length - from), Libc.EAGAIN);
            if (n > 0) {
                off += n;
            }
        }
    }

    /** close(2), whatever it says: the number is gone either way. */
    static void close(int fd) {
        try (Arena arena = Arena.ofConfined()) {
            int ignored = (int) CLOSE.invokeExact(Libc.callState(arena), fd);
        } catch (Throwable t) {
            throw new IllegalStateException(t);
        }
    }
}
