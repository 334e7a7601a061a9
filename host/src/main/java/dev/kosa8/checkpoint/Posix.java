package dev.kosa8.checkpoint;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;
import static java.lang.foreign.ValueLayout.JAVA_SHORT;

import dev.kosa8.host.NativeCall;
import dev.kosa8.protocol.LinuxAbi;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandle;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/**
 * The system calls a workspace snapshot needs, through FFM, each relative to a
 * directory descriptor and each on one name in it: the walk never resolves a
 * path, so no symlink anywhere in the folder can lead it outside. A directory
 * is entered with {@code O_DIRECTORY | O_NOFOLLOW}, which fails on anything
 * but a real directory; every other call either acts on a descriptor or takes
 * {@code AT_SYMLINK_NOFOLLOW} (or, like unlink, rename, mkdir, mknod and
 * symlink, never follows a final symlink anyway).
 *
 * <p>Why not {@code java.nio.file}: its paths are strings decoded with
 * {@code sun.jnu.encoding}, so a name that is not valid in that charset (any
 * non-ASCII name under the C locale, invalid UTF-8 under any locale) cannot be
 * stored or recreated; and it has no directory-relative mkdir, symlink or
 * mknod. Why not {@code workspace.LinuxFs}: that is the 9P server's
 * confinement layer, package-private on purpose, with the server's errno
 * semantics; this one reports {@link PosixException}, an IOException.
 *
 * <p>Names are byte strings, one char per byte (ISO-8859-1), as in the 9P
 * server; a char above 0xFF or a NUL is refused. x86-64 Linux only (the
 * {@code O_*} values and the getdents64 number are that ABI's), like the rest
 * of the workspace code.
 */
final class Posix {
    static final int O_RDONLY = LinuxAbi.O_RDONLY, O_WRONLY = LinuxAbi.O_WRONLY, O_CREAT = LinuxAbi.O_CREAT;
    static final int O_EXCL = LinuxAbi.O_EXCL, O_NONBLOCK = LinuxAbi.O_NONBLOCK, O_CLOEXEC = LinuxAbi.O_CLOEXEC;
    static final int O_PATH = LinuxAbi.O_PATH;
    /** These two differ on arm64 (so does getdents64's number): this architecture's ({@link LinuxAbi}). */
    static final int O_DIRECTORY = LinuxAbi.current().oDirectory(), O_NOFOLLOW = LinuxAbi.current().oNofollow();
    static final int AT_FDCWD = -100, AT_SYMLINK_NOFOLLOW = 0x100, AT_REMOVEDIR = 0x200, AT_EMPTY_PATH = 0x1000;
    static final int S_IFMT = 0170000, S_IFSOCK = 0140000, S_IFLNK = 0120000, S_IFREG = 0100000;
    static final int S_IFBLK = 060000, S_IFDIR = 040000, S_IFCHR = 020000, S_IFIFO = 010000;
    static final int EPERM = 1, ENOENT = 2, EACCES = 13, EEXIST = 17, ENOTDIR = 20, EISDIR = 21, EINVAL = 22;
    static final int ENOSPC = 28, ENOSYS = 38, ENOTEMPTY = 39, ELOOP = 40;
    static final long UTIME_OMIT = (1L << 30) - 2;

    /** False off Linux on x86-64 or arm64 ({@link NativeCall#AVAILABLE}); then every call fails with ENOSYS. */
    static final boolean AVAILABLE = NativeCall.AVAILABLE;

    private static final long SYS_GETDENTS64 = LinuxAbi.current().sysGetdents64();
    private static final int STATX_BASIC_STATS = 0x7ff, STATX_SIZE = LinuxAbi.STATX_SIZE, PATH_MAX = 4096, DIRENT_BUFFER = 32 * 1024;

    private static final MemorySegment EMPTY = Arena.global().allocate(1);

