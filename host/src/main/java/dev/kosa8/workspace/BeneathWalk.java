package dev.kosa8.workspace;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;

import dev.kosa8.host.NativeCall;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandle;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;

/**
 * The portable way of confining a path to a root ({@link LinuxFs#openBeneath}'s contract without
 * {@code openat2}): one component at a time, each opened with {@code openat(dir, name, O_NOFOLLOW)}
 * relative to the descriptor of the one before, so no symlink is ever followed and no name is ever
 * resolved from anywhere but a directory already reached beneath the root. This is how a host without
 * {@code openat2(2)} resolves the guest's paths: Linux before 5.6 (RHEL 8's 4.18, say), and the shape of
 * the walk on any POSIX system that has {@code openat} and {@code O_NOFOLLOW}. Chosen by
 * {@code KOSA8_HOST_PROFILE=portable} in the daemon's environment (so the Linux suite attacks this code
 * too, see docs/workspace.md), and taken by itself where the kernel has no {@code openat2}.
 *
 * <p>{@code ".."} is never resolved by name: the walk keeps the descriptors of the directories it came
 * through and steps back to the one before, so a directory moved meanwhile cannot take it elsewhere, and
 * a {@code ".."} above the root fails with EXDEV, as {@code RESOLVE_BENEATH} does. A symlink anywhere fails
 * with ELOOP, as {@code RESOLVE_NO_SYMLINKS} does, with the same one exception: {@code O_PATH | O_NOFOLLOW}
 * on a trailing symlink gives a descriptor of the link itself.
 *
 * <p>What it costs: one system call per component instead of one per path (measured in
 * docs/workspace.md, "The portable profile").
 */
final class BeneathWalk {
    private static final MethodHandle OPENAT = NativeCall.handle("openat", 3, JAVA_INT, JAVA_INT, ADDRESS, JAVA_INT,
            JAVA_INT);
    private static final int DIRECTORY = LinuxFs.O_PATH | LinuxFs.O_DIRECTORY | LinuxFs.O_NOFOLLOW
            | LinuxFs.O_CLOEXEC;

    private BeneathWalk() {
    }

    /** As {@link LinuxFs#openBeneath}: {@code relPath} opened below {@code rootFd} with {@code flags}. */
    static int open(int rootFd, String relPath, int flags, int mode) throws ErrnoException {
        if (relPath.startsWith("/")) {
            throw new ErrnoException(ErrnoException.EXDEV, "openat");
        }
        if (relPath.length() >= PATH_MAX) {
            throw new ErrnoException(ErrnoException.ENAMETOOLONG, "openat"); // as openat2 refuses it
        }
        boolean creates = (flags & LinuxFs.O_CREAT) != 0;
        boolean trailingSlash = relPath.endsWith("/");
        List<String> names = new ArrayList<>();
        for (String n : relPath.split("/", -1)) {
            if (!n.isEmpty()) {
                names.add(n);
            }
        }
        // the directories opened so far, the current one first; those below it are kept only while a ".." ahead
        // may step back to them (the server's own paths have none: then at most one is open)
        Deque<Integer> through = new ArrayDeque<>();
        int lastUp = names.lastIndexOf("..");
        try {
            for (int i = 0; i < names.size() - 1; i++) {
                step(rootFd, through, names.get(i));
                while (i >= lastUp && through.size() > 1) {
                    LinuxFs.close(through.removeLast());
                }
            }
            String last = names.isEmpty() ? "." : names.getLast();
            if (last.equals("..")) {
                step(rootFd, through, last);
                last = ".";
            }
            int dir = through.isEmpty() ? rootFd : through.peek();
            if (last.equals(".")) { // the directory reached: openat(2) itself says what O_CREAT and O_EXCL get there
                return openLast(dir, last, flags, mode, false);
            }
            if (trailingSlash && creates) {
                throw new ErrnoException(ErrnoException.EISDIR, "openat"); // open(2)'s answer to "name/" with O_CREAT
            }
            // "name/" must be a directory; the slash itself is never handed on, as it would follow a symlink
            return openLast(dir, last, trailingSlash ? flags | LinuxFs.O_DIRECTORY : flags, mode,
                    trailingSlash || (flags & LinuxFs.O_NOFOLLOW) == 0);
        } finally {
            for (int fd : through) {
                LinuxFs.close(fd);
            }
        }
    }

