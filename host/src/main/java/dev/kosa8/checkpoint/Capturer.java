package dev.kosa8.checkpoint;

import static dev.kosa8.checkpoint.Posix.O_DIRECTORY;
import static dev.kosa8.checkpoint.Posix.O_PATH;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HexFormat;
import java.util.List;

/**
 * One capture: walks the folder and stores the content of every file not
 * already known by its identity ({@link KnownContent}). Used once.
 *
 * <p>The walk goes by directory descriptor and single names ({@link Posix}),
 * in byte order of names, so the manifest lists each directory before its
 * contents. A file is read once: up to {@link #BUFFER} bytes into memory, then
 * hashed and written as an object only if no object has that hash yet; a
 * larger file streams into a temporary object while it is hashed. The objects
 * this capture added are remembered so a failed capture can take them back.
 */
final class Capturer {
    static final int BUFFER = 1 << 20;
    /** A path from the guest is at most PATH_MAX (4096) bytes, so at most 2048 directories deep. */
    static final int MAX_DEPTH = 2048;

    private final ObjectStore objects;
    private final KnownContent known;
    private final Hooks hooks;
    private final ByteBuffer buf = ByteBuffer.allocateDirect(BUFFER);
    private final MessageDigest sha;
    private final List<Entry> entries = new ArrayList<>();
    private final List<String> added = new ArrayList<>();
    private final Clones clones = new Clones();
    int filesRead;
    /** Of the files read, those stored as clones ({@link Clones}): no bytes written for them. */
    int filesCloned;
    long bytesRead;
    long bytesTotal;

    Capturer(ObjectStore objects, KnownContent known, Hooks hooks) {
        this.objects = objects;
        this.known = known;
        this.hooks = hooks;
        try {
            sha = MessageDigest.getInstance("SHA-256");
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("every JDK has SHA-256", e);
        }
    }

    /** Captures the folder at {@code folderPath} (a byte string, absolute). */
    Manifest capture(String id, String folderPath, Instant capturedAt) throws IOException {
        int rootPath = Posix.open(folderPath, O_PATH | O_DIRECTORY);
        try {
            Posix.Stat st = Posix.stat(rootPath);
            entries.add(Entry.dir("", st));
            Access.Opened root = Access.reopenDir(rootPath);
            try {
                walk(root.fd(), "", 1);
                if (root.modeToRestore() >= 0) {
                    Posix.fchmod(root.fd(), root.modeToRestore());
                }
            } finally {
                Posix.close(root.fd());
            }
        } finally {
            Posix.close(rootPath);
        }
        return new Manifest(id, capturedAt, entries);
    }

    /** The objects this capture stored that were not there before. */
    List<String> added() {
        return added;
    }

    int entryCount() {
        return entries.size() - 1;
    }

    private void walk(int dirFd, String dirPath, int depth) throws IOException {
        if (depth > MAX_DEPTH) {
            throw new IOException("the folder nests deeper than " + MAX_DEPTH + " directories at "
                    + ByteNames.display(dirPath));
        }
        List<String> names = Posix.list(dirFd);
        Collections.sort(names);
        for (String name : names) {
            String path = ByteNames.join(dirPath, name);
            try {
                Posix.Stat st = Posix.statAtOrNull(dirFd, name);
                if (st == null) {
                    continue; // removed since the listing; only the host's user could have
                }
                switch (st.type()) {
                    case Posix.S_IFDIR -> {
                        entries.add(Entry.dir(path, st));
                        Access.Opened d = Access.openDir(dirFd, name);
                        try {
                            walk(d.fd(), path, depth + 1);
                            if (d.modeToRestore() >= 0) {
                                Posix.fchmod(d.fd(), d.modeToRestore());
                            }
                        } finally {
                            Posix.close(d.fd());
                        }
                    }
                    case Posix.S_IFREG -> entries.add(file(dirFd, name, path, st));
                    case Posix.S_IFLNK -> entries.add(Entry.symlink(path, st, Posix.readlinkAt(dirFd, name)));
                    case Posix.S_IFIFO -> entries.add(Entry.fifo(path, st));
                    default -> {
                        // sockets and device nodes are not kept (see Kind)
                    }
                }
            } catch (EntryException e) {
                throw e;
            } catch (IOException e) {
                throw new EntryException(path, e);
            }
        }
    }

