package dev.kosa8.workspace;

import static dev.kosa8.workspace.ErrnoException.EACCES;
import static dev.kosa8.workspace.ErrnoException.EAGAIN;
import static dev.kosa8.workspace.LinuxFs.AT_EMPTY_PATH;
import static dev.kosa8.workspace.LinuxFs.AT_FDCWD;
import static dev.kosa8.workspace.LinuxFs.AT_SYMLINK_NOFOLLOW;
import static dev.kosa8.workspace.LinuxFs.EMPTY;
import static dev.kosa8.workspace.LinuxFs.F_OFD_GETLK;
import static dev.kosa8.workspace.LinuxFs.F_OFD_SETLK;
import static dev.kosa8.workspace.LinuxFs.STATFS_SIZE;
import static dev.kosa8.workspace.LinuxFs.STATX;
import static dev.kosa8.workspace.LinuxFs.STATX_BASIC_STATS;
import static dev.kosa8.workspace.LinuxFs.STATX_BTIME;
import static dev.kosa8.workspace.LinuxFs.STATX_SIZE;
import static dev.kosa8.workspace.LinuxFs.SYS_GETDENTS64;
import static dev.kosa8.workspace.LinuxFs.UTIMENSAT;
import static dev.kosa8.workspace.LinuxFs.call;
import static dev.kosa8.workspace.LinuxFs.flock;
import static dev.kosa8.workspace.LinuxFs.procPath;
import static dev.kosa8.workspace.LinuxFs.times;
import static dev.kosa8.workspace.LinuxFs.toStat;
import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;
import static java.lang.foreign.ValueLayout.JAVA_SHORT;

import dev.kosa8.host.NativeCall;
import dev.kosa8.workspace.LinuxFs.DirEntry;
import dev.kosa8.workspace.LinuxFs.Flock;
import dev.kosa8.workspace.LinuxFs.Stat;
import dev.kosa8.workspace.LinuxFs.StatFs;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandle;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.ReadOnlyBufferException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/**
 * The workspace server's calls on a file it holds open: reads, writes,
 * directory listings, attributes, syncs and locks, each on an fd that
 * {@link LinuxFs#openBeneath} produced (or {@link LinuxFs#reopen} made of
 * one), so no name under the exported folder is resolved again.
 */
final class FdCalls {
    private static final MethodHandle GETDENTS64 = NativeCall.handle("syscall", 1, JAVA_LONG, JAVA_LONG, JAVA_LONG, ADDRESS, JAVA_LONG);
    private static final MethodHandle PREAD = NativeCall.handle("pread", -1, JAVA_LONG, JAVA_INT, ADDRESS, JAVA_LONG, JAVA_LONG);
    private static final MethodHandle PWRITE = NativeCall.handle("pwrite", -1, JAVA_LONG, JAVA_INT, ADDRESS, JAVA_LONG, JAVA_LONG);
    private static final MethodHandle LSEEK = NativeCall.handle("lseek", -1, JAVA_LONG, JAVA_INT, JAVA_LONG, JAVA_INT);
    private static final MethodHandle CHMOD = NativeCall.handle("chmod", -1, JAVA_INT, ADDRESS, JAVA_INT);
    private static final MethodHandle TRUNCATE = NativeCall.handle("truncate", -1, JAVA_INT, ADDRESS, JAVA_LONG);
    private static final MethodHandle FSYNC = NativeCall.handle("fsync", -1, JAVA_INT, JAVA_INT);
    private static final MethodHandle FDATASYNC = NativeCall.handle("fdatasync", -1, JAVA_INT, JAVA_INT);
    private static final MethodHandle FSTATFS = NativeCall.handle("fstatfs", -1, JAVA_INT, JAVA_INT, ADDRESS);
    private static final MethodHandle FCNTL_LOCK = NativeCall.handle("fcntl", 2, JAVA_INT, JAVA_INT, JAVA_INT, ADDRESS);