    private static final MethodHandle OPENAT = NativeCall.handle("openat", 3, JAVA_INT, JAVA_INT, ADDRESS, JAVA_INT, JAVA_INT);
    private static final MethodHandle OPEN = NativeCall.handle("open", 2, JAVA_INT, ADDRESS, JAVA_INT, JAVA_INT);
    private static final MethodHandle CLOSE = NativeCall.handle("close", -1, JAVA_INT, JAVA_INT);
    private static final MethodHandle STATX = NativeCall.handle("statx", -1, JAVA_INT, JAVA_INT, ADDRESS, JAVA_INT, JAVA_INT, ADDRESS);
    private static final MethodHandle GETDENTS64 = NativeCall.handle("syscall", 1, JAVA_LONG, JAVA_LONG, JAVA_LONG, ADDRESS, JAVA_LONG);
    private static final MethodHandle READ = NativeCall.handle("read", -1, JAVA_LONG, JAVA_INT, ADDRESS, JAVA_LONG);
    private static final MethodHandle WRITE = NativeCall.handle("write", -1, JAVA_LONG, JAVA_INT, ADDRESS, JAVA_LONG);
    private static final MethodHandle MKDIRAT = NativeCall.handle("mkdirat", -1, JAVA_INT, JAVA_INT, ADDRESS, JAVA_INT);
    private static final MethodHandle MKNODAT = NativeCall.handle("mknodat", -1, JAVA_INT, JAVA_INT, ADDRESS, JAVA_INT, JAVA_LONG);
    private static final MethodHandle SYMLINKAT = NativeCall.handle("symlinkat", -1, JAVA_INT, ADDRESS, JAVA_INT, ADDRESS);
    private static final MethodHandle READLINKAT = NativeCall.handle("readlinkat", -1, JAVA_LONG, JAVA_INT, ADDRESS, ADDRESS, JAVA_LONG);
    private static final MethodHandle UNLINKAT = NativeCall.handle("unlinkat", -1, JAVA_INT, JAVA_INT, ADDRESS, JAVA_INT);
    private static final MethodHandle RENAMEAT = NativeCall.handle("renameat", -1, JAVA_INT, JAVA_INT, ADDRESS, JAVA_INT, ADDRESS);
    private static final MethodHandle FCHMOD = NativeCall.handle("fchmod", -1, JAVA_INT, JAVA_INT, JAVA_INT);
    private static final MethodHandle CHMOD = NativeCall.handle("chmod", -1, JAVA_INT, ADDRESS, JAVA_INT);
    private static final MethodHandle UTIMENSAT = NativeCall.handle("utimensat", -1, JAVA_INT, JAVA_INT, ADDRESS, ADDRESS, JAVA_INT);
    private static final MethodHandle FUTIMENS = NativeCall.handle("futimens", -1, JAVA_INT, JAVA_INT, ADDRESS);
    private static final MethodHandle FSYNC = NativeCall.handle("fsync", -1, JAVA_INT, JAVA_INT);
    private static final MethodHandle SYNCFS = NativeCall.handle("syncfs", -1, JAVA_INT, JAVA_INT);

    private Posix() {
    }

    /**
     * What {@code statx(2)} says of one entry. {@code dev} packs the major and minor device numbers
     * (major in the high 32 bits); only equality matters.
     */
    record Stat(int mode, long dev, long ino, long nlink, long size, long blocks, long mtimeSec, int mtimeNsec,
            long ctimeSec, int ctimeNsec) {
        int type() {
            return mode & S_IFMT;
        }

        int permissions() {
            return mode & 07777;
        }

        boolean isDir() {
            return type() == S_IFDIR;
        }

        boolean isRegular() {
            return type() == S_IFREG;
        }

        boolean isSymlink() {
            return type() == S_IFLNK;
        }

        boolean isFifo() {
            return type() == S_IFIFO;
        }
    }