    /** Goes one directory down ({@code name}), back up ({@code ".."}, never above the root), or stays ({@code "."}). */
    private static void step(int rootFd, Deque<Integer> through, String name) throws ErrnoException {
        if (name.equals(".")) {
            return; // the directory reached so far is one: it was opened as one
        }
        if (name.equals("..")) {
            if (through.isEmpty()) {
                throw new ErrnoException(ErrnoException.EXDEV, "openat");
            }
            LinuxFs.close(through.pop());
            return;
        }
        int dir = through.isEmpty() ? rootFd : through.peek();
        for (int attempt = 1; ; attempt++) {
            try {
                through.push(openAt(dir, name, DIRECTORY, 0));
                return;
            } catch (ErrnoException e) {
                if (e.errno != ErrnoException.ENOTDIR) {
                    throw e;
                }
                LinuxFs.Stat now = statOrNull(dir, name);
                if (now != null && now.isSymlink()) {
                    throw new ErrnoException(ErrnoException.ELOOP, "openat");
                }
                if (now == null || !now.isDir() || attempt == RETRIES) {
                    throw e;
                }
                // it was something else a moment ago and is a directory now (a rename raced): look again, as
                // openat2 does when a rename races with its walk
            }
        }
    }

    private static final int RETRIES = 8, PATH_MAX = 4096;

    /**
     * The last component, never followed if it is a symlink. Where the caller would have it followed ({@code
     * follows}: no {@code O_NOFOLLOW}, or a trailing slash) a symlink there is ELOOP, as {@code
     * RESOLVE_NO_SYMLINKS} makes it; where not, openat(2)'s own answer with {@code O_NOFOLLOW} is openat2's too
     * ({@code O_PATH | O_NOFOLLOW} gives the link itself; {@code O_DIRECTORY} ENOTDIR; anything else ELOOP).
     */
    private static int openLast(int dir, String name, int flags, int mode, boolean follows) throws ErrnoException {
        int fd;
        try {
            fd = openAt(dir, name, flags | LinuxFs.O_NOFOLLOW | LinuxFs.O_CLOEXEC, mode);
        } catch (ErrnoException e) { // O_DIRECTORY on a symlink says ENOTDIR, where following it would be ELOOP
            throw follows && e.errno == ErrnoException.ENOTDIR && isSymlink(dir, name)
                    ? new ErrnoException(ErrnoException.ELOOP, "openat") : e;
        }
        if (follows && (flags & LinuxFs.O_PATH) != 0) { // O_PATH opened the link itself, which was not asked for
            boolean link;
            try {
                link = FdCalls.stat(fd).isSymlink();
            } catch (ErrnoException e) {
                LinuxFs.close(fd);
                throw e;
            }
            if (link) {
                LinuxFs.close(fd);
                throw new ErrnoException(ErrnoException.ELOOP, "openat");
            }
        }
        return fd;
    }

    private static boolean isSymlink(int dir, String name) {
        LinuxFs.Stat st = statOrNull(dir, name);
        return st != null && st.isSymlink();
    }

    private static LinuxFs.Stat statOrNull(int dir, String name) {
        try {
            return NameCalls.statAt(dir, name);
        } catch (ErrnoException e) {
            return null;
        }
    }

    private static int openAt(int dir, String name, int flags, int mode) throws ErrnoException {
        boolean creates = (flags & LinuxFs.O_CREAT) != 0 || (flags & LinuxFs.O_TMPFILE) == LinuxFs.O_TMPFILE;
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment n = NativeCall.cString(arena, name, errno -> new ErrnoException(errno, "openat"));
            return (int) NativeCall.call(arena, "openat", st -> (int) OPENAT.invokeExact(st, dir, n, flags,
                    creates ? mode & 07777 : 0), true, errno -> new ErrnoException(errno, "openat"));
        }
    }
}
