package dev.kosa8.agent;

import dev.kosa8.protocol.LinuxAbi;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;

/**
 * The system calls of the workspace relay ({@link WorkspaceRelay}): its
 * pipes, the port and the window disks, read and written straight in native
 * memory. Those on the path of every message take the calling thread's call
 * state ({@link Libc#callState}), so relaying a message allocates nothing
 * native.
 */
final class RelayIo {
    private static final int F_GETFL = 3, F_SETFL = 4, F_SETPIPE_SZ = 1031;
    private static final int O_NONBLOCK = LinuxAbi.O_NONBLOCK;
    private static final long FIONREAD = LinuxAbi.FIONREAD;
    private static final int SPLICE_F_NONBLOCK = 2;
    private static final short POLLOUT = 4;
    /** The size of glibc's {@code cpu_set_t}: 1024 CPUs, one bit each. */
    private static final int CPU_SET_BYTES = 128;

    private static final MethodHandle READ = Libc.handle("read",
            ValueLayout.JAVA_LONG, ValueLayout.JAVA_INT, ValueLayout.ADDRESS, ValueLayout.JAVA_LONG);
    private static final MethodHandle WRITE = Libc.handle("write",
            ValueLayout.JAVA_LONG, ValueLayout.JAVA_INT, ValueLayout.ADDRESS, ValueLayout.JAVA_LONG);
    private static final MethodHandle PREAD = Libc.handle("pread", ValueLayout.JAVA_LONG,
            ValueLayout.JAVA_INT, ValueLayout.ADDRESS, ValueLayout.JAVA_LONG, ValueLayout.JAVA_LONG);
    private static final MethodHandle PWRITE = Libc.handle("pwrite", ValueLayout.JAVA_LONG,
            ValueLayout.JAVA_INT, ValueLayout.ADDRESS, ValueLayout.JAVA_LONG, ValueLayout.JAVA_LONG);
    private static final MethodHandle PIPE2 = Libc.handle("pipe2",
            ValueLayout.JAVA_INT, ValueLayout.ADDRESS, ValueLayout.JAVA_INT);
    private static final MethodHandle FCNTL_INT = Libc.variadic("fcntl", 2,
            ValueLayout.JAVA_INT, ValueLayout.JAVA_INT, ValueLayout.JAVA_INT, ValueLayout.JAVA_INT);
    private static final MethodHandle IOCTL_PTR = Libc.variadic("ioctl", 2,
            ValueLayout.JAVA_INT, ValueLayout.JAVA_INT, ValueLayout.JAVA_LONG, ValueLayout.ADDRESS);
    private static final MethodHandle VMSPLICE = Libc.handle("vmsplice", ValueLayout.JAVA_LONG,
            ValueLayout.JAVA_INT, ValueLayout.ADDRESS, ValueLayout.JAVA_LONG, ValueLayout.JAVA_INT);
    private static final MethodHandle POLL = Libc.handle("poll",
            ValueLayout.JAVA_INT, ValueLayout.ADDRESS, ValueLayout.JAVA_LONG, ValueLayout.JAVA_INT);
    private static final MethodHandle DUP3 = Libc.handle("dup3",
            ValueLayout.JAVA_INT, ValueLayout.JAVA_INT, ValueLayout.JAVA_INT, ValueLayout.JAVA_INT);
    private static final MethodHandle SCHED_SETAFFINITY = Libc.handle("sched_setaffinity",
            ValueLayout.JAVA_INT, ValueLayout.JAVA_INT, ValueLayout.JAVA_LONG, ValueLayout.ADDRESS);

    private RelayIo() {
    }

    /** One read(2) of at most {@code length} bytes into {@code buf}; -1 for end of file. */
    static int readSome(int fd, MemorySegment buf, long length, MemorySegment st) {
        long n = Libc.call(st, "read", s -> (long) READ.invokeExact(s, fd, buf, length));
        return n == 0 ? -1 : (int) n;
    }

    /**
     * Reads {@code length} bytes at {@code offset} into {@code buf}, however
     * many pread(2) calls that takes; fails at the end of the device.
     */
    static void preadFully(int fd, MemorySegment buf, long length, long offset, MemorySegment st) {
        positionalFully(PREAD, "pread", fd, buf, length, offset, st);
    }

    /** Writes {@code length} bytes of {@code buf} at {@code offset} of {@code fd} (a disk, O_DIRECT: all aligned). */
    static void pwriteFully(int fd, MemorySegment buf, long length, long offset, MemorySegment st) {
        positionalFully(PWRITE, "pwrite", fd, buf, length, offset, st);
    }

    /** pread(2) or pwrite(2), {@code call}, until all {@code length} bytes are done; fails at the end of the device. */
    private static void positionalFully(MethodHandle call, String name, int fd, MemorySegment buf, long length,
            long offset, MemorySegment st) {
        long off = 0;
        while (off < length) {
            long at = off;
            long n = Libc.call(st, name,
                    s -> (long) call.invokeExact(s, fd, buf.asSlice(at), length - at, offset + at));
            if (n == 0) {
                throw new PosixException(name + " (end of device)", Libc.EIO);
            }
            off += n;
        }
    }

