package dev.kosa8.checkpoint;

import static dev.kosa8.checkpoint.Posix.EEXIST;
import static dev.kosa8.checkpoint.Posix.O_CREAT;
import static dev.kosa8.checkpoint.Posix.O_DIRECTORY;
import static dev.kosa8.checkpoint.Posix.O_EXCL;
import static dev.kosa8.checkpoint.Posix.O_NOFOLLOW;
import static dev.kosa8.checkpoint.Posix.O_PATH;
import static dev.kosa8.checkpoint.Posix.O_RDONLY;
import static dev.kosa8.checkpoint.Posix.O_WRONLY;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.security.SecureRandom;
import java.util.HashSet;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * One restore: makes the folder what a manifest says, touching only what
 * differs. Used once.
 *
 * <p>Never outside the folder: each directory is entered by descriptor with
 * {@code O_DIRECTORY | O_NOFOLLOW} (only a real directory opens), and every
 * change is a *at call on one name in a directory so entered: unlink and
 * rename act on a symlink itself, mode and times are set on a descriptor or
 * with {@code AT_SYMLINK_NOFOLLOW}. A symlink where the snapshot has a
 * directory (a guest may have swapped one in, pointing at /etc) is removed
 * and a real directory made. A file is written under a temporary name in its
 * directory and renamed over the old entry, so an inode shared with another
 * name (a hard link) is never written, and a damaged object is found before
 * the old file is gone. Modes and times are changed in place only on an inode
 * with one link, for the same reason.
 *
 * <p>In each directory: what the snapshot does not have is removed (whole
 * subtrees, never following a symlink), then each entry is put back, then the
 * directory's own mode and mtime are set, after its contents changed. A
 * directory its owner cannot write (0555) is made writable while it is
 * worked in.
 */
final class Restorer {
    private static final String TEMP_PREFIX = ".kosa8-restore-";

    private final ObjectStore objects;
    private final KnownContent known;
    private final ByteBuffer buf = ByteBuffer.allocateDirect(Capturer.BUFFER);
    private final MessageDigest sha;
    private final SecureRandom random = new SecureRandom();
    private Map<String, List<Entry>> children = Map.of();
    private final Clones clones = new Clones();
    int filesWritten;
    int filesCloned;
    int entriesRemoved;

    Restorer(ObjectStore objects, KnownContent known) {
        this.objects = objects;
        this.known = known;
        try {
            sha = MessageDigest.getInstance("SHA-256");
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("every JDK has SHA-256", e);
        }
    }

    /**
     * Restores {@code m} into the folder at {@code folderPath} (a byte string, absolute), which must exist;
     * {@code children} is {@code m}'s entries by directory ({@link ManifestIndex}).
     */
    void restore(Manifest m, Map<String, List<Entry>> children, String folderPath) throws IOException {
        this.children = children;
        int rootPath = Posix.open(folderPath, O_PATH | O_DIRECTORY);
        try {
            Access.Opened root = Access.reopenDir(rootPath);
            try {
                restoreDir(root.fd(), m.root());
            } finally {
                Posix.close(root.fd());
            }
        } finally {
            Posix.close(rootPath);
        }
    }

    private void restoreDir(int fd, Entry dir) throws IOException {
        Posix.Stat now = Posix.stat(fd);
        if ((now.permissions() & 0700) != 0700) {
            Posix.fchmod(fd, now.permissions() | 0700);
        }
        List<Entry> wanted = children.getOrDefault(dir.path(), List.of());
        Set<String> names = new HashSet<>();
        for (Entry e : wanted) {
            names.add(e.name());
        }
        for (String name : Posix.list(fd)) {
            if (!names.contains(name)) {
                String path = ByteNames.join(dir.path(), name);
                try {
                    Posix.Stat st = Posix.statAtOrNull(fd, name);
                    if (st != null) {
                        remove(fd, name, st);
                    }
                } catch (Capturer.EntryException e) {
                    throw e;
                } catch (IOException e) {
                    throw new Capturer.EntryException(path, e);
                }
            }
        }
        for (Entry e : wanted) {
            try {
                restoreEntry(fd, e, names);
            } catch (Capturer.EntryException x) {
                throw x;
            } catch (IOException x) {
                throw new Capturer.EntryException(e.path(), x);
            }
        }
        Posix.Stat end = Posix.stat(fd);
        if (end.permissions() != dir.mode()) {
            Posix.fchmod(fd, dir.mode());
        }
        if (!dir.sameMtime(end)) {
            Posix.futimens(fd, dir.mtimeSec(), dir.mtimeNsec());
        }
    }

