package dev.kosa8.checkpoint;

import static dev.kosa8.checkpoint.Posix.O_DIRECTORY;
import static dev.kosa8.checkpoint.Posix.O_RDONLY;

import dev.kosa8.host.AtomicFile;
import dev.kosa8.host.UnifiedDiff;
import dev.kosa8.host.KosaException;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.regex.Pattern;

/**
 * Snapshots of a sandbox's workspace folder, for checkpoints: content-addressed
 * (each distinct content stored once, {@code objects/ab/cdef…} by SHA-256),
 * incremental (a file whose stat identity is unchanged since the last capture
 * or restore is neither read nor stored again), and crash-safe (objects first,
 * then the manifest under a temporary name, synced, renamed: {@link AtomicFile}). See
 * docs/checkpoints.md, "Workspace snapshots", for the format and the limits.
 *
 * <p>Layout of the store: {@code objects/}, {@code manifests/ID.json}, and
 * {@code head}, which names the snapshot the folder was last captured as or
 * restored to (a hint for speed: whose file identities to trust; losing it
 * costs reading, never correctness).
 *
 * <p>Capture and restore require the guest stopped and the 9P server paused,
 * so the folder holds still. One instance per store; its methods are
 * synchronized.
 */
public final class FolderSnapshots {
    private static final Pattern ID = Pattern.compile("[A-Za-z0-9][A-Za-z0-9._-]{0,63}");
    private static final String SUFFIX = ".json";
    /** How temporary manifests start: {@link AtomicFile}'s, and those of earlier kosa8 versions. */
    private static final String TEMP_PREFIX = ".tmp-";

    private final Path store;
    private final Path manifests;
    private final ObjectStore objects;
    private final Clock clock;
    private final Hooks hooks;

    /** @param store a directory of the sandbox's, e.g. {@code <sandbox>/checkpoints/workspace}; created on need */
    public FolderSnapshots(Path store) {
        this(store, Clock.systemUTC(), Hooks.NONE);
    }

    /** For tests: a clock to date captures by, and hooks to watch reads and inject failures. */
    FolderSnapshots(Path store, Clock clock, Hooks hooks) {
        this.store = store.toAbsolutePath();
        this.manifests = this.store.resolve("manifests");
        this.objects = new ObjectStore(this.store.resolve("objects"));
        this.clock = clock;
        this.hooks = hooks;
    }

    /**
     * Captures {@code folder} as snapshot {@code id}. Called with the guest stopped and the 9P server paused, so
     * nothing changes meanwhile. On failure (a full disk, say) nothing of this capture is left: no manifest,
     * no new object, no temporary file; earlier snapshots are untouched.
     */
    public synchronized Capture capture(Path folder, String id) throws IOException {
        return commit(scan(folder, id));
    }

    /**
     * A capture in two halves, for a checkpoint's pause: the walk and the copies of changed files happen
     * while nothing may change the folder; making them durable and naming them (syncfs, the manifest's write,
     * fsync, rename) can wait until the guest runs again. Until {@link #commit} the snapshot does not exist;
     * {@link #abandon} takes back what the walk wrote.
     */
    public static final class Pending {
        private final String id;
        private final Manifest manifest;
        private final Capturer capturer;
        private final long started;

        private Pending(String id, Manifest manifest, Capturer capturer, long started) {
            this.id = id;
            this.manifest = manifest;
            this.capturer = capturer;
            this.started = started;
        }

        public String id() {
            return id;
        }

        Manifest manifest() {
            return manifest;
        }

        /** Everything in the snapshot, the folder itself not counted. */
        public int entries() {
            return capturer.entryCount();
        }

        /** The size of the files the walk read and stored. */
        public long bytesCopied() {
            return capturer.bytesRead;
        }
    }

