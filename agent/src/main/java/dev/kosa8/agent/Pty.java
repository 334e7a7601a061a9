package dev.kosa8.agent;

import dev.kosa8.protocol.LinuxAbi;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;

/** A pseudo-terminal's master side, owned by one TTY exec. */
final class Pty implements AutoCloseable {
    private static final int O_RDWR = LinuxAbi.O_RDWR;
    private static final int O_NOCTTY = LinuxAbi.O_NOCTTY;
    private static final long TIOCSWINSZ = LinuxAbi.TIOCSWINSZ;
    private static final MethodHandle POSIX_OPENPT = Libc.handle("posix_openpt",
            ValueLayout.JAVA_INT, ValueLayout.JAVA_INT);
    private static final MethodHandle GRANTPT = Libc.handle("grantpt", ValueLayout.JAVA_INT, ValueLayout.JAVA_INT);
    private static final MethodHandle UNLOCKPT = Libc.handle("unlockpt", ValueLayout.JAVA_INT, ValueLayout.JAVA_INT);
    private static final MethodHandle PTSNAME_R = Libc.handle("ptsname_r",
            ValueLayout.JAVA_INT, ValueLayout.JAVA_INT, ValueLayout.ADDRESS, ValueLayout.JAVA_LONG);
    private static final MethodHandle IOCTL_PTR = Libc.variadic("ioctl", 2,
            ValueLayout.JAVA_INT, ValueLayout.JAVA_INT, ValueLayout.JAVA_LONG, ValueLayout.ADDRESS);
    private static final MethodHandle READ = Libc.handle("read",
            ValueLayout.JAVA_LONG, ValueLayout.JAVA_INT, ValueLayout.ADDRESS, ValueLayout.JAVA_LONG);

    record Opened(int masterFd, String slavePath) {
    }

    private final Opened opened;
    private final Arena arena = Arena.ofAuto();
    private final MemorySegment readBuffer;
    private volatile boolean closed;

    private Pty(Opened opened) {
        this.opened = opened;
        this.readBuffer = arena.allocate(dev.kosa8.protocol.Limits.MAX_DATA);
    }

    static Pty open(int rows, int columns) {
        Pty pty = new Pty(openPty());
        pty.resize(rows, columns);
        return pty;
    }

    String slavePath() {
        return opened.slavePath();
    }

    synchronized void resize(int rows, int columns) {
        if (!closed) {
            setWindowSize(opened.masterFd(), rows, columns);
        }
    }

    /**
     * Reads what the terminal's programs wrote, at most {@code max} bytes;
     * empty at hang-up (EIO from a master whose slave is gone counts as the
     * end).
     */
    byte[] read(int max) {
        MemorySegment slice = readBuffer.asSlice(0, Math.min(max, readBuffer.byteSize()));
        MemorySegment st = Libc.callState(arena);
        int fd = opened.masterFd();
        while (true) {
            long n = Libc.call(st, "read", s -> (long) READ.invokeExact(s, fd, slice, slice.byteSize()),
                    Libc.EAGAIN, Libc.EIO);
            if (n == -Libc.EAGAIN) {
                continue;
            }
            return n == -Libc.EIO ? new byte[0] : slice.asSlice(0, n).toArray(ValueLayout.JAVA_BYTE);
        }
    }

    /**
     * Types into the terminal. Not under the lock: a write can block while the
     * program does not read, and close() must still go through when it exits.
     */
    void write(byte[] bytes) {
        if (!closed) {
            try (Arena a = Arena.ofConfined()) {
                Posix.writeAll(opened.masterFd(), a.allocateFrom(ValueLayout.JAVA_BYTE, bytes), bytes.length,
                        Libc.callState(a));
            }
        }
    }

    @Override
    public synchronized void close() {
        if (!closed) {
            closed = true;
            Posix.close(opened.masterFd());
        }
    }

    /** Opens a new pseudo-terminal: its master's descriptor and its slave's path. */
    private static Opened openPty() {
        try (Arena a = Arena.ofConfined()) {
            MemorySegment st = Libc.callState(a);
            int fd = (int) Libc.call(st, "posix_openpt", s -> (int) POSIX_OPENPT.invokeExact(s, O_RDWR | O_NOCTTY));
            try {
                Libc.call(st, "grantpt", s -> (int) GRANTPT.invokeExact(s, fd));
                Libc.call(st, "unlockpt", s -> (int) UNLOCKPT.invokeExact(s, fd));
                MemorySegment name = a.allocate(128);
                int r;
                try {
                    r = (int) PTSNAME_R.invokeExact(st, fd, name, 128L);
                } catch (Throwable t) {
                    throw new IllegalStateException("ptsname_r", t);
                }
                if (r != 0) {
                    throw new PosixException("ptsname_r", r); // it returns the error number itself
                }
                return new Opened(fd, name.getString(0));
            } catch (RuntimeException e) {
                Posix.close(fd);
                throw e;
            }
        }
    }

    private static void setWindowSize(int fd, int rows, int columns) {
        try (Arena a = Arena.ofConfined()) {
            MemorySegment ws = a.allocate(8);
            ws.set(ValueLayout.JAVA_SHORT, 0, (short) rows);
            ws.set(ValueLayout.JAVA_SHORT, 2, (short) columns);
            Libc.call(Libc.callState(a), "ioctl(TIOCSWINSZ)", s -> (int) IOCTL_PTR.invokeExact(s, fd, TIOCSWINSZ, ws));
        }
    }
}