    /**
     * One write(2) of a non-blocking {@code fd}: the count written, 0 when it
     * would wait.
     */
    static long writeSome(int fd, MemorySegment buf, long length, MemorySegment st) {
        long n = Libc.call(st, "write", s -> (long) WRITE.invokeExact(s, fd, buf, length), Libc.EAGAIN);
        return n == -Libc.EAGAIN ? 0 : n;
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
        long n = Libc.call(st, "vmsplice", s -> (long) VMSPLICE.invokeExact(s, fd, iov, 1L, SPLICE_F_NONBLOCK),
                Libc.EAGAIN);
        return n == -Libc.EAGAIN ? 0 : n;
    }

    /** How many bytes the pipe (either end) holds unread: FIONREAD. */
    static int unread(int fd, MemorySegment intRoom, MemorySegment st) {
        Libc.call(st, "ioctl(FIONREAD)", s -> (int) IOCTL_PTR.invokeExact(s, fd, FIONREAD, intRoom));
        return intRoom.get(ValueLayout.JAVA_INT, 0);
    }

    /**
     * Waits up to {@code millis} for {@code fd} to take a write; {@code pollfd}
     * is room for one struct pollfd. A signal ends the wait early.
     */
    static void awaitWritable(int fd, int millis, MemorySegment pollfd, MemorySegment st) {
        pollfd.set(ValueLayout.JAVA_INT, 0, fd);
        pollfd.set(ValueLayout.JAVA_SHORT, 4, POLLOUT);
        pollfd.set(ValueLayout.JAVA_SHORT, 6, (short) 0);
        Libc.call(st, "poll", s -> (int) POLL.invokeExact(s, pollfd, 1L, millis), Libc.EINTR);
    }

    /**
     * A pipe of at least {@code bytes} capacity (root may go past
     * {@code /proc/sys/fs/pipe-max-size}), both ends close-on-exec: {read end, write end}.
     */
    static int[] pipe(int bytes) {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment st = Libc.callState(arena);
            MemorySegment fds = arena.allocate(ValueLayout.JAVA_INT, 2);
            Libc.call(st, "pipe2", s -> (int) PIPE2.invokeExact(s, fds, Posix.O_CLOEXEC));
            int[] pair = {fds.getAtIndex(ValueLayout.JAVA_INT, 0), fds.getAtIndex(ValueLayout.JAVA_INT, 1)};
            try {
                Libc.call(st, "fcntl(F_SETPIPE_SZ " + bytes + ")",
                        s -> (int) FCNTL_INT.invokeExact(s, pair[1], F_SETPIPE_SZ, bytes));
            } catch (RuntimeException e) {
                Posix.close(pair[0]);
                Posix.close(pair[1]);
                throw e;
            }
            return pair;
        }
    }

    /** Makes reads and writes of {@code fd}'s open file return EAGAIN instead of waiting. */
    static void setNonBlocking(int fd) {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment st = Libc.callState(arena);
            int flags = (int) Libc.call(st, "fcntl(O_NONBLOCK)", s -> (int) FCNTL_INT.invokeExact(s, fd, F_GETFL, 0));
            Libc.call(st, "fcntl(O_NONBLOCK)", s -> (int) FCNTL_INT.invokeExact(s, fd, F_SETFL, flags | O_NONBLOCK));
        }
    }

    /** dup3(2) with O_CLOEXEC: {@code to} now refers to {@code from}'s open file, atomically. */
    static void dupOnto(int from, int to) {
        Libc.call("dup3", st -> (int) DUP3.invokeExact(st, from, to, Posix.O_CLOEXEC));
    }

    /**
     * Keeps the calling relay thread on the port's interrupt CPU ({@link InterruptCpu}), if known
     * ({@code cpu >= 0}); one that cannot be pinned runs anywhere, and says so.
     */
    static void pinRelayThread(int cpu) {
        if (cpu >= 0) {
            try {
                pinCallingThread(cpu);
            } catch (RuntimeException e) {
                Log.info("workspace relay: " + Thread.currentThread().getName() + " runs anywhere: " + e.getMessage());
            }
        }
    }

    /** Lets the calling thread run on {@code cpu} alone (sched_setaffinity(2) of thread 0, itself). */
    private static void pinCallingThread(int cpu) {
        if (cpu < 0 || cpu >= CPU_SET_BYTES * 8) {
            throw new IllegalArgumentException("no such CPU: " + cpu);
        }
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment mask = arena.allocate(CPU_SET_BYTES, 8);
            mask.set(ValueLayout.JAVA_BYTE, cpu / 8, (byte) (1 << (cpu % 8)));
            Libc.call(Libc.callState(arena), "sched_setaffinity(CPU " + cpu + ")",
                    st -> (int) SCHED_SETAFFINITY.invokeExact(st, 0, (long) CPU_SET_BYTES, mask));
        }
    }
}
