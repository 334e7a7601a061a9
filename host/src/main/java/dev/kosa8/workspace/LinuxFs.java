package dev.kosa8.workspace;

import static dev.kosa8.workspace.ErrnoException.EAGAIN;
import static dev.kosa8.workspace.ErrnoException.EBADF;
import static dev.kosa8.workspace.ErrnoException.EINVAL;
import static dev.kosa8.workspace.ErrnoException.ENOENT;
import static dev.kosa8.workspace.ErrnoException.ENOSYS;
import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;
import static java.lang.foreign.ValueLayout.JAVA_SHORT;

import dev.kosa8.host.NativeCall;
import dev.kosa8.protocol.LinuxAbi;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandle;
import java.nio.charset.StandardCharsets;

/**
 * The system calls behind the workspace's 9P2000.L server, through Java's FFM
 * API (x86-64 Linux only): here the opening of paths, the values the calls
 * share and their plumbing; the calls on one name in a directory are
 * {@link NameCalls}, those on an open file {@link FdCalls}. The server exports
 * exactly one host folder to an untrusted guest, so keeping every operation
 * inside that folder is the point.
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
    /** This architecture's system-call numbers and flags: four open flags and getdents64 differ on arm64. */
    static final LinuxAbi ABI = LinuxAbi.current();
    static final int O_RDONLY = LinuxAbi.O_RDONLY, O_WRONLY = LinuxAbi.O_WRONLY, O_RDWR = LinuxAbi.O_RDWR;
    static final int O_CREAT = LinuxAbi.O_CREAT, O_EXCL = LinuxAbi.O_EXCL, O_NOCTTY = LinuxAbi.O_NOCTTY;
    static final int O_TRUNC = LinuxAbi.O_TRUNC, O_APPEND = LinuxAbi.O_APPEND, O_NONBLOCK = LinuxAbi.O_NONBLOCK;
    static final int O_DSYNC = LinuxAbi.O_DSYNC, O_NOATIME = LinuxAbi.O_NOATIME, O_CLOEXEC = LinuxAbi.O_CLOEXEC;
    static final int O_SYNC = LinuxAbi.O_SYNC, O_PATH = LinuxAbi.O_PATH;
    static final int O_DIRECT = ABI.oDirect(), O_LARGEFILE = ABI.oLargefile(), O_DIRECTORY = ABI.oDirectory();
    static final int O_NOFOLLOW = ABI.oNofollow(), O_TMPFILE = ABI.oTmpfile();
    static final int AT_FDCWD = -100, AT_SYMLINK_NOFOLLOW = 0x100, AT_REMOVEDIR = 0x200, AT_EMPTY_PATH = 0x1000;
    static final int S_IFMT = 0170000, S_IFSOCK = 0140000, S_IFLNK = 0120000, S_IFREG = 0100000;
    static final int S_IFBLK = 060000, S_IFDIR = 040000, S_IFCHR = 020000, S_IFIFO = 010000;
    static final int DT_UNKNOWN = 0, DT_FIFO = 1, DT_CHR = 2, DT_DIR = 4, DT_BLK = 6, DT_REG = 8, DT_LNK = 10, DT_SOCK = 12;
    static final int SEEK_SET = 0, SEEK_CUR = 1, SEEK_END = 2;
    static final long UTIME_NOW = (1L << 30) - 1, UTIME_OMIT = (1L << 30) - 2;
    static final int F_RDLCK = 0, F_WRLCK = 1, F_UNLCK = 2;

    static final long SYS_GETDENTS64 = ABI.sysGetdents64(), SYS_OPENAT2 = ABI.sysOpenat2();
    private static final long RESOLVE_NO_MAGICLINKS = 0x02, RESOLVE_NO_SYMLINKS = 0x04, RESOLVE_BENEATH = 0x08;
    private static final long OPEN_HOW_SIZE = LinuxAbi.OPEN_HOW_SIZE;
    static final int STATX_BASIC_STATS = 0x7ff, STATX_BTIME = 0x800, STATX_SIZE = LinuxAbi.STATX_SIZE;
    static final int STATFS_SIZE = LinuxAbi.STATFS_SIZE, FLOCK_SIZE = LinuxAbi.FLOCK_SIZE;
    static final int F_OFD_GETLK = 36, F_OFD_SETLK = 37;
    static final int PATH_MAX = 4096, EAGAIN_RETRIES = 8;

    /** False off Linux on x86-64 or arm64 ({@link NativeCall#AVAILABLE}); then every call throws ENOSYS. */
    static final boolean AVAILABLE = NativeCall.AVAILABLE;

    static final MemorySegment EMPTY = Arena.global().allocate(1);

    private static final MethodHandle OPEN = NativeCall.handle("open", 2, JAVA_INT, ADDRESS, JAVA_INT, JAVA_INT);
    private static final MethodHandle OPENAT2 = NativeCall.handle("syscall", 1, JAVA_LONG, JAVA_LONG, JAVA_LONG, ADDRESS, ADDRESS, JAVA_LONG);
    static final MethodHandle STATX = NativeCall.handle("statx", -1, JAVA_INT, JAVA_INT, ADDRESS, JAVA_INT, JAVA_INT, ADDRESS);
    static final MethodHandle UTIMENSAT = NativeCall.handle("utimensat", -1, JAVA_INT, JAVA_INT, ADDRESS, ADDRESS, JAVA_INT);
    private static final MethodHandle CLOSE = NativeCall.handle("close", -1, JAVA_INT, JAVA_INT);

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

    /** One {@code linux_dirent64}; {@code nextOffset} is the cookie to {@link FdCalls#lseek} to for the entries after it. */
    record DirEntry(long ino, long nextOffset, int type, String name) {
    }

    record StatFs(long type, long bsize, long blocks, long bfree, long bavail, long files, long ffree, long fsid,
            long namelen) {
    }

    /** An open file description lock; {@code pid} is -1 for OFD locks held by anyone. */
    record Flock(int type, long start, long length, int pid) {
    }

    /** glibc's {@code makedev(major, minor)}: the {@code dev_t} that {@link NameCalls#mknodAt} takes. */
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
     * {@link FdCalls#stat} and {@code readlinkAt(fd, "")}. {@code ".."} that stays inside is allowed; if a rename
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

    /** Closes {@code fd}, ignoring a failure: for clean-up, where nothing could be done about one. */
    static void closeQuietly(int fd) {
        try {
            close(fd);
        } catch (ErrnoException ignored) {
            // nothing to do
        }
    }

    // ---- plumbing

    static long call(Arena arena, String name, NativeCall.Native fn) throws ErrnoException {
        return call(arena, name, fn, true);
    }

    static long call(Arena arena, String name, NativeCall.Native fn, boolean retryEintr)
            throws ErrnoException {
        return NativeCall.call(arena, name, fn, retryEintr, errno -> new ErrnoException(errno, name));
    }

    /** A byte string as a C string; EINVAL for NUL or a char that is not one byte. */
    static MemorySegment cString(Arena arena, String s, String call) throws ErrnoException {
        return NativeCall.cString(arena, s, errno -> new ErrnoException(errno, call));
    }

    /** One directory entry name: never empty (ENOENT), never ".", ".." or containing '/' (EINVAL). */
    static MemorySegment component(Arena arena, String name, String call) throws ErrnoException {
        if (name.isEmpty()) {
            throw new ErrnoException(ENOENT, call);
        }
        if (name.equals(".") || name.equals("..") || name.indexOf('/') >= 0) {
            throw new ErrnoException(EINVAL, call);
        }
        return cString(arena, name, call);
    }

    static MemorySegment procPath(Arena arena, int fd, String call) throws ErrnoException {
        if (fd < 0) {
            throw new ErrnoException(EBADF, call);
        }
        return arena.allocateFrom("/proc/self/fd/" + fd, StandardCharsets.ISO_8859_1);
    }

    static MemorySegment times(Arena arena, long aSec, long aNsec, long mSec, long mNsec) {
        MemorySegment t = arena.allocate(32, 8);
        t.set(JAVA_LONG, 0, aSec);
        t.set(JAVA_LONG, 8, aNsec);
        t.set(JAVA_LONG, 16, mSec);
        t.set(JAVA_LONG, 24, mNsec);
        return t;
    }

    static MemorySegment flock(Arena arena, int type, long start, long length) {
        MemorySegment lock = arena.allocate(FLOCK_SIZE, 8);
        lock.set(JAVA_SHORT, 0, (short) type);
        lock.set(JAVA_SHORT, 2, (short) SEEK_SET);
        lock.set(JAVA_LONG, 8, start);
        lock.set(JAVA_LONG, 16, length);
        return lock;
    }

    static Stat toStat(MemorySegment b) {
        boolean btime = (b.get(JAVA_INT, 0) & STATX_BTIME) != 0;
        return new Stat(Short.toUnsignedInt(b.get(JAVA_SHORT, 28)), b.get(JAVA_INT, 20), b.get(JAVA_INT, 24),
                NativeCall.u32(b, 16), NativeCall.u32(b, 128), NativeCall.u32(b, 132), b.get(JAVA_LONG, 40), NativeCall.u32(b, 4), b.get(JAVA_LONG, 48),
                b.get(JAVA_LONG, 64), NativeCall.u32(b, 72), b.get(JAVA_LONG, 112), NativeCall.u32(b, 120), b.get(JAVA_LONG, 96),
                NativeCall.u32(b, 104), btime ? b.get(JAVA_LONG, 80) : 0, btime ? NativeCall.u32(b, 88) : 0, b.get(JAVA_LONG, 32),
                NativeCall.u32(b, 136), NativeCall.u32(b, 140));
    }
}