    /** Opens an absolute path the host chose (the folder, the store); symlinks in it are followed. */
    static int open(String absolutePath, int flags) throws PosixException {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment p = cString(arena, absolutePath, "open", absolutePath);
            return (int) call(arena, "open", absolutePath, st -> (int) OPEN.invokeExact(st, p, flags | O_CLOEXEC, 0));
        }
    }

    /** openat(2) of one name in {@code dirFd}; {@code mode} is used only with {@link #O_CREAT}. */
    static int openAt(int dirFd, String name, int flags, int mode) throws PosixException {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment n = component(arena, name, "openat");
            return (int) call(arena, "openat", name,
                    st -> (int) OPENAT.invokeExact(st, dirFd, n, flags | O_CLOEXEC, mode));
        }
    }

    /**
     * Opens again, with {@code flags}, what an {@code O_PATH} descriptor refers to, through the magic link
     * {@code /proc/self/fd/N}: the kernel goes to that very inode and resolves no name in the folder.
     */
    static int reopen(int pathFd, int flags) throws PosixException {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment p = procPath(arena, pathFd);
            return (int) call(arena, "open", "", st -> (int) OPEN.invokeExact(st, p, flags | O_CLOEXEC, 0));
        }
    }

    static void close(int fd) {
        if (fd < 0) {
            return;
        }
        try (Arena arena = Arena.ofConfined()) {
            // Linux frees the descriptor even when close fails; there is nothing to retry or report.
            call(arena, "close", "", st -> (int) CLOSE.invokeExact(st, fd), false);
        } catch (PosixException ignored) {
            // see above
        }
    }

    /** Stats what {@code fd} refers to (a symlink itself for an {@code O_PATH | O_NOFOLLOW} fd). */
    static Stat stat(int fd) throws PosixException {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment buf = arena.allocate(STATX_SIZE, 8);
            call(arena, "statx", "", st -> (int) STATX.invokeExact(st, fd, EMPTY,
                    AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW, STATX_BASIC_STATS, buf));
            return toStat(buf);
        }
    }

    /** Stats entry {@code name} of {@code dirFd} without following a symlink. */
    static Stat statAt(int dirFd, String name) throws PosixException {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment n = component(arena, name, "statx");
            MemorySegment buf = arena.allocate(STATX_SIZE, 8);
            call(arena, "statx", name, st -> (int) STATX.invokeExact(st, dirFd, n, AT_SYMLINK_NOFOLLOW,
                    STATX_BASIC_STATS, buf));
            return toStat(buf);
        }
    }

    /** As {@link #statAt}, or null when there is no such entry. */
    static Stat statAtOrNull(int dirFd, String name) throws PosixException {
        try {
            return statAt(dirFd, name);
        } catch (PosixException e) {
            if (e.errno == ENOENT) {
                return null;
            }
            throw e;
        }
    }

    /** Every name in directory {@code fd} but "." and "..", in the order the file system keeps them. */
    static List<String> list(int fd) throws PosixException {
        List<String> names = new ArrayList<>();
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment buf = arena.allocate(DIRENT_BUFFER, 8);
            while (true) {
                int n = (int) call(arena, "getdents64", "", st -> (long) GETDENTS64.invokeExact(st, SYS_GETDENTS64,
                        (long) fd, buf, (long) DIRENT_BUFFER));
                if (n == 0) {
                    return names;
                }
                ByteBuffer b = buf.asSlice(0, n).asByteBuffer().order(ByteOrder.LITTLE_ENDIAN);
                for (int at = 0; at < n; ) {
                    int reclen = Short.toUnsignedInt(b.getShort(at + 16));
                    if (reclen < 20 || reclen > n - at) {
                        throw new PosixException(5, "getdents64", ""); // EIO: a record the kernel never makes
                    }
                    int len = 0;
                    while (19 + len < reclen && b.get(at + 19 + len) != 0) {
                        len++;
                    }
                    byte[] name = new byte[len];
                    b.get(at + 19, name);
                    String s = new String(name, StandardCharsets.ISO_8859_1);
                    if (!s.equals(".") && !s.equals("..")) {
                        names.add(s);
                    }
                    at += reclen;
                }
            }
        }
    }

    /** One read(2) into {@code dst} (direct) from its position to its limit; advances it; 0 at the end. */
    static int read(int fd, ByteBuffer dst) throws PosixException {
        MemorySegment seg = MemorySegment.ofBuffer(dst);
        try (Arena arena = Arena.ofConfined()) {
            int n = (int) call(arena, "read", "", st -> (long) READ.invokeExact(st, fd, seg, seg.byteSize()));
            dst.position(dst.position() + n);
            return n;
        }
    }

    /** Writes all of {@code src} (direct), from its position to its limit. */
    static void writeFully(int fd, ByteBuffer src) throws PosixException {
        try (Arena arena = Arena.ofConfined()) {
            while (src.hasRemaining()) {
                MemorySegment seg = MemorySegment.ofBuffer(src);
                int n = (int) call(arena, "write", "", st -> (long) WRITE.invokeExact(st, fd, seg, seg.byteSize()));
                src.position(src.position() + n);
            }
        }
    }

    static void mkdirAt(int dirFd, String name, int mode) throws PosixException {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment n = component(arena, name, "mkdirat");
            call(arena, "mkdirat", name, st -> (int) MKDIRAT.invokeExact(st, dirFd, n, mode));
        }
    }

    /** Creates a FIFO: mknodat(2) with {@link #S_IFIFO}; the umask applies to {@code mode}. */
    static void mkfifoAt(int dirFd, String name, int mode) throws PosixException {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment n = component(arena, name, "mknodat");
            call(arena, "mknodat", name, st -> (int) MKNODAT.invokeExact(st, dirFd, n, S_IFIFO | (mode & 07777), 0L));
        }
    }

    /** Creates symlink {@code name} holding {@code target}: data, never resolved here. */
    static void symlinkAt(String target, int dirFd, String name) throws PosixException {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment t = cString(arena, target, "symlinkat", name);
            MemorySegment n = component(arena, name, "symlinkat");
            call(arena, "symlinkat", name, st -> (int) SYMLINKAT.invokeExact(st, t, dirFd, n));
        }
    }

    static String readlinkAt(int dirFd, String name) throws PosixException {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment n = component(arena, name, "readlinkat");
            MemorySegment buf = arena.allocate(PATH_MAX + 1);
            int len = (int) call(arena, "readlinkat", name,
                    st -> (long) READLINKAT.invokeExact(st, dirFd, n, buf, (long) PATH_MAX + 1));
            if (len > PATH_MAX) {
                throw new PosixException(EINVAL, "readlinkat", name);
            }
            return new String(buf.asSlice(0, len).toArray(JAVA_BYTE), StandardCharsets.ISO_8859_1);
        }
    }

    /** unlinkat(2); {@code flags} is 0 or {@link #AT_REMOVEDIR}. A symlink is removed, never followed. */
    static void unlinkAt(int dirFd, String name, int flags) throws PosixException {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment n = component(arena, name, "unlinkat");
            call(arena, "unlinkat", name, st -> (int) UNLINKAT.invokeExact(st, dirFd, n, flags));
        }
    }

    static void renameAt(int oldDirFd, String oldName, int newDirFd, String newName) throws PosixException {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment o = component(arena, oldName, "renameat");
            MemorySegment n = component(arena, newName, "renameat");
            call(arena, "renameat", newName, st -> (int) RENAMEAT.invokeExact(st, oldDirFd, o, newDirFd, n));
        }
    }

    /** fchmod(2) on a descriptor opened for reading or writing. */
    static void fchmod(int fd, int mode) throws PosixException {
        try (Arena arena = Arena.ofConfined()) {
            call(arena, "fchmod", "", st -> (int) FCHMOD.invokeExact(st, fd, mode & 07777));
        }
    }

    /**
     * chmod of what an {@code O_PATH} descriptor refers to, through {@code /proc/self/fd/N}: there is no
     * fchmod for O_PATH fds, and going by name again could meet something swapped in. Never on a symlink's fd.
     */
    static void chmodPathFd(int pathFd, int mode) throws PosixException {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment p = procPath(arena, pathFd);
            call(arena, "chmod", "", st -> (int) CHMOD.invokeExact(st, p, mode & 07777));
        }
    }

    /** Sets the mtime of what {@code fd} refers to; the atime is left as it is. */
    static void futimens(int fd, long mtimeSec, int mtimeNsec) throws PosixException {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment times = times(arena, mtimeSec, mtimeNsec);
            call(arena, "futimens", "", st -> (int) FUTIMENS.invokeExact(st, fd, times));
        }
    }

    /** Sets the mtime of entry {@code name}, of a symlink itself (not its target); the atime is left. */
    static void setMtimeAt(int dirFd, String name, long mtimeSec, int mtimeNsec) throws PosixException {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment n = component(arena, name, "utimensat");
            MemorySegment times = times(arena, mtimeSec, mtimeNsec);
            call(arena, "utimensat", name,
                    st -> (int) UTIMENSAT.invokeExact(st, dirFd, n, times, AT_SYMLINK_NOFOLLOW));
        }
    }

    static void fsync(int fd) throws PosixException {
        try (Arena arena = Arena.ofConfined()) {
            call(arena, "fsync", "", st -> (int) FSYNC.invokeExact(st, fd));
        }
    }

    /** syncfs(2): every dirty page of the file system {@code fd} is on, in one call. */
    static void syncfs(int fd) throws PosixException {
        try (Arena arena = Arena.ofConfined()) {
            call(arena, "syncfs", "", st -> (int) SYNCFS.invokeExact(st, fd));
        }
    }

    // ---- plumbing

    private static long call(Arena arena, String call, String name, NativeCall.Native fn) throws PosixException {
        return call(arena, call, name, fn, true);
    }

    private static long call(Arena arena, String call, String name, NativeCall.Native fn, boolean retryEintr)
            throws PosixException {
        return NativeCall.call(arena, call, fn, retryEintr, errno -> new PosixException(errno, call, name));
    }

    private static MemorySegment cString(Arena arena, String s, String call, String name) throws PosixException {
        return NativeCall.cString(arena, s, errno -> new PosixException(errno, call, name));
    }

    /** One name in a directory: never empty, ".", ".." or containing '/' (EINVAL), so never a path. */
    private static MemorySegment component(Arena arena, String name, String call) throws PosixException {
        if (name.isEmpty() || name.equals(".") || name.equals("..") || name.indexOf('/') >= 0) {
            throw new PosixException(EINVAL, call, name);
        }
        return cString(arena, name, call, name);
    }

    private static MemorySegment procPath(Arena arena, int fd) {
        return arena.allocateFrom("/proc/self/fd/" + fd, StandardCharsets.ISO_8859_1);
    }

    /** {@code struct timespec[2]}: the atime left alone (UTIME_OMIT), then the mtime. */
    private static MemorySegment times(Arena arena, long mtimeSec, int mtimeNsec) {
        MemorySegment t = arena.allocate(32, 8);
        t.set(JAVA_LONG, 0, 0);
        t.set(JAVA_LONG, 8, UTIME_OMIT);
        t.set(JAVA_LONG, 16, mtimeSec);
        t.set(JAVA_LONG, 24, mtimeNsec);
        return t;
    }

    private static Stat toStat(MemorySegment b) {
        long dev = NativeCall.u32(b, 136) << 32 | NativeCall.u32(b, 140);
        return new Stat(Short.toUnsignedInt(b.get(JAVA_SHORT, 28)), dev, b.get(JAVA_LONG, 32), NativeCall.u32(b, 16),
                b.get(JAVA_LONG, 40), b.get(JAVA_LONG, 48), b.get(JAVA_LONG, 112), b.get(JAVA_INT, 120),
                b.get(JAVA_LONG, 96), b.get(JAVA_INT, 104));
    }
}
