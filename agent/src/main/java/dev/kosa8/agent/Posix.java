package dev.kosa8.agent;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.SymbolLookup;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;

/**
 * The few libc calls the JDK does not offer, through Java's FFM API: signals
 * to process groups, pseudo-terminals and their window size. Errors come back
 * as {@link PosixException} carrying errno.
 */
final class Posix {
    static final int O_RDONLY = 0;
    static final int O_RDWR = 02;
    /** Reads straight from the device into the caller's memory, past the page cache. */
    static final int O_DIRECT = 040000;
    static final int O_NOCTTY = 0400;
    static final long TIOCSWINSZ = 0x5414;
    static final int EIO = 5;
    static final int EINTR = 4;
    static final int EAGAIN = 11;

    private static final Linker LINKER = Linker.nativeLinker();
    private static final SymbolLookup LIBC = LINKER.defaultLookup();
    private static final Linker.Option ERRNO = Linker.Option.captureCallState("errno");
    private static final long ERRNO_OFFSET = Linker.Option.captureStateLayout()
            .byteOffset(java.lang.foreign.MemoryLayout.PathElement.groupElement("errno"));

    private static final MethodHandle KILL = handle("kill",
            FunctionDescriptor.of(ValueLayout.JAVA_INT, ValueLayout.JAVA_INT, ValueLayout.JAVA_INT));
    private static final MethodHandle POSIX_OPENPT = handle("posix_openpt",
            FunctionDescriptor.of(ValueLayout.JAVA_INT, ValueLayout.JAVA_INT));
    private static final MethodHandle GRANTPT = handle("grantpt",
            FunctionDescriptor.of(ValueLayout.JAVA_INT, ValueLayout.JAVA_INT));
    private static final MethodHandle UNLOCKPT = handle("unlockpt",
            FunctionDescriptor.of(ValueLayout.JAVA_INT, ValueLayout.JAVA_INT));
    private static final MethodHandle PTSNAME_R = handle("ptsname_r",
            FunctionDescriptor.of(ValueLayout.JAVA_INT, ValueLayout.JAVA_INT, ValueLayout.ADDRESS, ValueLayout.JAVA_LONG));
    private static final MethodHandle READ = handle("read",
            FunctionDescriptor.of(ValueLayout.JAVA_LONG, ValueLayout.JAVA_INT, ValueLayout.ADDRESS, ValueLayout.JAVA_LONG));
    private static final MethodHandle WRITE = handle("write",
            FunctionDescriptor.of(ValueLayout.JAVA_LONG, ValueLayout.JAVA_INT, ValueLayout.ADDRESS, ValueLayout.JAVA_LONG));
    private static final MethodHandle PREAD = handle("pread",
            FunctionDescriptor.of(ValueLayout.JAVA_LONG, ValueLayout.JAVA_INT, ValueLayout.ADDRESS, ValueLayout.JAVA_LONG,
                    ValueLayout.JAVA_LONG));
    private static final MethodHandle PWRITE = handle("pwrite",
            FunctionDescriptor.of(ValueLayout.JAVA_LONG, ValueLayout.JAVA_INT, ValueLayout.ADDRESS, ValueLayout.JAVA_LONG,
                    ValueLayout.JAVA_LONG));
    private static final MethodHandle CLOSE = handle("close",
            FunctionDescriptor.of(ValueLayout.JAVA_INT, ValueLayout.JAVA_INT));
    private static final MethodHandle IOCTL_PTR = LINKER.downcallHandle(LIBC.find("ioctl").orElseThrow(),
            FunctionDescriptor.of(ValueLayout.JAVA_INT, ValueLayout.JAVA_INT, ValueLayout.JAVA_LONG, ValueLayout.ADDRESS),
            ERRNO, Linker.Option.firstVariadicArg(2));

