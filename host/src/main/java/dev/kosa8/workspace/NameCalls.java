package dev.kosa8.workspace;

import static dev.kosa8.workspace.ErrnoException.ENAMETOOLONG;
import static dev.kosa8.workspace.LinuxFs.AT_SYMLINK_NOFOLLOW;
import static dev.kosa8.workspace.LinuxFs.EMPTY;
import static dev.kosa8.workspace.LinuxFs.PATH_MAX;
import static dev.kosa8.workspace.LinuxFs.STATX;
import static dev.kosa8.workspace.LinuxFs.STATX_BASIC_STATS;
import static dev.kosa8.workspace.LinuxFs.STATX_BTIME;
import static dev.kosa8.workspace.LinuxFs.STATX_SIZE;
import static dev.kosa8.workspace.LinuxFs.UTIMENSAT;
import static dev.kosa8.workspace.LinuxFs.cString;
import static dev.kosa8.workspace.LinuxFs.call;
import static dev.kosa8.workspace.LinuxFs.component;
import static dev.kosa8.workspace.LinuxFs.times;
import static dev.kosa8.workspace.LinuxFs.toStat;
import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

import dev.kosa8.host.NativeCall;
import dev.kosa8.workspace.LinuxFs.Stat;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandle;
import java.nio.charset.StandardCharsets;

/**
 * The workspace server's calls on one entry <em>name</em> inside a directory
 * fd that {@link LinuxFs#openBeneath} produced: a single component, never
 * {@code "."}, {@code ".."} or containing {@code '/'} (EINVAL), never
 * followed if it is a symlink. The rule and the byte-string names are
 * {@link LinuxFs}'s.
 */
final class NameCalls {
    private static final MethodHandle MKDIRAT = NativeCall.handle("mkdirat", -1, JAVA_INT, JAVA_INT, ADDRESS, JAVA_INT);
    private static final MethodHandle UNLINKAT = NativeCall.handle("unlinkat", -1, JAVA_INT, JAVA_INT, ADDRESS, JAVA_INT);
    private static final MethodHandle RENAMEAT = NativeCall.handle("renameat", -1, JAVA_INT, JAVA_INT, ADDRESS, JAVA_INT, ADDRESS);
    private static final MethodHandle RENAMEAT2 = NativeCall.handle("renameat2", -1, JAVA_INT, JAVA_INT, ADDRESS, JAVA_INT, ADDRESS, JAVA_INT);
    private static final MethodHandle SYMLINKAT = NativeCall.handle("symlinkat", -1, JAVA_INT, ADDRESS, JAVA_INT, ADDRESS);
    private static final MethodHandle READLINKAT = NativeCall.handle("readlinkat", -1, JAVA_LONG, JAVA_INT, ADDRESS, ADDRESS, JAVA_LONG);
    private static final MethodHandle LINKAT = NativeCall.handle("linkat", -1, JAVA_INT, JAVA_INT, ADDRESS, JAVA_INT, ADDRESS, JAVA_INT);
    private static final MethodHandle MKNODAT = NativeCall.handle("mknodat", -1, JAVA_INT, JAVA_INT, ADDRESS, JAVA_INT, JAVA_LONG);

    private NameCalls() {
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

    static void mkdirAt(int dirFd, String name, int mode) throws ErrnoException {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment n = component(arena, name, "mkdirat");
            call(arena, "mkdirat", st -> (int) MKDIRAT.invokeExact(st, dirFd, n, mode));
        }
    }

    /** unlinkat(2); {@code flags} is 0 or {@link LinuxFs#AT_REMOVEDIR}. */
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

    /** mknodat(2); {@code mode} includes the file type, {@code dev} is {@link LinuxFs#makedev}-encoded. */
    static void mknodAt(int dirFd, String name, int mode, long dev) throws ErrnoException {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment n = component(arena, name, "mknodat");
            call(arena, "mknodat", st -> (int) MKNODAT.invokeExact(st, dirFd, n, mode, dev));
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
}