    private void restoreEntry(int dirFd, Entry e, Set<String> siblings) throws IOException {
        String name = e.name();
        Posix.Stat cur = Posix.statAtOrNull(dirFd, name);
        switch (e.kind()) {
            case DIR -> {
                if (cur != null && !cur.isDir()) {
                    remove(dirFd, name, cur);
                    cur = null;
                }
                if (cur == null) {
                    Posix.mkdirAt(dirFd, name, 0700);
                    filesWritten++;
                }
                Access.Opened d = Access.openDir(dirFd, name);
                try {
                    restoreDir(d.fd(), e);
                } finally {
                    Posix.close(d.fd());
                }
            }
            case FILE -> restoreFile(dirFd, e, cur, siblings);
            case SYMLINK -> {
                if (cur != null && cur.isSymlink() && Posix.readlinkAt(dirFd, name).equals(e.target())) {
                    if (!e.sameMtime(cur)) {
                        Posix.setMtimeAt(dirFd, name, e.mtimeSec(), e.mtimeNsec());
                    }
                    return;
                }
                if (cur != null) {
                    remove(dirFd, name, cur);
                }
                Posix.symlinkAt(e.target(), dirFd, name);
                Posix.setMtimeAt(dirFd, name, e.mtimeSec(), e.mtimeNsec());
                filesWritten++;
            }
            case FIFO -> {
                if (cur != null && cur.isFifo() && cur.nlink() == 1) {
                    fixInPlace(dirFd, e, cur);
                    return;
                }
                if (cur != null) {
                    remove(dirFd, name, cur);
                }
                Posix.mkfifoAt(dirFd, name, 0600);
                fixInPlace(dirFd, e, Posix.statAt(dirFd, name));
                filesWritten++;
            }
        }
    }

    private void restoreFile(int dirFd, Entry e, Posix.Stat cur, Set<String> siblings) throws IOException {
        if (cur != null && cur.isRegular() && e.sha256().equals(known.hashOf(cur))
                && (cur.nlink() == 1 || cur.permissions() == e.mode() && e.sameMtime(cur))) {
            fixInPlace(dirFd, e, cur);
            return;
        }
        String tmp = temporaryName(siblings);
        int fd;
        while (true) {
            try {
                fd = Posix.openAt(dirFd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, 0600);
                break;
            } catch (PosixException x) {
                if (x.errno != EEXIST) {
                    throw x;
                }
                tmp = temporaryName(siblings);
            }
        }
        boolean renamed = false;
        try {
            try {
                copyObject(e, fd);
                Posix.fchmod(fd, e.mode()); // after writing: a write clears setuid and setgid
                Posix.futimens(fd, e.mtimeSec(), e.mtimeNsec());
            } finally {
                Posix.close(fd);
            }
            if (cur != null && cur.isDir()) {
                remove(dirFd, e.name(), cur);
            }
            Posix.renameAt(dirFd, tmp, dirFd, e.name());
            renamed = true;
            filesWritten++;
        } finally {
            if (!renamed) {
                try {
                    Posix.unlinkAt(dirFd, tmp, 0);
                } catch (PosixException ignored) {
                    // the first failure is the one to report
                }
            }
        }
    }

    /** Sets mode and mtime of a file or FIFO that already has the right content, only where they differ. */
    private void fixInPlace(int dirFd, Entry e, Posix.Stat cur) throws IOException {
        if (cur.permissions() != e.mode()) {
            int p = Posix.openAt(dirFd, e.name(), O_PATH | O_NOFOLLOW, 0);
            try {
                Posix.Stat st = Posix.stat(p);
                if (st.ino() != cur.ino() || st.isSymlink()) {
                    throw new IOException("changed while the checkpoint was being restored");
                }
                Posix.chmodPathFd(p, e.mode());
            } finally {
                Posix.close(p);
            }
        }
        if (!e.sameMtime(cur)) {
            Posix.setMtimeAt(dirFd, e.name(), e.mtimeSec(), e.mtimeNsec());
        }
    }

    /**
     * Writes the object {@code e} names to {@code fd}, checking its hash and size on the way: a clone of it
     * where the file system can ({@link Clones}; then the file made is read back for the check), else a copy.
     */
    private void copyObject(Entry e, int fd) throws IOException {
        sha.reset();
        long total;
        int in;
        try {
            in = Posix.open(ByteNames.fromHostPath(objects.path(e.sha256()).toAbsolutePath()), O_RDONLY);
        } catch (PosixException x) {
            throw x.errno == Posix.ENOENT
                    ? new IOException("the snapshot's object " + e.sha256() + " is missing", x) : x;
        }
        boolean cloned;
        try {
            cloned = e.size() > 0 && clones.cloneInto(fd, in);
        } catch (IOException x) {
            Posix.close(in);
            throw x;
        }
        if (cloned) {
            // the file made, read back through a descriptor of its own: what it holds is what is checked
            filesCloned++;
            Posix.close(in);
            in = Posix.reopen(fd, O_RDONLY);
        }
        try {
            total = Digests.readAll(in, buf, sha, cloned ? null : chunk -> Posix.writeFully(fd, chunk));
        } finally {
            Posix.close(in);
        }
        if (total != e.size() || !HexFormat.of().formatHex(sha.digest()).equals(e.sha256())) {
            throw new IOException("the snapshot's object " + e.sha256() + " is damaged");
        }
    }

    /** Removes one entry, a directory with all it holds; a symlink itself, never what it points to. */
    private void remove(int dirFd, String name, Posix.Stat st) throws IOException {
        entriesRemoved += TreeRemoval.remove(dirFd, name, st);
    }

    private String temporaryName(Set<String> siblings) {
        String name;
        do {
            byte[] b = new byte[8];
            random.nextBytes(b);
            name = TEMP_PREFIX + HexFormat.of().formatHex(b);
        } while (siblings.contains(name));
        return name;
    }
}