    private static final MethodHandle OPEN = handle("open",
            FunctionDescriptor.of(ValueLayout.JAVA_INT, ValueLayout.ADDRESS, ValueLayout.JAVA_INT));
    private static final MethodHandle MOUNT = handle("mount",
            FunctionDescriptor.of(ValueLayout.JAVA_INT, ValueLayout.ADDRESS, ValueLayout.ADDRESS, ValueLayout.ADDRESS,
                    ValueLayout.JAVA_LONG, ValueLayout.ADDRESS));
    private static final MethodHandle UMOUNT2 = handle("umount2",
            FunctionDescriptor.of(ValueLayout.JAVA_INT, ValueLayout.ADDRESS, ValueLayout.JAVA_INT));
    private static final MethodHandle SYNC = LINKER.downcallHandle(LIBC.find("sync").orElseThrow(),
            FunctionDescriptor.ofVoid());
    private static final MethodHandle CLOCK_SETTIME = handle("clock_settime",
            FunctionDescriptor.of(ValueLayout.JAVA_INT, ValueLayout.JAVA_INT, ValueLayout.ADDRESS));
    private static final MethodHandle IOCTL_NOARG = LINKER.downcallHandle(LIBC.find("ioctl").orElseThrow(),
            FunctionDescriptor.of(ValueLayout.JAVA_INT, ValueLayout.JAVA_INT, ValueLayout.JAVA_LONG), ERRNO,
            Linker.Option.firstVariadicArg(2));
    private static final MethodHandle PIPE2 = handle("pipe2",
            FunctionDescriptor.of(ValueLayout.JAVA_INT, ValueLayout.ADDRESS, ValueLayout.JAVA_INT));
    private static final MethodHandle FCNTL_INT = LINKER.downcallHandle(LIBC.find("fcntl").orElseThrow(),
            FunctionDescriptor.of(ValueLayout.JAVA_INT, ValueLayout.JAVA_INT, ValueLayout.JAVA_INT, ValueLayout.JAVA_INT),
            ERRNO, Linker.Option.firstVariadicArg(2));
    private static final MethodHandle VMSPLICE = handle("vmsplice",
            FunctionDescriptor.of(ValueLayout.JAVA_LONG, ValueLayout.JAVA_INT, ValueLayout.ADDRESS, ValueLayout.JAVA_LONG,
                    ValueLayout.JAVA_INT));
    private static final MethodHandle POLL = handle("poll",
            FunctionDescriptor.of(ValueLayout.JAVA_INT, ValueLayout.ADDRESS, ValueLayout.JAVA_LONG, ValueLayout.JAVA_INT));
    private static final MethodHandle DUP3 = handle("dup3",
            FunctionDescriptor.of(ValueLayout.JAVA_INT, ValueLayout.JAVA_INT, ValueLayout.JAVA_INT, ValueLayout.JAVA_INT));
    private static final MethodHandle SCHED_SETAFFINITY = handle("sched_setaffinity",
            FunctionDescriptor.of(ValueLayout.JAVA_INT, ValueLayout.JAVA_INT, ValueLayout.JAVA_LONG, ValueLayout.ADDRESS));
    /** The size of glibc's {@code cpu_set_t}: 1024 CPUs, one bit each. */
    private static final int CPU_SET_BYTES = 128;
    private static final int F_GETFL = 3, F_SETFL = 4, F_SETPIPE_SZ = 1031;
    static final int O_NONBLOCK = 04000;
    static final int EPIPE = 32;
    private static final long FIONREAD = 0x541B;
    private static final int SPLICE_F_NONBLOCK = 2;
    private static final short POLLOUT = 4;
    private static final int CLOCK_REALTIME = 0;
    /** {@code _IOW('R', 0x03, int[2])} and {@code _IO('R', 0x07)} from linux/random.h. */
    private static final long RNDADDENTROPY = 0x40085203L, RNDRESEEDCRNG = 0x5207L;
    static final int O_CLOEXEC = 02000000;
    static final long MS_NOSUID = 2, MS_NODEV = 4, MS_BIND = 4096;
    static final int MNT_DETACH = 2;

    private Posix() {
    }

    private static MethodHandle handle(String name, FunctionDescriptor fd) {
        return LINKER.downcallHandle(LIBC.find(name).orElseThrow(), fd, ERRNO);
    }

    private static int errno(MemorySegment state) {
        return state.get(ValueLayout.JAVA_INT, ERRNO_OFFSET);
    }