    private FdCalls() {
    }

    /** Stats the file {@code fd} refers to, {@code O_PATH} fds of symlinks included. */
    static Stat stat(int fd) throws ErrnoException {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment buf = arena.allocate(STATX_SIZE, 8);
            call(arena, "statx", st -> (int) STATX.invokeExact(st, fd, EMPTY, AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW,
                    STATX_BASIC_STATS | STATX_BTIME, buf));
            return toStat(buf);
        }
    }

    /** One pread(2) into {@code dst} (direct) from its position to its limit; advances the position; 0 at EOF. */
    static int pread(int fd, ByteBuffer dst, long offset) throws ErrnoException {
        if (!dst.isDirect()) {
            throw new IllegalArgumentException("pread needs a direct buffer");
        }
        if (dst.isReadOnly()) {
            throw new ReadOnlyBufferException();
        }
        MemorySegment seg = MemorySegment.ofBuffer(dst);
        try (Arena arena = Arena.ofConfined()) {
            int n = (int) call(arena, "pread",
                    st -> (long) PREAD.invokeExact(st, fd, seg, seg.byteSize(), offset));
            dst.position(dst.position() + n);
            return n;
        }
    }

    /** One pwrite(2) from {@code src}'s position to its limit; advances the position; heap buffers are copied. */
    static int pwrite(int fd, ByteBuffer src, long offset) throws ErrnoException {
        MemorySegment view = MemorySegment.ofBuffer(src);
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment seg = src.isDirect() ? view : arena.allocate(view.byteSize()).copyFrom(view);
            int n = (int) call(arena, "pwrite",
                    st -> (long) PWRITE.invokeExact(st, fd, seg, seg.byteSize(), offset));
            src.position(src.position() + n);
            return n;
        }
    }

    static long lseek(int fd, long offset, int whence) throws ErrnoException {
        try (Arena arena = Arena.ofConfined()) {
            return call(arena, "lseek", st -> (long) LSEEK.invokeExact(st, fd, offset, whence));
        }
    }

    /**
     * One getdents64(2) into {@code dst} (direct) from its position; advances the position and returns the
     * byte count, 0 at the end. EINVAL if not even one entry fits. Decode with {@link #parseDirents}.
     */
    static int getdents(int fd, ByteBuffer dst) throws ErrnoException {
        if (!dst.isDirect() || dst.isReadOnly()) {
            throw new IllegalArgumentException("getdents needs a writable direct buffer");
        }
        MemorySegment seg = MemorySegment.ofBuffer(dst);
        try (Arena arena = Arena.ofConfined()) {
            int n = (int) call(arena, "getdents64",
                    st -> (long) GETDENTS64.invokeExact(st, SYS_GETDENTS64, (long) fd, seg, seg.byteSize()));
            dst.position(dst.position() + n);
            return n;
        }
    }

    /** Decodes the {@code linux_dirent64} records in bytes {@code [0, length)} of {@code buf}; the position is ignored. */
    static List<DirEntry> parseDirents(ByteBuffer buf, int length) {
        ByteBuffer b = buf.duplicate().order(ByteOrder.LITTLE_ENDIAN);
        List<DirEntry> entries = new ArrayList<>();
        for (int at = 0; at < length; ) {
            int reclen = length - at < 19 ? 0 : Short.toUnsignedInt(b.getShort(at + 16));
            if (reclen < 20 || reclen > length - at) {
                throw new IllegalArgumentException("malformed dirent at " + at);
            }
            int nameLength = 0;
            while (nameLength < reclen - 19 && b.get(at + 19 + nameLength) != 0) {
                nameLength++;
            }
            byte[] name = new byte[nameLength];
            b.get(at + 19, name);
            entries.add(new DirEntry(b.getLong(at), b.getLong(at + 8), Byte.toUnsignedInt(b.get(at + 18)),
                    new String(name, StandardCharsets.ISO_8859_1)));
            at += reclen;
        }
        return entries;
    }

    // The next three change a file the server holds as an O_PATH fd (of anything but a symlink). There is no
    // fchmod/ftruncate for O_PATH fds, and going by name again would re-open the race openBeneath closed.
    // /proc/self/fd/N is a magic link: the kernel jumps straight to the inode the fd already refers to, without
    // resolving any name under the exported folder, so the call reaches exactly that inode.

    static void chmodFd(int pathFd, int mode) throws ErrnoException {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment p = procPath(arena, pathFd, "chmod");
            call(arena, "chmod", st -> (int) CHMOD.invokeExact(st, p, mode));
        }
    }

    static void truncateFd(int pathFd, long size) throws ErrnoException {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment p = procPath(arena, pathFd, "truncate");
            call(arena, "truncate", st -> (int) TRUNCATE.invokeExact(st, p, size));
        }
    }

    /** Sets times; a nsec of {@link LinuxFs#UTIME_NOW} or {@link LinuxFs#UTIME_OMIT} means now or unchanged. */
    static void utimensFd(int pathFd, long atimeSec, long atimeNsec, long mtimeSec, long mtimeNsec)
            throws ErrnoException {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment p = procPath(arena, pathFd, "utimensat");
            MemorySegment times = times(arena, atimeSec, atimeNsec, mtimeSec, mtimeNsec);
            call(arena, "utimensat", st -> (int) UTIMENSAT.invokeExact(st, AT_FDCWD, p, times, 0));
        }
    }

    static void fsync(int fd, boolean dataOnly) throws ErrnoException {
        try (Arena arena = Arena.ofConfined()) {
            if (dataOnly) {
                call(arena, "fdatasync", st -> (int) FDATASYNC.invokeExact(st, fd));
            } else {
                call(arena, "fsync", st -> (int) FSYNC.invokeExact(st, fd));
            }
        }
    }

    static StatFs statfs(int fd) throws ErrnoException {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment b = arena.allocate(STATFS_SIZE, 8);
            call(arena, "fstatfs", st -> (int) FSTATFS.invokeExact(st, fd, b));
            return new StatFs(b.get(JAVA_LONG, 0), b.get(JAVA_LONG, 8), b.get(JAVA_LONG, 16), b.get(JAVA_LONG, 24),
                    b.get(JAVA_LONG, 32), b.get(JAVA_LONG, 40), b.get(JAVA_LONG, 48), b.get(JAVA_LONG, 56),
                    b.get(JAVA_LONG, 64));
        }
    }

    /**
     * Takes or releases ({@link LinuxFs#F_UNLCK}) an open file description lock, which belongs to the fd and not to
     * the server process, so two guest fids conflict as two processes would. False if another holder blocks it.
     */
    static boolean setLock(int fd, int type, long start, long length) throws ErrnoException {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment lock = flock(arena, type, start, length);
            call(arena, "fcntl(F_OFD_SETLK)", st -> (int) FCNTL_LOCK.invokeExact(st, fd, F_OFD_SETLK, lock));
            return true;
        } catch (ErrnoException e) {
            if (e.errno == EAGAIN || e.errno == EACCES) {
                return false;
            }
            throw e;
        }
    }

    /** The first lock that would block {@code type} on the range, or one of type {@link LinuxFs#F_UNLCK} if none. */
    static Flock getLock(int fd, int type, long start, long length) throws ErrnoException {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment lock = flock(arena, type, start, length);
            call(arena, "fcntl(F_OFD_GETLK)", st -> (int) FCNTL_LOCK.invokeExact(st, fd, F_OFD_GETLK, lock));
            return new Flock(lock.get(JAVA_SHORT, 0), lock.get(JAVA_LONG, 8), lock.get(JAVA_LONG, 16),
                    lock.get(JAVA_INT, 24));
        }
    }
}
