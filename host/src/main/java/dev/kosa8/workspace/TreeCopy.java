package dev.kosa8.workspace;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;

/**
 * Whole files and directories moved between the folder and the held layer ({@link HeldChanges}):
 * copied, removed, read and fingerprinted. Every path is resolved beneath a root descriptor by
 * {@link LinuxFs#openBeneath}, as the server's own are, so no symlink anywhere is followed
 * (symlinks are copied as symlinks) and nothing outside either root is reached, however the guest
 * arranged the folder. Only regular files, directories and symlinks are copied; anything else
 * (a FIFO the guest made) is left out.
 */
final class TreeCopy {
    /** What a fingerprint of nothing is. */
    static final String ABSENT = "absent";
    private static final int CHUNK = 64 * 1024;
    private static final ThreadLocal<ByteBuffer> DIRENTS = ThreadLocal.withInitial(() -> ByteBuffer.allocateDirect(64 * 1024));

    private TreeCopy() {
    }

    /** The stat of {@code path} itself, or null if there is nothing there. */
    static LinuxFs.Stat statOrNull(int root, String path) throws ErrnoException {
        int fd;
        try {
            fd = LinuxFs.openBeneath(root, path, LinuxFs.O_PATH | LinuxFs.O_NOFOLLOW, 0);
        } catch (ErrnoException e) {
            if (e.errno == ErrnoException.ENOENT || e.errno == ErrnoException.ENOTDIR) {
                return null;
            }
            throw e;
        }
        try {
            return FdCalls.stat(fd);
        } finally {
            LinuxFs.close(fd);
        }
    }

    /** How many directories above {@code path} under {@code root} are missing: what {@link #makeParents} makes. */
    static int missingParents(int root, String path) throws ErrnoException {
        int n = 0;
        for (String p = Fid.parent(path); !p.isEmpty() && statOrNull(root, p) == null; p = Fid.parent(p)) {
            n++;
        }
        return n;
    }

    /** Makes every directory above {@code path} under {@code root} that is missing (mode 0755). */
    static void makeParents(int root, String path) throws ErrnoException {
        String parent = Fid.parent(path);
        if (parent.isEmpty() || statOrNull(root, parent) != null) {
            return;
        }
        makeParents(root, parent);
        int d = LinuxFs.openBeneath(root, Fid.parent(parent), LinuxFs.O_PATH | LinuxFs.O_DIRECTORY, 0);
        try {
            NameCalls.mkdirAt(d, Fid.lastName(parent), 0755);
        } catch (ErrnoException e) {
            if (e.errno != ErrnoException.EEXIST) {
                throw e;
            }
        } finally {
            LinuxFs.close(d);
        }
    }

    /**
     * Copies {@code fromPath} under {@code from} to {@code toPath} under {@code to}, which must not
     * exist (its parent must): a file with its content and permission bits, a symlink as itself, a
     * directory with everything under it.
     *
     * @return whether anything was there to copy
     */
    static boolean copy(int from, String fromPath, int to, String toPath) throws ErrnoException {
        LinuxFs.Stat st = statOrNull(from, fromPath);
        if (st == null) {
            return false;
        }
        int toDir = LinuxFs.openBeneath(to, Fid.parent(toPath), LinuxFs.O_PATH | LinuxFs.O_DIRECTORY, 0);
        try {
            String name = Fid.lastName(toPath);
            if (st.isSymlink()) {
                int fromDir = LinuxFs.openBeneath(from, Fid.parent(fromPath), LinuxFs.O_PATH | LinuxFs.O_DIRECTORY, 0);
                try {
                    NameCalls.symlinkAt(NameCalls.readlinkAt(fromDir, Fid.lastName(fromPath)), toDir, name);
                } finally {
                    LinuxFs.close(fromDir);
                }
            } else if (st.isDir()) {
                NameCalls.mkdirAt(toDir, name, 0700);
                for (String child : names(from, fromPath)) {
                    copy(from, Fid.child(fromPath, child), to, Fid.child(toPath, child));
                }
                chmod(to, toPath, st.mode() & 07777);
            } else if (st.isRegular()) {
                copyFile(from, fromPath, to, toPath, st.mode() & 07777);
            } else {
                return false;
            }
        } finally {
            LinuxFs.close(toDir);
        }
        return true;
    }