    private static MemorySegment state(Arena arena) {
        return arena.allocate(Linker.Option.captureStateLayout());
    }

    /** Flushes every file system's dirty data to its device. */
    static void sync() {
        try {
            SYNC.invokeExact();
        } catch (Throwable t) {
            throw new IllegalStateException(t);
        }
    }

    /** Sets the system clock (CLOCK_REALTIME). */
    static void setClock(long epochMillis) {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment st = state(arena);
            MemorySegment ts = arena.allocate(16, 8);
            ts.set(ValueLayout.JAVA_LONG, 0, Math.floorDiv(epochMillis, 1000));
            ts.set(ValueLayout.JAVA_LONG, 8, Math.floorMod(epochMillis, 1000) * 1_000_000L);
            int r = (int) CLOCK_SETTIME.invokeExact(st, CLOCK_REALTIME, ts);
            if (r != 0) {
                throw new PosixException("clock_settime", errno(st));
            }
        } catch (PosixException e) {
            throw e;
        } catch (Throwable t) {
            throw new IllegalStateException(t);
        }
    }

    /**
     * Mixes {@code seed} into the kernel's random pool, credited as entropy,
     * and has the kernel reseed its generator from the pool at once, so the
     * next random bytes depend on the seed (RNDADDENTROPY, RNDRESEEDCRNG).
     */
    static void reseed(byte[] seed) {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment st = state(arena);
            int fd = open("/dev/urandom", 2 | O_CLOEXEC);
            try {
                MemorySegment info = arena.allocate(8L + seed.length, 4);
                info.set(ValueLayout.JAVA_INT, 0, seed.length * 8);
                info.set(ValueLayout.JAVA_INT, 4, seed.length);
                MemorySegment.copy(seed, 0, info, ValueLayout.JAVA_BYTE, 8, seed.length);
                if ((int) IOCTL_PTR.invokeExact(st, fd, RNDADDENTROPY, info) != 0) {
                    throw new PosixException("ioctl(RNDADDENTROPY)", errno(st));
                }
                if ((int) IOCTL_NOARG.invokeExact(st, fd, RNDRESEEDCRNG) != 0) {
                    throw new PosixException("ioctl(RNDRESEEDCRNG)", errno(st));
                }
            } finally {
                close(fd);
            }
        } catch (PosixException e) {
            throw e;
        } catch (Throwable t) {
            throw new IllegalStateException(t);
        }
    }

    /** Sends a signal to a process ({@code pid > 0}) or a process group ({@code pid < 0}). */
    static void kill(long pid, int signal) {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment st = state(arena);
            int r = (int) KILL.invokeExact(st, (int) pid, signal);
            if (r != 0) {
                throw new PosixException("kill", errno(st));
            }
        } catch (PosixException e) {
            throw e;
        } catch (Throwable t) {
            throw new IllegalStateException(t);
        }
    }

    /** Opens a new pseudo-terminal; returns the master fd and the slave's path. */
    static Pty.Opened openPty() {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment st = state(arena);
            int fd = (int) POSIX_OPENPT.invokeExact(st, O_RDWR | O_NOCTTY);
            if (fd < 0) {
                throw new PosixException("posix_openpt", errno(st));
            }
            try {
                if ((int) GRANTPT.invokeExact(st, fd) != 0) {
                    throw new PosixException("grantpt", errno(st));
                }
                if ((int) UNLOCKPT.invokeExact(st, fd) != 0) {
                    throw new PosixException("unlockpt", errno(st));
                }
                MemorySegment name = arena.allocate(128);
                int r = (int) PTSNAME_R.invokeExact(st, fd, name, 128L);
                if (r != 0) {
                    throw new PosixException("ptsname_r", r);
                }
                return new Pty.Opened(fd, name.getString(0));
            } catch (RuntimeException e) {
                close(fd);
                throw e;
            }
        } catch (RuntimeException e) {
            throw e;
        } catch (Throwable t) {
            throw new IllegalStateException(t);
        }
    }

    static void setWindowSize(int fd, int rows, int columns) {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment st = state(arena);
            MemorySegment ws = arena.allocate(8);
            ws.set(ValueLayout.JAVA_SHORT, 0, (short) rows);
            ws.set(ValueLayout.JAVA_SHORT, 2, (short) columns);
            int r = (int) IOCTL_PTR.invokeExact(st, fd, TIOCSWINSZ, ws);
            if (r != 0) {
                throw new PosixException("ioctl(TIOCSWINSZ)", errno(st));
            }
        } catch (PosixException e) {
            throw e;
        } catch (Throwable t) {
            throw new IllegalStateException(t);
        }
    }

    /** Reads into {@code buf}; returns the count, 0 at end of file (EIO on a hung-up PTY master counts as end). */
    static int read(int fd, MemorySegment buf, Arena arena) {
        MemorySegment st = state(arena);
        while (true) {
            long n;
            try {
                n = (long) READ.invokeExact(st, fd, buf, buf.byteSize());
            } catch (Throwable t) {
                throw new IllegalStateException(t);
            }
            if (n >= 0) {
                return (int) n;
            }
            int e = errno(st);
            if (e == EINTR || e == EAGAIN) {
                continue;
            }
            if (e == EIO) {
                return 0;
            }
            throw new PosixException("read", e);
        }
    }

    static void writeFully(int fd, byte[] bytes) {
        try (Arena arena = Arena.ofConfined()) {
            writeAll(fd, arena.allocateFrom(ValueLayout.JAVA_BYTE, bytes), bytes.length, state(arena));
        }
    }

    /** Opens a file for reading and writing without the JDK's stream classes, for I/O into native memory. */
    static int open(String path, int flags) {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment st = state(arena);
            int fd = (int) OPEN.invokeExact(st, arena.allocateFrom(path), flags | O_CLOEXEC);
            if (fd < 0) {
                throw new PosixException("open " + path, errno(st));
            }
            return fd;
        } catch (PosixException e) {
            throw e;
        } catch (Throwable t) {
            throw new IllegalStateException(t);
        }
    }

    /** mount(2); a null {@code fsType} or {@code data} is passed as NULL. */
    static void mount(String source, String target, String fsType, long flags, String data) {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment st = state(arena);
            MemorySegment type = fsType == null ? MemorySegment.NULL : arena.allocateFrom(fsType);
            MemorySegment options = data == null ? MemorySegment.NULL : arena.allocateFrom(data);
            int r = (int) MOUNT.invokeExact(st, arena.allocateFrom(source), arena.allocateFrom(target), type, flags,
                    options);
            if (r != 0) {
                throw new PosixException("mount " + target, errno(st));
            }
        } catch (PosixException e) {
            throw e;
        } catch (Throwable t) {
            throw new IllegalStateException(t);
        }
    }

    /** umount2(2). */
    static void umount(String target, int flags) {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment st = state(arena);
            int r = (int) UMOUNT2.invokeExact(st, arena.allocateFrom(target), flags);
            if (r != 0) {
                throw new PosixException("umount " + target, errno(st));
            }
        } catch (PosixException e) {
            throw e;
        } catch (Throwable t) {
            throw new IllegalStateException(t);
        }
    }

    /** One read(2) of at most {@code length} bytes into {@code buf}; -1 for end of file. Retries EINTR. */
    static int readSome(int fd, MemorySegment buf, long length, MemorySegment st) {
        while (true) {
            long n;
            try {
                n = (long) READ.invokeExact(st, fd, buf, length);
            } catch (Throwable t) {
                throw new IllegalStateException(t);
            }
            if (n > 0) {
                return (int) n;
            }
            if (n == 0) {
                return -1;
            }
            int e = errno(st);
            if (e != EINTR) {
                throw new PosixException("read", e);
            }
        }
    }

    /**
     * Reads {@code length} bytes at {@code offset} into {@code buf}, however
     * many pread(2) calls that takes; fails at end of file.
     */
    static void preadFully(int fd, MemorySegment buf, long length, long offset, MemorySegment st) {
        positionalFully(PREAD, "pread", fd, buf, length, offset, st);
    }

    /** Writes all of {@code length} bytes of {@code buf} at {@code offset} of {@code fd} (a disk, O_DIRECT: all aligned). */
    static void pwriteFully(int fd, MemorySegment buf, long length, long offset, MemorySegment st) {
        positionalFully(PWRITE, "pwrite", fd, buf, length, offset, st);
    }

    /** pread(2) or pwrite(2), {@code call}, until all of {@code length} bytes are done; fails at the end of the device. */
    private static void positionalFully(MethodHandle call, String name, int fd, MemorySegment buf, long length,
            long offset, MemorySegment st) {
        long off = 0;
        while (off < length) {
            long n;
            try {
                n = (long) call.invokeExact(st, fd, buf.asSlice(off), length - off, offset + off);
            } catch (Throwable t) {
                throw new IllegalStateException(t);
            }
            if (n == 0) {
                throw new PosixException(name + " (end of device)", EIO);
            }
            if (n < 0) {
                int e = errno(st);
                if (e == EINTR) {
                    continue;
                }
                throw new PosixException(name, e);
            }
            off += n;
        }
    }

    /** Writes {@code length} bytes of {@code buf}, however many write(2) calls that takes. */
    static void writeAll(int fd, MemorySegment buf, long length, MemorySegment st) {
        long off = 0;
        while (off < length) {
            long n;
            try {
                n = (long) WRITE.invokeExact(st, fd, buf.asSlice(off), length - off);
            } catch (Throwable t) {
                throw new IllegalStateException(t);
            }
            if (n < 0) {
                int e = errno(st);
                if (e == EINTR || e == EAGAIN) {
                    continue;
                }
                throw new PosixException("write", e);
            }
            off += n;
        }
    }

    /**
     * A pipe of at least {@code bytes} capacity (root may go past
     * {@code /proc/sys/fs/pipe-max-size}), both ends close-on-exec: {read end, write end}.
     */
    static int[] pipe(int bytes) {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment st = state(arena);
            MemorySegment fds = arena.allocate(ValueLayout.JAVA_INT, 2);
            if ((int) PIPE2.invokeExact(st, fds, O_CLOEXEC) != 0) {
                throw new PosixException("pipe2", errno(st));
            }
            int[] pair = {fds.getAtIndex(ValueLayout.JAVA_INT, 0), fds.getAtIndex(ValueLayout.JAVA_INT, 1)};
            if ((int) FCNTL_INT.invokeExact(st, pair[1], F_SETPIPE_SZ, bytes) < 0) {
                int e = errno(st);
                close(pair[0]);
                close(pair[1]);
                throw new PosixException("fcntl(F_SETPIPE_SZ " + bytes + ")", e);
            }
            return pair;
        } catch (PosixException e) {
            throw e;
        } catch (Throwable t) {
            throw new IllegalStateException(t);
        }
    }

    /** Lets the calling thread run on {@code cpu} alone (sched_setaffinity(2) of thread 0, itself). */
    static void pinCallingThread(int cpu) {
        if (cpu < 0 || cpu >= CPU_SET_BYTES * 8) {
            throw new IllegalArgumentException("no such CPU: " + cpu);
        }
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment st = state(arena);
            MemorySegment mask = arena.allocate(CPU_SET_BYTES, 8);
            mask.set(ValueLayout.JAVA_BYTE, cpu / 8, (byte) (1 << (cpu % 8)));
            if ((int) SCHED_SETAFFINITY.invokeExact(st, 0, (long) CPU_SET_BYTES, mask) != 0) {
                throw new PosixException("sched_setaffinity(CPU " + cpu + ")", errno(st));
            }
        } catch (PosixException e) {
            throw e;
        } catch (Throwable t) {
            throw new IllegalStateException(t);
        }
    }

    /** Makes reads and writes of {@code fd}'s open file return EAGAIN instead of waiting. */
    static void setNonBlocking(int fd) {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment st = state(arena);
            int flags = (int) FCNTL_INT.invokeExact(st, fd, F_GETFL, 0);
            if (flags < 0 || (int) FCNTL_INT.invokeExact(st, fd, F_SETFL, flags | O_NONBLOCK) < 0) {
                throw new PosixException("fcntl(O_NONBLOCK)", errno(st));
            }
        } catch (PosixException e) {
            throw e;
        } catch (Throwable t) {
            throw new IllegalStateException(t);
        }
    }

    /** dup3(2) with O_CLOEXEC: {@code to} now refers to {@code from}'s open file, atomically. */
    static void dupOnto(int from, int to) {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment st = state(arena);
            if ((int) DUP3.invokeExact(st, from, to, O_CLOEXEC) < 0) {
                throw new PosixException("dup3", errno(st));
            }
        } catch (PosixException e) {
            throw e;
        } catch (Throwable t) {
            throw new IllegalStateException(t);
        }
    }

    /**
     * One write(2) of a non-blocking {@code fd}: the count written, 0 when it
     * would wait. Retries EINTR.
     */
    static long writeSome(int fd, MemorySegment buf, long length, MemorySegment st) {
        while (true) {
            long n;
            try {
                n = (long) WRITE.invokeExact(st, fd, buf, length);
            } catch (Throwable t) {
                throw new IllegalStateException(t);
            }
            if (n >= 0) {
                return n;
            }
            int e = errno(st);
            if (e == EAGAIN) {
                return 0;
            }
            if (e != EINTR) {
                throw new PosixException("write", e);
            }
        }
    }

    /**
     * One vmsplice(2) of {@code length} bytes of {@code buf} into the pipe
     * {@code fd}, without waiting: the pipe then refers to those pages of
     * memory, it does not copy them, so they must not change until read.
     * {@code iov} is room for one iovec. Returns the count, 0 when the pipe is full.
     */
    static long vmsplice(int fd, MemorySegment buf, long length, MemorySegment iov, MemorySegment st) {
        iov.set(ValueLayout.ADDRESS, 0, buf);
        iov.set(ValueLayout.JAVA_LONG, 8, length);
        while (true) {
            long n;
            try {
                n = (long) VMSPLICE.invokeExact(st, fd, iov, 1L, SPLICE_F_NONBLOCK);
            } catch (Throwable t) {
                throw new IllegalStateException(t);
            }
            if (n >= 0) {
                return n;
            }
            int e = errno(st);
            if (e == EAGAIN) {
                return 0;
            }
            if (e != EINTR) {
                throw new PosixException("vmsplice", e);
            }
        }
    }

    /** How many bytes the pipe (either end) holds unread: FIONREAD. */
    static int unread(int fd, MemorySegment intRoom, MemorySegment st) {
        try {
            if ((int) IOCTL_PTR.invokeExact(st, fd, FIONREAD, intRoom) != 0) {
                throw new PosixException("ioctl(FIONREAD)", errno(st));
            }
        } catch (PosixException e) {
            throw e;
        } catch (Throwable t) {
            throw new IllegalStateException(t);
        }
        return intRoom.get(ValueLayout.JAVA_INT, 0);
    }

    /** Waits up to {@code millis} for {@code fd} to take a write; {@code pollfd} is room for one struct pollfd. */
    static void awaitWritable(int fd, int millis, MemorySegment pollfd, MemorySegment st) {
        pollfd.set(ValueLayout.JAVA_INT, 0, fd);
        pollfd.set(ValueLayout.JAVA_SHORT, 4, POLLOUT);
        pollfd.set(ValueLayout.JAVA_SHORT, 6, (short) 0);
        try {
            int r = (int) POLL.invokeExact(st, pollfd, 1L, millis);
            if (r < 0 && errno(st) != EINTR) {
                throw new PosixException("poll", errno(st));
            }
        } catch (PosixException e) {
            throw e;
        } catch (Throwable t) {
            throw new IllegalStateException(t);
        }
    }

    /** Room for the errno a call captures; one per thread that makes calls. */
    static MemorySegment callState(Arena arena) {
        return state(arena);
    }

    static void close(int fd) {
        try (Arena arena = Arena.ofConfined()) {
            int ignored = (int) CLOSE.invokeExact(state(arena), fd);
        } catch (Throwable t) {
            throw new IllegalStateException(t);
        }
    }

    /** A failed libc call and its errno. */
    static final class PosixException extends RuntimeException {
        final int errno;

        PosixException(String call, int errno) {
            super(call + " failed: errno " + errno);
            this.errno = errno;
        }
    }
}