    /** The first half of {@link #capture}: same precondition; nothing is named or durable yet. */
    public synchronized Pending scan(Path folder, String id) throws IOException {
        long t0 = System.nanoTime();
        checkId(id);
        String folderBytes = folderBytes(folder);
        refuseExisting(id);
        checkApart(folder);
        Files.createDirectories(manifests);
        Files.createDirectories(objects.dir());
        Instant capturedAt = clock.instant();
        KnownContent known = new KnownContent();
        Manifest head = headManifest();
        if (head != null) {
            known.add(ManifestCache.index(manifest(head.id()), head));
        }
        Capturer capturer = new Capturer(objects, known, hooks);
        try {
            return new Pending(id, capturer.capture(id, folderBytes, capturedAt), capturer, t0);
        } catch (IOException | RuntimeException e) {
            discard(capturer.added(), e);
            throw e;
        }
    }

    /** The second half of {@link #capture}: makes the scan's objects durable and commits its manifest. */
    public synchronized Capture commit(Pending p) throws IOException {
        try {
            byte[] json = ManifestCodec.write(p.manifest);
            if (namesObjects(p.manifest)) {
                syncStore(); // every object durable before a manifest can name it
            } // else none to make durable: a syncfs of the whole file system for nothing (the held layer, mostly
            // empty, was captured this way in every checkpoint's pause)
            AtomicFile.write(manifest(p.id), out -> {
                out.write(json);
                out.flush();
                hooks.at("manifest-written");
            });
        } catch (IOException | RuntimeException e) {
            // scan refused an existing manifest of this id: one there now is this one, renamed in place before
            // its directory's sync failed; take it back so it is not half there
            try {
                Files.deleteIfExists(manifest(p.id));
            } catch (IOException again) {
                e.addSuppressed(again);
            }
            discard(p.capturer.added(), e);
            throw e;
        }
        try {
            // the next capture's head, and a rewind's, without decoding it again
            ManifestCache.put(manifest(p.id), ManifestCache.key(manifest(p.id)), p.manifest);
        } catch (IOException e) {
            // not held: it is decoded when next needed
        }
        writeHead(p.id);
        Capturer c = p.capturer;
        return new Capture(p.id, c.entryCount(), c.filesRead, c.bytesRead, c.filesCloned, c.bytesTotal,
                Duration.ofNanos(System.nanoTime() - p.started));
    }

    /**
     * Makes snapshot {@code otherId} of another store this store's snapshot {@code asId}, its objects hard-linked
     * (copied where a link cannot be made: another file system): a fork's folder as it starts is its parent's
     * checkpoint, so the fork keeps it without reading the folder or storing its content twice. Objects are never
     * written after they are stored, so the two stores sharing them share nothing that changes. The head is not
     * moved: the other store's file identities are not this folder's. On failure nothing of it is left.
     */
    public synchronized void linkFrom(FolderSnapshots other, String otherId, String asId) throws IOException {
        checkId(asId);
        refuseExisting(asId);
        Manifest m = other.load(otherId);
        Files.createDirectories(manifests);
        List<Path> added = new ArrayList<>();
        try {
            for (String hash : ManifestCache.index(other.manifest(otherId), m).objects) {
                if (objects.has(hash)) {
                    continue;
                }
                Path to = objects.path(hash);
                Files.createDirectories(to.getParent());
                try {
                    Files.createLink(to, other.objects.path(hash));
                } catch (IOException | UnsupportedOperationException e) {
                    Files.copy(other.objects.path(hash), to);
                }
                added.add(to);
            }
            byte[] json = ManifestCodec.write(new Manifest(asId, m.capturedAt(), m.entries()));
            syncStore();
            AtomicFile.write(manifest(asId), out -> out.write(json));
        } catch (IOException | RuntimeException e) {
            for (Path a : added) {
                try {
                    Files.deleteIfExists(a);
                } catch (IOException again) {
                    e.addSuppressed(again);
                }
            }
            throw e;
        }
    }

    /**
     * The reserved id of the folder as its sandbox started: {@code kosa8 diff}'s default instant. Never a
     * checkpoint's id (those start with {@code c} and a date), so no sweep of unfinished checkpoints removes it.
     */
    public static final String START = "start";

    /**
     * How {@code folder} differs now from snapshot {@code id}, path by path ({@link FolderDiff}), with unified
     * diffs of text files. The folder may be in use: a file that changes while it is read makes the walk start
     * again, three times at most. Leaves nothing behind: the copies the walk made to read changed files are
     * taken back. The caller keeps checkpoints of this store from running meanwhile (the sandbox's lock).
     */
    public synchronized List<FolderChange> diff(String id, Path folder) throws IOException {
        return SnapshotComparison.compare(this, id, folder, this::change);
    }