    /**
     * Puts what {@code from} has at {@code path} (a file, a symlink, or a directory with everything under it) in
     * place of what {@code root} has there: copied next to its place under a temporary name (starting with
     * {@code tempPrefix}), synced, then renamed over it (where a directory is involved, swapped with it by
     * {@code RENAME_EXCHANGE} and the old version removed after), so the place holds the old version or the new
     * one, never a part, whenever the daemon dies. Missing parents are made. {@code from} must have something at
     * {@code path}.
     */
    static void replace(int from, int root, String path, String tempPrefix) throws ErrnoException {
        replace(from, root, path, tempPrefix, () -> { });
    }

    /** As {@link #replace(int, int, String, String)}, running {@code copied} between the copy and the rename. */
    static void replace(int from, int root, String path, String tempPrefix, Runnable copied) throws ErrnoException {
        String parent = Fid.parent(path);
        String name = Fid.lastName(path);
        LinuxFs.Stat next = statOrNull(from, path);
        LinuxFs.Stat there = statOrNull(root, path);
        makeParents(root, path);
        String temp = Fid.child(parent, tempPrefix + name + "-" + Long.toHexString(System.nanoTime()));
        copy(from, path, root, temp);
        copied.run();
        int d = LinuxFs.openBeneath(root, parent, LinuxFs.O_RDONLY | LinuxFs.O_DIRECTORY | LinuxFs.O_NOFOLLOW, 0);
        try {
            if (there != null && (there.isDir() || next.isDir())) {
                // a directory cannot be renamed over a file or a non-empty directory: swap them, in one step
                NameCalls.exchangeAt(d, Fid.lastName(temp), d, name);
                FdCalls.fsync(d, false);
                remove(root, temp); // now the old version
            } else {
                NameCalls.renameAt(d, Fid.lastName(temp), d, name);
                FdCalls.fsync(d, false);
            }
        } finally {
            LinuxFs.close(d);
        }
    }

    /**
     * Removes the copies a {@link #replace} of {@code path} that the daemon died in left beside its place: the
     * names it makes, {@code tempPrefix}, the last name, a dash and hex digits (a name kosa8 keeps for itself);
     * never the place, nor any other name.
     */
    static void removeLeftCopies(int root, String path, String tempPrefix) throws ErrnoException {
        String parent = Fid.parent(path);
        String prefix = tempPrefix + Fid.lastName(path) + "-";
        String at = parent.isEmpty() ? "." : parent;
        LinuxFs.Stat dir = statOrNull(root, at);
        if (dir == null || !dir.isDir()) {
            return;
        }
        for (String name : names(root, at)) {
            if (name.startsWith(prefix) && name.substring(prefix.length()).matches("[0-9a-f]{1,16}")) {
                remove(root, Fid.child(parent, name));
            }
        }
    }

    private static void copyFile(int from, String fromPath, int to, String toPath, int mode) throws ErrnoException {
        int in = LinuxFs.openBeneath(from, fromPath, LinuxFs.O_RDONLY | LinuxFs.O_NOFOLLOW | LinuxFs.O_NONBLOCK, 0);
        try {
            int out = LinuxFs.openBeneath(to, toPath, LinuxFs.O_WRONLY | LinuxFs.O_CREAT | LinuxFs.O_EXCL
                    | LinuxFs.O_NOFOLLOW, 0600);
            try {
                ByteBuffer buf = ByteBuffer.allocateDirect(CHUNK);
                long at = 0;
                while (true) {
                    buf.clear();
                    int n = FdCalls.pread(in, buf, at);
                    if (n <= 0) {
                        break;
                    }
                    buf.flip();
                    while (buf.hasRemaining()) {
                        at += FdCalls.pwrite(out, buf, at);
                    }
                }
                FdCalls.fsync(out, false);
                FdCalls.chmodFd(out, mode);
            } finally {
                LinuxFs.close(out);
            }
        } finally {
            LinuxFs.close(in);
        }
    }

    static void chmod(int root, String path, int mode) throws ErrnoException {
        int fd = LinuxFs.openBeneath(root, path, LinuxFs.O_PATH | LinuxFs.O_NOFOLLOW, 0);
        try {
            FdCalls.chmodFd(fd, mode);
        } finally {
            LinuxFs.close(fd);
        }
    }

    /** The names in directory {@code path}, sorted, without "." and "..". */
    static List<String> names(int root, String path) throws ErrnoException {
        int fd = LinuxFs.openBeneath(root, path, LinuxFs.O_RDONLY | LinuxFs.O_DIRECTORY | LinuxFs.O_NOFOLLOW, 0);
        List<String> out = new ArrayList<>();
        try {
            ByteBuffer raw = DIRENTS.get();
            while (true) {
                raw.clear();
                int n = FdCalls.getdents(fd, raw);
                if (n <= 0) {
                    break;
                }
                for (LinuxFs.DirEntry e : FdCalls.parseDirents(raw, n)) {
                    if (!e.name().equals(".") && !e.name().equals("..")) {
                        out.add(e.name());
                    }
                }
            }
        } finally {
            LinuxFs.close(fd);
        }
        out.sort(null);
        return out;
    }

