package dev.kosa8.agent;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.function.Consumer;

/**
 * One inotify instance through libc (inotify(7)): watches added and removed by path, events read in batches with a
 * poll timeout, so the reading thread can see it was asked to stop. Not thread-safe: one thread uses it.
 */
final class Inotify implements AutoCloseable {
    static final int IN_MODIFY = 0x2, IN_ATTRIB = 0x4, IN_MOVED_FROM = 0x40, IN_MOVED_TO = 0x80, IN_CREATE = 0x100,
            IN_DELETE = 0x200, IN_DELETE_SELF = 0x400, IN_MOVE_SELF = 0x800, IN_Q_OVERFLOW = 0x4000,
            IN_IGNORED = 0x8000, IN_ONLYDIR = 0x01000000, IN_DONT_FOLLOW = 0x02000000, IN_ISDIR = 0x40000000;
    static final int ENOENT = 2, ENOTDIR = 20, ENOSPC = 28, EACCES = 13, EMFILE = 24, ENAMETOOLONG = 36;

    private static final int IN_NONBLOCK = 04000, IN_CLOEXEC = 02000000, POLLIN = 1;
    private static final MethodHandle INIT = Libc.handle("inotify_init1", ValueLayout.JAVA_INT, ValueLayout.JAVA_INT);
    private static final MethodHandle ADD = Libc.handle("inotify_add_watch", ValueLayout.JAVA_INT,
            ValueLayout.JAVA_INT, ValueLayout.ADDRESS, ValueLayout.JAVA_INT);
    private static final MethodHandle RM = Libc.handle("inotify_rm_watch", ValueLayout.JAVA_INT,
            ValueLayout.JAVA_INT, ValueLayout.JAVA_INT);
    private static final MethodHandle POLL = Libc.handle("poll", ValueLayout.JAVA_INT, ValueLayout.ADDRESS,
            ValueLayout.JAVA_LONG, ValueLayout.JAVA_INT);
    private static final MethodHandle READ = Libc.handle("read", ValueLayout.JAVA_LONG, ValueLayout.JAVA_INT,
            ValueLayout.ADDRESS, ValueLayout.JAVA_LONG);
    private static final int BUFFER = 64 * 1024;

    /** One event: the watch it came from, its mask, the rename cookie, the name in the directory (may be empty). */
    record Event(int wd, int mask, int cookie, String name) {
    }

    private final Arena arena = Arena.ofShared();
    private final MemorySegment state = Libc.callState(arena);
    private final MemorySegment buffer = arena.allocate(BUFFER, 8);
    private final MemorySegment pollFd = arena.allocate(8, 4);
    private final int fd;

    /** @throws PosixException when the guest allows no more inotify instances (EMFILE) */
    Inotify() {
        this.fd = (int) Libc.call(state, "inotify_init1", s -> (int) INIT.invokeExact(s, IN_NONBLOCK | IN_CLOEXEC));
    }

    /** Adds a watch; its descriptor, or {@code -errno} for ENOENT, ENOTDIR, EACCES, ENOSPC, ENAMETOOLONG. */
    int add(String path, int mask) {
        MemorySegment name = arena.allocateFrom(path);
        return (int) Libc.call(state, "inotify_add_watch " + path, s -> (int) ADD.invokeExact(s, fd, name, mask),
                ENOENT, ENOTDIR, EACCES, ENOSPC, ENAMETOOLONG);
    }

    void remove(int wd) {
        Libc.call(state, "inotify_rm_watch", s -> (int) RM.invokeExact(s, fd, wd), 22 /* EINVAL: already gone */);
    }

    /** Waits up to {@code timeoutMillis} for events and hands each read to {@code sink}; false if none came. */
    boolean read(int timeoutMillis, Consumer<Event> sink) {
        pollFd.set(ValueLayout.JAVA_INT, 0, fd);
        pollFd.set(ValueLayout.JAVA_SHORT, 4, (short) POLLIN);
        pollFd.set(ValueLayout.JAVA_SHORT, 6, (short) 0);
        long ready = Libc.call(state, "poll", s -> (int) POLL.invokeExact(s, pollFd, 1L, timeoutMillis));
        if (ready == 0) {
            return false;
        }
        long n = Libc.call(state, "read inotify", s -> (long) READ.invokeExact(s, fd, buffer, (long) BUFFER),
                Libc.EAGAIN);
        if (n <= 0) {
            return false;
        }
        ValueLayout.OfInt i32 = ValueLayout.JAVA_INT.withOrder(ByteOrder.nativeOrder());
        long at = 0;
        while (at + 16 <= n) {
            int wd = buffer.get(i32, at);
            int mask = buffer.get(i32, at + 4);
            int cookie = buffer.get(i32, at + 8);
            int len = buffer.get(i32, at + 12);
            String name = "";
            if (len > 0) {
                byte[] raw = buffer.asSlice(at + 16, len).toArray(ValueLayout.JAVA_BYTE);
                int end = 0;
                while (end < raw.length && raw[end] != 0) {
                    end++;
                }
                name = new String(raw, 0, end, StandardCharsets.UTF_8);
            }
            sink.accept(new Event(wd, mask, cookie, name));
            at += 16 + len;
        }
        return true;
    }

    @Override
    public void close() {
        Posix.close(fd);
        arena.close();
    }
}