    /**
     * As {@link #diff}, without the text: each path that differs, with its name as bytes (for applying the change
     * elsewhere: {@code kosa8 adopt}, {@link AdoptPlan}) and for display.
     */
    public synchronized List<FolderEdit> edits(String id, Path folder) throws IOException {
        return SnapshotComparison.compare(this, id, folder, p -> new FolderEdit(p.path(), ByteNames.display(p.path()),
                p.change(), FolderChange.Side.of(p.before()), FolderChange.Side.of(p.after())));
    }

    private FolderChange change(FolderDiff.Pair p) throws IOException {
        String path = ByteNames.display(p.path());
        FolderChange.Side b = FolderChange.Side.of(p.before());
        FolderChange.Side a = FolderChange.Side.of(p.after());
        boolean contents = p.change() == FolderChange.Change.MODIFIED
                || (p.change() == FolderChange.Change.ADDED && p.after().kind() == Kind.FILE)
                || (p.change() == FolderChange.Change.DELETED && p.before().kind() == Kind.FILE);
        if (contents && small(p.before()) && small(p.after())) {
            UnifiedDiff.Hunks h = UnifiedDiff.of(content(p.before()), content(p.after()));
            if (h != null) {
                String header = "--- " + (b == null ? "/dev/null" : "a/" + path) + "\n+++ "
                        + (a == null ? "/dev/null" : "b/" + path) + "\n";
                return new FolderChange(path, p.change(), b, a, header + h.text(), h.added(), h.removed());
            }
        }
        return new FolderChange(path, p.change(), b, a, null, -1, -1);
    }

    private static boolean small(Entry e) {
        return e == null || e.kind() != Kind.FILE || e.size() <= UnifiedDiff.MAX_BYTES;
    }

    /** A file's bytes from the store; null for an absent one or anything but a file. */
    private byte[] content(Entry e) throws IOException {
        return e == null || e.kind() != Kind.FILE ? null : Files.readAllBytes(objects.path(e.sha256()));
    }

    private void refuseExisting(String id) {
        if (Files.exists(manifest(id), LinkOption.NOFOLLOW_LINKS)) {
            throw new KosaException(KosaException.Kind.STATE, "a workspace snapshot named " + id
                    + " already exists", "delete it first or choose another name");
        }
    }

    /** Takes back what an uncommitted scan wrote. */
    public synchronized void abandon(Pending p) {
        discard(p.capturer.added(), new IOException("abandoned"));
    }

    /**
     * Makes {@code folder} exactly what snapshot {@code id} holds, touching only what differs. Same
     * precondition as {@link #capture}. The folder itself is kept (its mode and mtime are set), never
     * recreated. If this fails halfway the folder is part old, part restored; restoring again finishes it.
     */
    public synchronized Restore restore(String id, Path folder) throws IOException {
        return restore(id, folder, true);
    }

    /**
     * Makes another folder, empty or not, what snapshot {@code id} holds (a fork's own copy of the
     * workspace). {@code head} is left alone: it speaks of the folder this store snapshots.
     */
    public synchronized Restore copyTo(String id, Path folder) throws IOException {
        return restore(id, folder, false);
    }

    private Restore restore(String id, Path folder, boolean moveHead) throws IOException {
        long t0 = System.nanoTime();
        checkId(id);
        String folderBytes = folderBytes(folder);
        Manifest m = load(id);
        ManifestIndex index = ManifestCache.index(manifest(id), m);
        checkApart(folder);
        if (!index.objectsPresent) {
            for (String hash : index.objects) {
                if (!objects.has(hash)) {
                    throw new IOException("workspace snapshot " + id + " is damaged: its object " + hash
                            + " is missing; nothing was changed");
                }
            }
            index.objectsPresent = true;
        }
        KnownContent known = new KnownContent().add(index);
        Manifest head = headManifest();
        if (head != null && !head.id().equals(id)) {
            known.add(ManifestCache.index(manifest(head.id()), head));
        }
        Restorer restorer = new Restorer(objects, known);
        restorer.restore(m, index.children, folderBytes);
        if (moveHead) {
            writeHead(id);
        }
        return new Restore(id, restorer.filesWritten, restorer.filesCloned, restorer.entriesRemoved,
                Duration.ofNanos(System.nanoTime() - t0));
    }