    /** Removes {@code path} and everything under it; nothing there is no error. */
    static void remove(int root, String path) throws ErrnoException {
        LinuxFs.Stat st = statOrNull(root, path);
        if (st == null) {
            return;
        }
        if (st.isDir()) {
            for (String child : names(root, path)) {
                remove(root, Fid.child(path, child));
            }
        }
        int d = LinuxFs.openBeneath(root, Fid.parent(path), LinuxFs.O_PATH | LinuxFs.O_DIRECTORY, 0);
        try {
            NameCalls.unlinkAt(d, Fid.lastName(path), st.isDir() ? LinuxFs.AT_REMOVEDIR : 0);
        } finally {
            LinuxFs.close(d);
        }
    }

    /**
     * A SHA-256 of what is at {@code path}: every name under it, its type and permission bits, a
     * file's content and a symlink's target; {@link #ABSENT} for nothing. Two equal fingerprints
     * mean the same tree, whatever the times.
     */
    static String fingerprint(int root, String path) throws ErrnoException {
        LinuxFs.Stat st = statOrNull(root, path);
        if (st == null) {
            return ABSENT;
        }
        MessageDigest md;
        try {
            md = MessageDigest.getInstance("SHA-256");
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
        digest(md, root, path, "", st);
        return HexFormat.of().formatHex(md.digest());
    }

    private static void digest(MessageDigest md, int root, String path, String rel, LinuxFs.Stat st)
            throws ErrnoException {
        md.update((rel + "\0").getBytes(StandardCharsets.ISO_8859_1));
        if (st.isSymlink()) {
            md.update(("L" + readlink(root, path) + "\0").getBytes(StandardCharsets.ISO_8859_1));
        } else if (st.isDir()) {
            md.update(("D" + Integer.toOctalString(st.mode() & 07777) + "\0").getBytes(StandardCharsets.ISO_8859_1));
            for (String child : names(root, path)) {
                LinuxFs.Stat cs = statOrNull(root, Fid.child(path, child));
                if (cs != null) {
                    digest(md, root, Fid.child(path, child), rel + "/" + child, cs);
                }
            }
        } else if (st.isRegular()) {
            md.update(("F" + Integer.toOctalString(st.mode() & 07777) + " " + st.size() + "\0")
                    .getBytes(StandardCharsets.ISO_8859_1));
            int fd = LinuxFs.openBeneath(root, path, LinuxFs.O_RDONLY | LinuxFs.O_NOFOLLOW | LinuxFs.O_NONBLOCK, 0);
            try {
                ByteBuffer buf = ByteBuffer.allocateDirect(CHUNK);
                long at = 0;
                while (true) {
                    buf.clear();
                    int n = FdCalls.pread(fd, buf, at);
                    if (n <= 0) {
                        break;
                    }
                    buf.flip();
                    md.update(buf);
                    at += n;
                }
            } finally {
                LinuxFs.close(fd);
            }
        } else {
            md.update(("O" + Integer.toOctalString(st.mode())).getBytes(StandardCharsets.ISO_8859_1));
        }
    }

    static String readlink(int root, String path) throws ErrnoException {
        int fd = LinuxFs.openBeneath(root, path, LinuxFs.O_PATH | LinuxFs.O_NOFOLLOW, 0);
        try {
            return NameCalls.readlinkAt(fd, "");
        } finally {
            LinuxFs.close(fd);
        }
    }

    /** Up to {@code limit} bytes of regular file {@code path}, or null if it is none. */
    static byte[] read(int root, String path, int limit) throws ErrnoException {
        LinuxFs.Stat st = statOrNull(root, path);
        if (st == null || !st.isRegular()) {
            return null;
        }
        int fd = LinuxFs.openBeneath(root, path, LinuxFs.O_RDONLY | LinuxFs.O_NOFOLLOW | LinuxFs.O_NONBLOCK, 0);
        try {
            ByteBuffer buf = ByteBuffer.allocateDirect((int) Math.min(limit, Math.max(st.size(), 0)));
            while (buf.hasRemaining()) {
                if (FdCalls.pread(fd, buf, buf.position()) <= 0) {
                    break;
                }
            }
            buf.flip();
            byte[] out = new byte[buf.remaining()];
            buf.get(out);
            return out;
        } finally {
            LinuxFs.close(fd);
        }
    }
}
