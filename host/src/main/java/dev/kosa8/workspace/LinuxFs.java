package dev.kosa8.workspace;

import static dev.kosa8.workspace.ErrnoException.EACCES;
import static dev.kosa8.workspace.ErrnoException.EAGAIN;
import static dev.kosa8.workspace.ErrnoException.EBADF;
import static dev.kosa8.workspace.ErrnoException.EINVAL;
import static dev.kosa8.workspace.ErrnoException.ENAMETOOLONG;
import static dev.kosa8.workspace.ErrnoException.ENOENT;
import static dev.kosa8.workspace.ErrnoException.ENOSYS;
import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;
import static java.lang.foreign.ValueLayout.JAVA_SHORT;

import dev.kosa8.host.NativeCall;
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
 * The system calls behind the workspace's 9P2000.L server, through Java's FFM
 * API (x86-64 Linux only). The server exports exactly one host folder to an
 * untrusted guest, so keeping every operation inside that folder is the point.
 *
 * <p>The rule that keeps it there: a path from the guest is only ever resolved
 * by {@link #openBeneath}, which the kernel confines to the root fd and which
 * follows no symlink at all. Every other call is either on an fd that
 * {@code openBeneath} produced, or on one <em>name</em> inside such a directory
 * fd — a single component, never {@code "."}, {@code ".."} or containing
 * {@code '/'} (checked here, EINVAL), and never followed if it is a symlink.
 *
 * <p>Names and paths are byte strings: one char per byte (ISO-8859-1), so any
 * Linux name round-trips. A {@code '\0'} or a char above 0xFF is EINVAL. Each
 * call captures errno, retries EINTR, and throws {@link ErrnoException}.
 */
final class LinuxFs {
    static final int O_RDONLY = 0, O_WRONLY = 01, O_RDWR = 02, O_CREAT = 0100, O_EXCL = 0200;
    static final int O_NOCTTY = 0400, O_TRUNC = 01000, O_APPEND = 02000, O_NONBLOCK = 04000;
    static final int O_DSYNC = 010000, O_DIRECT = 040000, O_LARGEFILE = 0100000, O_DIRECTORY = 0200000;
    static final int O_NOFOLLOW = 0400000, O_NOATIME = 01000000, O_CLOEXEC = 02000000;
    static final int O_SYNC = 04010000, O_PATH = 010000000, O_TMPFILE = 020200000;
    static final int AT_FDCWD = -100, AT_SYMLINK_NOFOLLOW = 0x100, AT_REMOVEDIR = 0x200, AT_EMPTY_PATH = 0x1000;
    static final int S_IFMT = 0170000, S_IFSOCK = 0140000, S_IFLNK = 0120000, S_IFREG = 0100000;
    static final int S_IFBLK = 060000, S_IFDIR = 040000, S_IFCHR = 020000, S_IFIFO = 010000;
    static final int DT_UNKNOWN = 0, DT_FIFO = 1, DT_CHR = 2, DT_DIR = 4, DT_BLK = 6, DT_REG = 8, DT_LNK = 10, DT_SOCK = 12;
    static final int SEEK_SET = 0, SEEK_CUR = 1, SEEK_END = 2;
    static final long UTIME_NOW = (1L << 30) - 1, UTIME_OMIT = (1L << 30) - 2;
    static final int F_RDLCK = 0, F_WRLCK = 1, F_UNLCK = 2;

    private static final long SYS_GETDENTS64 = 217, SYS_OPENAT2 = 437;
    private static final long RESOLVE_NO_MAGICLINKS = 0x02, RESOLVE_NO_SYMLINKS = 0x04, RESOLVE_BENEATH = 0x08;
    private static final long OPEN_HOW_SIZE = 24;
    private static final int STATX_BASIC_STATS = 0x7ff, STATX_BTIME = 0x800, STATX_SIZE = 256;
    private static final int STATFS_SIZE = 120, FLOCK_SIZE = 32, F_OFD_GETLK = 36, F_OFD_SETLK = 37;
    private static final int PATH_MAX = 4096, EAGAIN_RETRIES = 8;

    /** False off x86-64 Linux; then every call throws ENOSYS. */
    static final boolean AVAILABLE = NativeCall.AVAILABLE;

    private static final MemorySegment EMPTY = Arena.global().allocate(1);

    private static final MethodHandle OPEN = NativeCall.handle("open", 2, JAVA_INT, ADDRESS, JAVA_INT, JAVA_INT);
    private static final MethodHandle OPENAT2 = NativeCall.handle("syscall", 1, JAVA_LONG, JAVA_LONG, JAVA_LONG, ADDRESS, ADDRESS, JAVA_LONG);
    private static final MethodHandle GETDENTS64 = NativeCall.handle("syscall", 1, JAVA_LONG, JAVA_LONG, JAVA_LONG, ADDRESS, JAVA_LONG);
    private static final MethodHandle CLOSE = NativeCall.handle("close", -1, JAVA_INT, JAVA_INT);
    private static final MethodHandle STATX = NativeCall.handle("statx", -1, JAVA_INT, JAVA_INT, ADDRESS, JAVA_INT, JAVA_INT, ADDRESS);
    private static final MethodHandle PREAD = NativeCall.handle("pread", -1, JAVA_LONG, JAVA_INT, ADDRESS, JAVA_LONG, JAVA_LONG);
    private static final MethodHandle PWRITE = NativeCall.handle("pwrite", -1, JAVA_LONG, JAVA_INT, ADDRESS, JAVA_LONG, JAVA_LONG);
    private static final MethodHandle LSEEK = NativeCall.handle("lseek", -1, JAVA_LONG, JAVA_INT, JAVA_LONG, JAVA_INT);
    private static final MethodHandle MKDIRAT = NativeCall.handle("mkdirat", -1, JAVA_INT, JAVA_INT, ADDRESS, JAVA_INT);
    private static final MethodHandle UNLINKAT = NativeCall.handle("unlinkat", -1, JAVA_INT, JAVA_INT, ADDRESS, JAVA_INT);
    private static final MethodHandle RENAMEAT = NativeCall.handle("renameat", -1, JAVA_INT, JAVA_INT, ADDRESS, JAVA_INT, ADDRESS);
    private static final MethodHandle RENAMEAT2 = NativeCall.handle("renameat2", -1, JAVA_INT, JAVA_INT, ADDRESS, JAVA_INT, ADDRESS, JAVA_INT);
    private static final MethodHandle SYMLINKAT = NativeCall.handle("symlinkat", -1, JAVA_INT, ADDRESS, JAVA_INT, ADDRESS);
    private static final MethodHandle READLINKAT = NativeCall.handle("readlinkat", -1, JAVA_LONG, JAVA_INT, ADDRESS, ADDRESS, JAVA_LONG);
    private static final MethodHandle LINKAT = NativeCall.handle("linkat", -1, JAVA_INT, JAVA_INT, ADDRESS, JAVA_INT, ADDRESS, JAVA_INT);
    private static final MethodHandle MKNODAT = NativeCall.handle("mknodat", -1, JAVA_INT, JAVA_INT, ADDRESS, JAVA_INT, JAVA_LONG);
    private static final MethodHandle CHMOD = NativeCall.handle("chmod", -1, JAVA_INT, ADDRESS, JAVA_INT);
    private static final MethodHandle TRUNCATE = NativeCall.handle("truncate", -1, JAVA_INT, ADDRESS, JAVA_LONG);
    private static final MethodHandle UTIMENSAT = NativeCall.handle("utimensat", -1, JAVA_INT, JAVA_INT, ADDRESS, ADDRESS, JAVA_INT);
    private static final MethodHandle FSYNC = NativeCall.handle("fsync", -1, JAVA_INT, JAVA_INT);
    private static final MethodHandle FDATASYNC = NativeCall.handle("fdatasync", -1, JAVA_INT, JAVA_INT);
    private static final MethodHandle FSTATFS = NativeCall.handle("fstatfs", -1, JAVA_INT, JAVA_INT, ADDRESS);
    private static final MethodHandle FCNTL_LOCK = NativeCall.handle("fcntl", 2, JAVA_INT, JAVA_INT, JAVA_INT, ADDRESS);

    private LinuxFs() {
    }

    /** What {@code statx(2)} reports; uid and gid are the raw 32-bit ids. */
    record Stat(int mode, int uid, int gid, long nlink, long rdevMajor, long rdevMinor, long size, long blksize,
            long blocks, long atimeSec, long atimeNsec, long mtimeSec, long mtimeNsec, long ctimeSec, long ctimeNsec,
            long btimeSec, long btimeNsec, long ino, long devMajor, long devMinor) {
        int type() {
            return mode & S_IFMT;
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

        /** The device number of a device node as glibc's {@code makedev} packs it (the 9P {@code rdev}). */
        long rdevEncoded() {
            return makedev(rdevMajor, rdevMinor);
        }
    }

    /** One {@code linux_dirent64}; {@code nextOffset} is the cookie to {@link #lseek} to for the entries after it. */
    record DirEntry(long ino, long nextOffset, int type, String name) {
    }

    record StatFs(long type, long bsize, long blocks, long bfree, long bavail, long files, long ffree, long fsid,
            long namelen) {
    }

    /** An open file description lock; {@code pid} is -1 for OFD locks held by anyone. */
    record Flock(int type, long start, long length, int pid) {
    }

    /** glibc's {@code makedev(major, minor)}: the {@code dev_t} that {@link #mknodAt} takes. */
    static long makedev(long major, long minor) {
        return (major & 0xfffL) << 8 | (major & 0xfffff000L) << 32 | (minor & 0xffL) | (minor & 0xffffff00L) << 12;
    }

    /** Opens the exported folder itself. Symlinks are followed: the host user chose this path. */
    static int openRoot(String absolutePath) throws ErrnoException {
        if (!absolutePath.startsWith("/")) {
            throw new ErrnoException(EINVAL, "open");
        }
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment path = cString(arena, absolutePath, "open");
            return (int) call(arena, "open",
                    st -> (int) OPEN.invokeExact(st, path, O_PATH | O_DIRECTORY | O_CLOEXEC, 0));
        }
    }

    /**
     * The single confinement primitive of the server: opens {@code relPath} below {@code rootFd} with
     * {@code openat2(RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS)}, so the kernel itself
     * refuses to leave the root. An absolute path or a {@code ".."} that climbs above the root fails with
     * EXDEV; any symlink anywhere in the path fails with ELOOP, also with {@code O_CREAT} (nothing is created
     * through a dangling link). The one exception, per openat2(2): with both {@code O_PATH} and
     * {@code O_NOFOLLOW} a trailing symlink yields an {@code O_PATH} fd of the link itself, usable for
     * {@link #stat} and {@code readlinkAt(fd, "")}. {@code ".."} that stays inside is allowed; if a rename
     * races with it the kernel answers EAGAIN, which is retried a few times. {@code ""} means the root.
     * {@code O_CLOEXEC} is always added; {@code mode} (permission bits only) is passed only when creating.
     * Where the kernel has no {@code openat2} (Linux before 5.6, or a seccomp filter that refuses it), or the
     * portable profile is chosen ({@link PathResolution}), the same contract is kept by {@link BeneathWalk}.
     */
    static int openBeneath(int rootFd, String relPath, int flags, int mode) throws ErrnoException {
        if (PathResolution.portable()) {
            return BeneathWalk.open(rootFd, relPath, flags, mode);
        }
        try {
            return openat2Beneath(rootFd, relPath, flags, mode);
        } catch (ErrnoException e) {
            if (e.errno != ENOSYS || !NativeCall.AVAILABLE) {
                throw e;
            }
            PathResolution.noOpenat2();
            return BeneathWalk.open(rootFd, relPath, flags, mode);
        }
    }

    /** {@link #openBeneath} by the kernel's {@code openat2}, whichever the profile. */
    static int openat2Beneath(int rootFd, String relPath, int flags, int mode) throws ErrnoException {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment path = cString(arena, relPath.isEmpty() ? "." : relPath, "openat2");
            boolean creates = (flags & O_CREAT) != 0 || (flags & O_TMPFILE) == O_TMPFILE;
            MemorySegment how = arena.allocate(OPEN_HOW_SIZE, 8);
            how.set(JAVA_LONG, 0, Integer.toUnsignedLong(flags | O_CLOEXEC));
            how.set(JAVA_LONG, 8, creates ? mode & 07777 : 0);
            how.set(JAVA_LONG, 16, RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS);
            for (int attempt = 1; ; attempt++) {
                try {
                    return (int) call(arena, "openat2", st -> (long) OPENAT2.invokeExact(st, SYS_OPENAT2,
                            (long) rootFd, path, how, OPEN_HOW_SIZE));
                } catch (ErrnoException e) {
                    if (e.errno != EAGAIN || attempt == EAGAIN_RETRIES) {
                        throw e;
                    }
                }
            }
        }
    }

    /**
     * Opens again, with {@code flags}, the file an {@code O_PATH} descriptor refers to, by its magic
     * link {@code /proc/self/fd/N}: the kernel goes straight to that inode and resolves no name under
     * the exported folder, so nothing swapped in since can be reached. Lets the server check a
     * file's type on an {@code O_PATH} descriptor before opening it for real, so a device node or
     * FIFO is never opened (opening one runs its driver, or wakes a writer waiting for a reader).
     * Creation flags and {@code O_NOFOLLOW} are dropped; {@code O_CLOEXEC} is added.
     */
    static int reopen(int pathFd, int flags) throws ErrnoException {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment p = procPath(arena, pathFd, "open");
            int f = (flags & ~(O_CREAT | O_EXCL | O_NOFOLLOW | O_PATH | O_TMPFILE)) | O_CLOEXEC;
            return (int) call(arena, "open", st -> (int) OPEN.invokeExact(st, p, f, 0));
        }
    }

    /** Closes {@code fd}. Only EBADF is reported; EINTR is not retried, as on Linux the fd is gone either way. */
    static void close(int fd) throws ErrnoException {
        try (Arena arena = Arena.ofConfined()) {
            call(arena, "close", st -> (int) CLOSE.invokeExact(st, fd), false);
        } catch (ErrnoException e) {
            if (e.errno == EBADF || e.errno == ENOSYS) {
                throw e;
            }
        }
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

    /** Stats the entry {@code name} of directory {@code dirFd}, not following a symlink. */
    static Stat statAt(int dirFd, String name) throws ErrnoException {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment n = component(arena, name, "statx");
            MemorySegment buf = arena.allocate(STATX_SIZE, 8);
            call(arena, "statx", st -> (int) STATX.invokeExact(st, dirFd, n, AT_SYMLINK_NOFOLLOW,
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

    static void mkdirAt(int dirFd, String name, int mode) throws ErrnoException {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment n = component(arena, name, "mkdirat");
            call(arena, "mkdirat", st -> (int) MKDIRAT.invokeExact(st, dirFd, n, mode));
        }
    }

    /** unlinkat(2); {@code flags} is 0 or {@link #AT_REMOVEDIR}. */
    static void unlinkAt(int dirFd, String name, int flags) throws ErrnoException {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment n = component(arena, name, "unlinkat");
            call(arena, "unlinkat", st -> (int) UNLINKAT.invokeExact(st, dirFd, n, flags));
        }
    }

    static void renameAt(int oldDirFd, String oldName, int newDirFd, String newName) throws ErrnoException {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment o = component(arena, oldName, "renameat");
            MemorySegment n = component(arena, newName, "renameat");
            call(arena, "renameat", st -> (int) RENAMEAT.invokeExact(st, oldDirFd, o, newDirFd, n));
        }
    }

    /** Swaps two names atomically ({@code renameat2(RENAME_EXCHANGE)}): each then names what the other did. */
    static void exchangeAt(int oldDirFd, String oldName, int newDirFd, String newName) throws ErrnoException {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment o = component(arena, oldName, "renameat2");
            MemorySegment n = component(arena, newName, "renameat2");
            call(arena, "renameat2", st -> (int) RENAMEAT2.invokeExact(st, oldDirFd, o, newDirFd, n, 2));
        }
    }

    /** Creates symlink {@code name} holding {@code target}; the target is data, never resolved here. */
    static void symlinkAt(String target, int dirFd, String name) throws ErrnoException {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment t = cString(arena, target, "symlinkat");
            MemorySegment n = component(arena, name, "symlinkat");
            call(arena, "symlinkat", st -> (int) SYMLINKAT.invokeExact(st, t, dirFd, n));
        }
    }

    /** Reads symlink {@code name} in {@code dirFd}, or with {@code name ""} the symlink an {@code O_PATH} fd is. */
    static String readlinkAt(int dirFd, String name) throws ErrnoException {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment n = name.isEmpty() ? EMPTY : component(arena, name, "readlinkat");
            MemorySegment buf = arena.allocate(PATH_MAX + 1);
            int len = (int) call(arena, "readlinkat",
                    st -> (long) READLINKAT.invokeExact(st, dirFd, n, buf, (long) PATH_MAX + 1));
            if (len > PATH_MAX) {
                throw new ErrnoException(ENAMETOOLONG, "readlinkat");
            }
            return new String(buf.asSlice(0, len).toArray(JAVA_BYTE), StandardCharsets.ISO_8859_1);
        }
    }

    /** Hard-links {@code oldName}; a symlink is linked as itself (flags 0). */
    static void linkAt(int oldDirFd, String oldName, int newDirFd, String newName) throws ErrnoException {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment o = component(arena, oldName, "linkat");
            MemorySegment n = component(arena, newName, "linkat");
            call(arena, "linkat", st -> (int) LINKAT.invokeExact(st, oldDirFd, o, newDirFd, n, 0));
        }
    }

    /** mknodat(2); {@code mode} includes the file type, {@code dev} is {@link #makedev}-encoded. */
    static void mknodAt(int dirFd, String name, int mode, long dev) throws ErrnoException {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment n = component(arena, name, "mknodat");
            call(arena, "mknodat", st -> (int) MKNODAT.invokeExact(st, dirFd, n, mode, dev));
        }
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

    /** Sets times; a nsec of {@link #UTIME_NOW} or {@link #UTIME_OMIT} means now or unchanged. */
    static void utimensFd(int pathFd, long atimeSec, long atimeNsec, long mtimeSec, long mtimeNsec)
            throws ErrnoException {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment p = procPath(arena, pathFd, "utimensat");
            MemorySegment times = times(arena, atimeSec, atimeNsec, mtimeSec, mtimeNsec);
            call(arena, "utimensat", st -> (int) UTIMENSAT.invokeExact(st, AT_FDCWD, p, times, 0));
        }
    }

    /** Sets the times of entry {@code name} (a symlink itself, not its target). */
    static void utimensAt(int dirFd, String name, long atimeSec, long atimeNsec, long mtimeSec, long mtimeNsec)
            throws ErrnoException {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment n = component(arena, name, "utimensat");
            MemorySegment times = times(arena, atimeSec, atimeNsec, mtimeSec, mtimeNsec);
            call(arena, "utimensat", st -> (int) UTIMENSAT.invokeExact(st, dirFd, n, times, AT_SYMLINK_NOFOLLOW));
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
     * Takes or releases ({@link #F_UNLCK}) an open file description lock, which belongs to the fd and not to
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

    /** The first lock that would block {@code type} on the range, or one of type {@link #F_UNLCK} if none. */
    static Flock getLock(int fd, int type, long start, long length) throws ErrnoException {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment lock = flock(arena, type, start, length);
            call(arena, "fcntl(F_OFD_GETLK)", st -> (int) FCNTL_LOCK.invokeExact(st, fd, F_OFD_GETLK, lock));
            return new Flock(lock.get(JAVA_SHORT, 0), lock.get(JAVA_LONG, 8), lock.get(JAVA_LONG, 16),
                    lock.get(JAVA_INT, 24));
        }
    }

    // ---- plumbing

    private static long call(Arena arena, String name, NativeCall.Native fn) throws ErrnoException {
        return call(arena, name, fn, true);
    }

    private static long call(Arena arena, String name, NativeCall.Native fn, boolean retryEintr)
            throws ErrnoException {
        return NativeCall.call(arena, name, fn, retryEintr, errno -> new ErrnoException(errno, name));
    }

    /** A byte string as a C string; EINVAL for NUL or a char that is not one byte. */
    private static MemorySegment cString(Arena arena, String s, String call) throws ErrnoException {
        return NativeCall.cString(arena, s, errno -> new ErrnoException(errno, call));
    }

    /** One directory entry name: never empty (ENOENT), never ".", ".." or containing '/' (EINVAL). */
    private static MemorySegment component(Arena arena, String name, String call) throws ErrnoException {
        if (name.isEmpty()) {
            throw new ErrnoException(ENOENT, call);
        }
        if (name.equals(".") || name.equals("..") || name.indexOf('/') >= 0) {
            throw new ErrnoException(EINVAL, call);
        }
        return cString(arena, name, call);
    }

    private static MemorySegment procPath(Arena arena, int fd, String call) throws ErrnoException {
        if (fd < 0) {
            throw new ErrnoException(EBADF, call);
        }
        return arena.allocateFrom("/proc/self/fd/" + fd, StandardCharsets.ISO_8859_1);
    }

    private static MemorySegment times(Arena arena, long aSec, long aNsec, long mSec, long mNsec) {
        MemorySegment t = arena.allocate(32, 8);
        t.set(JAVA_LONG, 0, aSec);
        t.set(JAVA_LONG, 8, aNsec);
        t.set(JAVA_LONG, 16, mSec);
        t.set(JAVA_LONG, 24, mNsec);
        return t;
    }

    private static MemorySegment flock(Arena arena, int type, long start, long length) {
        MemorySegment lock = arena.allocate(FLOCK_SIZE, 8);
        lock.set(JAVA_SHORT, 0, (short) type);
        lock.set(JAVA_SHORT, 2, (short) SEEK_SET);
        lock.set(JAVA_LONG, 8, start);
        lock.set(JAVA_LONG, 16, length);
        return lock;
    }

    private static Stat toStat(MemorySegment b) {
        boolean btime = (b.get(JAVA_INT, 0) & STATX_BTIME) != 0;
        return new Stat(Short.toUnsignedInt(b.get(JAVA_SHORT, 28)), b.get(JAVA_INT, 20), b.get(JAVA_INT, 24),
                NativeCall.u32(b, 16), NativeCall.u32(b, 128), NativeCall.u32(b, 132), b.get(JAVA_LONG, 40), NativeCall.u32(b, 4), b.get(JAVA_LONG, 48),
                b.get(JAVA_LONG, 64), NativeCall.u32(b, 72), b.get(JAVA_LONG, 112), NativeCall.u32(b, 120), b.get(JAVA_LONG, 96),
                NativeCall.u32(b, 104), btime ? b.get(JAVA_LONG, 80) : 0, btime ? NativeCall.u32(b, 88) : 0, b.get(JAVA_LONG, 32),
                NativeCall.u32(b, 136), NativeCall.u32(b, 140));
    }
}