    /** Deletes snapshot {@code id}, then every object no remaining snapshot needs. */
    public synchronized void delete(String id) throws IOException {
        checkId(id);
        if (!Files.deleteIfExists(manifest(id))) {
            throw unknown(id);
        }
        ManifestCache.forget(manifest(id));
        fsyncDirectory(manifests);
        if (id.equals(readHead())) {
            Files.deleteIfExists(store.resolve("head"));
        }
        collectGarbage();
    }

    /**
     * Deletes the objects no snapshot needs and the temporary files of interrupted captures. {@link #delete}
     * runs it; worth running once after a daemon crash, too.
     */
    public synchronized void collectGarbage() throws IOException {
        Set<String> needed = new HashSet<>();
        for (String id : ids()) {
            needed.addAll(load(id).objects());
        }
        for (String hash : objects.all()) {
            if (!needed.contains(hash)) {
                objects.delete(hash);
            }
        }
        objects.removeTemporaries();
        if (Files.isDirectory(manifests)) {
            try (DirectoryStream<Path> s = Files.newDirectoryStream(manifests, TEMP_PREFIX + "*")) {
                for (Path p : s) {
                    Files.deleteIfExists(p);
                }
            }
        }
    }

    /** The snapshots, by name. */
    public synchronized List<String> ids() throws IOException {
        List<String> out = new ArrayList<>();
        if (!Files.isDirectory(manifests)) {
            return out;
        }
        try (DirectoryStream<Path> s = Files.newDirectoryStream(manifests, "*" + SUFFIX)) {
            for (Path p : s) {
                String name = p.getFileName().toString();
                String id = name.substring(0, name.length() - SUFFIX.length());
                if (ID.matcher(id).matches()) {
                    out.add(id);
                }
            }
        }
        out.sort(null);
        return out;
    }

    /** The space the store takes: every object and manifest, in allocated blocks (as du counts). */
    public synchronized long bytesOnDisk() throws IOException {
        long total = 0;
        for (String hash : objects.all()) {
            total += FileSpace.allocated(objects.path(hash));
        }
        for (String id : ids()) {
            total += FileSpace.allocated(manifest(id));
        }
        return total;
    }

    /**
     * What deleting snapshot {@code id} would free: its manifest and the objects no other snapshot needs, in
     * allocated blocks.
     */
    public synchronized long bytesOnlyIn(String id) throws IOException {
        checkId(id);
        Set<String> mine = load(id).objects();
        for (String other : ids()) {
            if (!other.equals(id)) {
                mine.removeAll(load(other).objects());
            }
        }
        long total = FileSpace.allocated(manifest(id));
        for (String hash : mine) {
            total += FileSpace.allocated(objects.path(hash));
        }
        return total;
    }

    // ---- the store's files

    private Path manifest(String id) {
        return manifests.resolve(id + SUFFIX);
    }

    Manifest load(String id) throws IOException {
        Path file = manifest(id);
        ManifestCache.FileKey key;
        byte[] bytes;
        try {
            key = ManifestCache.key(file);
            Manifest held = ManifestCache.get(file, key);
            if (held != null) {
                return held;
            }
            bytes = Files.readAllBytes(file);
        } catch (NoSuchFileException e) {
            throw unknown(id);
        }
        try {
            Manifest m = ManifestCodec.read(bytes);
            if (!m.id().equals(id)) {
                throw new IOException("it names itself " + m.id());
            }
            if (key.equals(ManifestCache.key(file))) { // not replaced while it was read
                ManifestCache.put(file, key, m);
            }
            return m;
        } catch (IOException e) {
            throw new IOException("workspace snapshot " + id + " cannot be read: " + e.getMessage(), e);
        }
    }

    /** The manifest named by {@code head}, or null if there is none or it cannot be read (it is only a hint). */
    private Manifest headManifest() {
        String id = readHead();
        if (id == null) {
            return null;
        }
        try {
            return load(id);
        } catch (IOException | KosaException e) {
            return null;
        }
    }