    private Entry file(int dirFd, String name, String path, Posix.Stat st) throws IOException {
        bytesTotal += st.size();
        String hash = known.hashOf(st);
        if (hash != null && objects.has(hash)) {
            return Entry.file(path, st, hash);
        }
        hooks.reading(path);
        Access.Opened f = Access.openFile(dirFd, name);
        try {
            Posix.Stat before = Posix.stat(f.fd());
            if (!before.isRegular() || before.ino() != st.ino() || before.dev() != st.dev()) {
                throw changed(path);
            }
            if (st.size() > 0 && !clones.unsupported()) {
                Entry cloned = cloned(f, path, before);
                if (cloned != null) {
                    return cloned;
                }
            }
            Path tmp = null;
            try {
                sha.reset();
                buf.clear();
                long total = 0;
                FileChannel spill = null;
                try {
                    int n;
                    while ((n = Posix.read(f.fd(), buf)) > 0) {
                        total += n;
                        if (!buf.hasRemaining()) {
                            if (spill == null) {
                                ObjectStore.Temporary t = objects.newTemporary();
                                tmp = t.path();
                                spill = t.channel();
                            }
                            drain(spill);
                        }
                    }
                    if (spill != null) {
                        drain(spill);
                    }
                } finally {
                    if (spill != null) {
                        spill.close();
                    }
                }
                Posix.Stat after = checkUnchanged(f, path, before, total);
                if (tmp == null) {
                    buf.flip();
                    sha.update(buf.duplicate());
                }
                hash = HexFormat.of().formatHex(sha.digest());
                if (tmp == null && !objects.has(hash)) {
                    tmp = objects.writeTemporary(buf);
                }
                if (tmp != null) {
                    boolean fresh = objects.commit(tmp, hash);
                    tmp = null;
                    if (fresh) {
                        added.add(hash);
                        hooks.at("object-stored");
                    }
                }
                filesRead++;
                bytesRead += total;
                return Entry.file(path, after, hash);
            } finally {
                if (tmp != null) {
                    Files.deleteIfExists(tmp);
                }
            }
        } finally {
            Posix.close(f.fd());
        }
    }

    /**
     * The object made as a clone of the open file ({@link Clones}): no bytes written, the clone read once for
     * its hash, so the object's name is its content's by construction, and the file checked unchanged from
     * before the clone to after the read. Null where the file system cannot clone; then nothing is left.
     */
    private Entry cloned(Access.Opened f, String path, Posix.Stat before) throws IOException {
        Path tmp = objects.temporaryPath();
        if (!clones.cloneFile(f.fd(), tmp)) {
            return null;
        }
        try {
            sha.reset();
            long total;
            int in = Posix.open(ByteNames.fromHostPath(tmp), Posix.O_RDONLY);
            try {
                total = Digests.readAll(in, buf, sha, null);
            } finally {
                Posix.close(in);
            }
            Posix.Stat after = checkUnchanged(f, path, before, total);
            String hash = HexFormat.of().formatHex(sha.digest());
            boolean fresh = objects.commit(tmp, hash); // renamed into place, or deleted as a duplicate
            tmp = null;
            if (fresh) {
                added.add(hash);
                hooks.at("object-stored");
            }
            filesRead++;
            filesCloned++;
            bytesRead += total;
            return Entry.file(path, after, hash);
        } finally {
            if (tmp != null) {
                Files.deleteIfExists(tmp);
            }
        }
    }

    /** The file's stat after it was read, which must be its stat before (but for a chmod of ours). */
    private static Posix.Stat checkUnchanged(Access.Opened f, String path, Posix.Stat before, long bytesRead)
            throws IOException {
        Posix.Stat after = Posix.stat(f.fd());
        if (after.size() != bytesRead || after.mtimeSec() != before.mtimeSec()
                || after.mtimeNsec() != before.mtimeNsec() || after.size() != before.size()
                || !f.touched() && (after.ctimeSec() != before.ctimeSec()
                        || after.ctimeNsec() != before.ctimeNsec())) {
            throw changed(path);
        }
        return after;
    }

    /** Hashes and writes out what the buffer holds, and empties it. */
    private void drain(FileChannel out) throws IOException {
        buf.flip();
        sha.update(buf.duplicate());
        while (buf.hasRemaining()) {
            out.write(buf);
        }
        buf.clear();
    }

    private static IOException changed(String path) {
        return new IOException(ByteNames.display(path) + " changed while the checkpoint was being taken");
    }

    /** An IOException about one entry of the folder, named in the message once. */
    static final class EntryException extends IOException {
        EntryException(String path, IOException cause) {
            super(ByteNames.display(path) + ": " + cause.getMessage(), cause);
        }
    }
}
