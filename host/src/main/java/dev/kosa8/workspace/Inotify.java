package dev.kosa8.workspace;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;
import static java.lang.foreign.ValueLayout.JAVA_SHORT;

import dev.kosa8.host.NativeCall;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandle;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/**
 * Linux's inotify(7), as the folder's watch ({@link FolderWatch}) needs it: one instance, watches
 * added on directories by descriptor (so no path is followed that the confinement rule did not
 * open), and events read in batches with a timeout, so the reading thread can stop.
 */
final class Inotify implements AutoCloseable {
    static final int IN_MODIFY = 0x2, IN_ATTRIB = 0x4, IN_MOVED_FROM = 0x40, IN_MOVED_TO = 0x80,
            IN_CREATE = 0x100, IN_DELETE = 0x200, IN_DELETE_SELF = 0x400, IN_MOVE_SELF = 0x800,
            IN_Q_OVERFLOW = 0x4000, IN_IGNORED = 0x8000, IN_ONLYDIR = 0x0100_0000,
            IN_EXCL_UNLINK = 0x0400_0000, IN_ISDIR = 0x4000_0000;
    private static final int POLLIN = 1;
    /** {@code struct inotify_event} before its name: wd, mask, cookie, len. */
    private static final int EVENT_HEADER = 16;

    private static final MethodHandle INIT1 = NativeCall.handle("inotify_init1", -1, JAVA_INT, JAVA_INT);
    private static final MethodHandle ADD_WATCH = NativeCall.handle("inotify_add_watch", -1, JAVA_INT, JAVA_INT,
            ADDRESS, JAVA_INT);
    private static final MethodHandle POLL = NativeCall.handle("poll", -1, JAVA_INT, ADDRESS, JAVA_LONG, JAVA_INT);
    private static final MethodHandle EVENTFD = NativeCall.handle("eventfd", -1, JAVA_INT, JAVA_INT, JAVA_INT);
    private static final MethodHandle WRITE = NativeCall.handle("write", -1, JAVA_LONG, JAVA_INT, ADDRESS, JAVA_LONG);
    private static final MethodHandle READ = NativeCall.handle("read", -1, JAVA_LONG, JAVA_INT, ADDRESS, JAVA_LONG);

    /** One event: the watch it came from, what happened, the move it is half of, the name (empty for the directory itself). */
    record Event(int wd, int mask, int cookie, String name) {
        boolean is(int bits) {
            return (mask & bits) != 0;
        }
    }

    private final int fd;
    /** Written by {@link #wake} to end a {@link #read}'s wait. */
    private final int wakeFd;
    /** Set by {@link #close}, under this object's lock, as {@link #wake} reads it. */
    private boolean closed;
    private final ByteBuffer buffer = ByteBuffer.allocateDirect(64 << 10).order(ByteOrder.nativeOrder());

    private Inotify(int fd, int wakeFd) {
        this.fd = fd;
        this.wakeFd = wakeFd;
    }

    static Inotify open() throws ErrnoException {
        try (Arena arena = Arena.ofConfined()) {
            int flags = LinuxFs.O_NONBLOCK | LinuxFs.O_CLOEXEC; // IN_NONBLOCK and IN_CLOEXEC, EFD_* too, are these
            int fd = (int) LinuxFs.call(arena, "inotify_init1", st -> (int) INIT1.invokeExact(st, flags));
            int wake;
            try {
                wake = (int) LinuxFs.call(arena, "eventfd", st -> (int) EVENTFD.invokeExact(st, 0, flags));
            } catch (ErrnoException e) {
                LinuxFs.close(fd);
                throw e;
            }
            return new Inotify(fd, wake);
        }
    }

    /**
     * Ends a {@link #read}'s wait now (from any thread), or the next one's at once; nothing once
     * closed (the descriptor's number may be another file's by then).
     */
    synchronized void wake() {
        if (closed) {
            return;
        }
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment one = arena.allocate(JAVA_LONG);
            one.set(JAVA_LONG, 0, 1L);
            LinuxFs.call(arena, "write", st -> (long) WRITE.invokeExact(st, wakeFd, one, 8L));
        } catch (ErrnoException e) {
            // the counter is full or the watch closed: a read wakes anyway
        }
    }

    /** Watches the directory open as {@code dirFd} (any descriptor of it, O_PATH too); returns the watch descriptor. */
    int watch(int dirFd, int mask) throws ErrnoException {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment path = arena.allocateFrom("/proc/self/fd/" + dirFd);
            return (int) LinuxFs.call(arena, "inotify_add_watch",
                    st -> (int) ADD_WATCH.invokeExact(st, fd, path, mask));
        }
    }

    /**
     * The events there are, waiting up to {@code timeoutMillis} for the first, or until {@link #wake};
     * empty if none came.
     */
    List<Event> read(int timeoutMillis) throws ErrnoException {
        List<Event> events = new ArrayList<>();
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment pfd = arena.allocate(16);
            pfd.set(JAVA_INT, 0, fd);
            pfd.set(JAVA_SHORT, 4, (short) POLLIN);
            pfd.set(JAVA_INT, 8, wakeFd);
            pfd.set(JAVA_SHORT, 12, (short) POLLIN);
            int ready = (int) LinuxFs.call(arena, "poll",
                    st -> (int) POLL.invokeExact(st, pfd, 2L, timeoutMillis));
            if (ready == 0) {
                return events;
            }
            if (pfd.get(JAVA_SHORT, 14) != 0) {
                MemorySegment count = arena.allocate(JAVA_LONG);
                try {
                    LinuxFs.call(arena, "read", st -> (long) READ.invokeExact(st, wakeFd, count, 8L));
                } catch (ErrnoException e) {
                    // read by another wake's reader already
                }
            }
            if (pfd.get(JAVA_SHORT, 6) == 0) {
                return events;
            }
            MemorySegment seg = MemorySegment.ofBuffer(buffer.clear());
            long n;
            try {
                n = LinuxFs.call(arena, "read", st -> (long) READ.invokeExact(st, fd, seg, seg.byteSize()));
            } catch (ErrnoException e) {
                if (e.errno == ErrnoException.EAGAIN) {
                    return events;
                }
                throw e;
            }
            int at = 0;
            while (at + EVENT_HEADER <= n) {
                int wd = buffer.getInt(at);
                int mask = buffer.getInt(at + 4);
                int cookie = buffer.getInt(at + 8);
                int len = buffer.getInt(at + 12);
                int end = at + EVENT_HEADER;
                int nameEnd = end;
                while (nameEnd < end + len && buffer.get(nameEnd) != 0) {
                    nameEnd++;
                }
                byte[] name = new byte[nameEnd - end];
                buffer.get(end, name);
                // byte strings, one char per byte, as everywhere in the server
                events.add(new Event(wd, mask, cookie, new String(name, StandardCharsets.ISO_8859_1)));
                at = end + len;
            }
        }
        return events;
    }

    @Override
    public synchronized void close() {
        if (closed) {
            return;
        }
        closed = true;
        for (int f : new int[] {fd, wakeFd}) {
            try {
                LinuxFs.close(f);
            } catch (ErrnoException e) {
                // closed either way
            }
        }
    }
}