    private String readHead() {
        try {
            String id = Files.readString(store.resolve("head"), StandardCharsets.US_ASCII).strip();
            return ID.matcher(id).matches() ? id : null;
        } catch (IOException e) {
            return null;
        }
    }

    /**
     * Records which snapshot the folder now is. A hint for the next capture or restore; if it cannot be written
     * the snapshot is still complete, and the next capture merely reads more, so a failure here is not one of
     * the capture or restore.
     */
    private void writeHead(String id) {
        try {
            AtomicFile.writeHint(store.resolve("head"), (id + "\n").getBytes(StandardCharsets.US_ASCII));
        } catch (IOException e) {
            try {
                Files.deleteIfExists(store.resolve("head"));
            } catch (IOException ignored) {
                // a stale head is harmless too: its identities are still true of the files they name
            }
        }
    }

    /** Takes back what a failed capture wrote; a second failure is attached to the first. */
    private void discard(List<String> added, Exception failure) {
        for (String hash : added) {
            try {
                objects.delete(hash);
            } catch (IOException e) {
                failure.addSuppressed(e);
            }
        }
        try {
            objects.removeTemporaries();
        } catch (IOException e) {
            failure.addSuppressed(e);
        }
    }

    /** Whether a snapshot names any object: one with no file (only directories, symlinks, FIFOs) names none. */
    static boolean namesObjects(Manifest m) {
        for (Entry e : m.entries()) {
            if (e.kind() == Kind.FILE) {
                return true;
            }
        }
        return false;
    }

    /** One syncfs for all the objects just written: far cheaper than an fsync per file of 10,000. */
    private void syncStore() throws IOException {
        int fd = Posix.open(ByteNames.fromHostPath(objects.dir()), O_RDONLY | O_DIRECTORY);
        try {
            Posix.syncfs(fd);
        } finally {
            Posix.close(fd);
        }
    }

    private static void fsyncDirectory(Path dir) throws IOException {
        int fd = Posix.open(ByteNames.fromHostPath(dir), O_RDONLY | O_DIRECTORY);
        try {
            Posix.fsync(fd);
        } finally {
            Posix.close(fd);
        }
    }

    private static String folderBytes(Path folder) {
        Path abs = folder.toAbsolutePath();
        if (!Files.isDirectory(abs, LinkOption.NOFOLLOW_LINKS) && !Files.isDirectory(abs)) {
            throw new KosaException(KosaException.Kind.STATE, "the workspace folder " + abs
                    + " is missing or not a folder", "recreate it as an empty folder, then try again");
        }
        return ByteNames.fromHostPath(abs);
    }

    /**
     * Refuses a store inside the folder (a capture would take in the store, a restore delete it) or a folder
     * inside the store.
     */
    private void checkApart(Path folder) throws IOException {
        Path f = folder.toRealPath();
        Path s = realAsFarAsItExists(store);
        if (s.startsWith(f) || f.startsWith(s)) {
            throw new KosaException(KosaException.Kind.USAGE, "the snapshot store " + s + " and the workspace "
                    + f + " overlap", "keep the checkpoints outside the workspace folder");
        }
    }

    /** {@code p} with symlinks resolved in the part of it that exists (the store may not yet). */
    private static Path realAsFarAsItExists(Path p) throws IOException {
        Path existing = p.toAbsolutePath().normalize();
        Path rest = existing.getFileSystem().getPath("");
        while (existing.getParent() != null && !Files.exists(existing)) {
            rest = existing.getFileName().resolve(rest);
            existing = existing.getParent();
        }
        return existing.toRealPath().resolve(rest);
    }

    private static void checkId(String id) {
        if (id == null || !ID.matcher(id).matches()) {
            throw new KosaException(KosaException.Kind.USAGE, "bad snapshot name: " + id,
                    "use 1 to 64 letters, digits, '.', '_' or '-', starting with a letter or digit");
        }
    }

    private static KosaException unknown(String id) {
        return new KosaException(KosaException.Kind.USAGE, "no workspace snapshot named " + id,
                "list the checkpoints to see their names");
    }
}
