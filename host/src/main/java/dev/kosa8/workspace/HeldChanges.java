package dev.kosa8.workspace;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import com.fasterxml.jackson.datatype.jsr310.JavaTimeModule;
import dev.kosa8.host.KosaException;
import dev.kosa8.host.RecordFile;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Set;
import java.util.function.Consumer;

/**
 * The held layer of one sandbox: what the guest wrote to held paths ({@link HeldPolicy}), kept
 * beside the sandbox instead of in the folder, until the user accepts or rejects it.
 *
 * <p>A held unit (a file, or a directory with all under it) is copied from the folder into the
 * layer's tree ({@code tree/}, under the same path) the first time the guest changes anything in
 * it; from then on the server serves that unit to the guest from the tree alone: its reads, stats
 * and listings show the guest's version, and the folder keeps what it had. Nothing at a unit's
 * path in the tree means the guest deleted it. The units, the class that held each and a
 * fingerprint of what the folder had when it was held are kept in {@code held.json}
 * ({@link RecordFile}: checksummed, written atomically), so they outlive the daemon.
 *
 * <p>Accepting a unit checks that the folder still has what it had when the unit was held (else
 * it is a conflict, shown and not overwritten), then puts the tree's version in place with a
 * rename, so the folder's file is old or new and never part of either; rejecting drops it from
 * the tree, and the guest sees the folder's version again. Both run with the sandbox's server
 * paused (the daemon's business), or with no server.
 *
 * <p>The layer's directory is the owner's: see docs/files.md.
 */
public final class HeldChanges implements AutoCloseable {
    /** One held unit: where, which class held it, and a fingerprint of the folder's version then. */
    public record Unit(String path, String className, String base, Instant since) {
    }

    /**
     * What {@code held.json} holds: the units, the classes the sandbox's user chose to hold or not,
     * and the folder they belong in (so the layer can be reviewed after its sandbox is gone).
     */
    public record Record(List<Unit> units, List<String> hold, List<String> noHold, String folder) {
        public Record {
            folder = folder == null ? "" : folder;
            units = units == null ? List.of() : List.copyOf(units);
            hold = hold == null ? List.of() : List.copyOf(hold);
            noHold = noHold == null ? List.of() : List.copyOf(noHold);
        }
    }

    static final ObjectMapper JSON = new ObjectMapper().registerModule(new JavaTimeModule())
            .disable(SerializationFeature.WRITE_DATES_AS_TIMESTAMPS).enable(SerializationFeature.INDENT_OUTPUT);
    static final RecordFile<Record> RECORD = new RecordFile<>("kosa8-held", 1, "held", Record.class, JSON,
            RecordFile.Unchecked.REFUSE, "the held changes cannot be trusted: look at the tree/ beside it by hand,"
            + " then remove the held/ directory");

    private final Path dir;
    private final List<String> hold;
    private final List<String> noHold;
    private final String folder;
    private final int treeFd;
    private final HeldPolicy policy;
    private final Consumer<String> log;
    private final HeldUnits units = new HeldUnits();
    /** The bound on the tree's blocks and entries. */
    private final HeldSpace space;
    private volatile boolean closed;
    /** Told the units an accept or a reject changed in the guest's view: a caching guest's server notices. */
    private volatile Consumer<List<String>> listener = paths -> { };

    private HeldChanges(Path dir, int treeFd, HeldPolicy policy, List<String> hold, List<String> noHold,
                        String folder, HeldSpace.Bound bound, Consumer<String> log) {
        this.dir = dir;
        this.space = new HeldSpace(treeFd, bound);
        this.folder = folder;
        this.hold = hold;
        this.noHold = noHold;
        this.treeFd = treeFd;
        this.policy = policy;
        this.log = log;
    }

    /**
     * Records, for a new sandbox, which classes it holds: the defaults and {@code userFile}'s, but
     * {@code noHold}, and {@code hold} again (each name checked; a wrong one is a usage error).
     */
    public static void choose(Path dir, Path userFile, List<String> hold, List<String> noHold, String folder) {
        HeldPolicy.of(userFile, hold, noHold); // refuses a class that does not exist
        try {
            Files.createDirectories(dir);
            RECORD.write(dir.resolve("held.json"), new Record(List.of(), hold, noHold, folder));
        } catch (IOException e) {
            throw new KosaException(KosaException.Kind.HOST, "cannot write " + dir.resolve("held.json") + ": "
                    + e.getMessage(), "check the disk has room");
        }
    }

    /**
     * Opens (or makes) the held layer in {@code dir}, holding what the sandbox chose
     * ({@link #choose}) of the defaults and {@code userFile}'s classes.
     */
    public static HeldChanges open(Path dir, Path userFile, Consumer<String> log) {
        return open(dir, userFile, HeldSpace.DEFAULT, log);
    }

    /** As {@link #open(Path, Path, Consumer)}, the tree kept within {@code bound}. */
    static HeldChanges open(Path dir, Path userFile, HeldSpace.Bound bound, Consumer<String> log) {
        try {
            Files.createDirectories(dir.resolve("tree"));
            Path file = dir.resolve("held.json");
            Record r = Files.exists(file) ? RECORD.read(file) : new Record(List.of(), List.of(), List.of(), "");
            HeldPolicy policy = HeldPolicy.of(userFile, r.hold(), r.noHold());
            int fd = LinuxFs.openRoot(dir.resolve("tree").toAbsolutePath().toString());
            HeldChanges h = new HeldChanges(dir, fd, policy, r.hold(), r.noHold(), r.folder(), bound, log);
            for (Unit u : r.units()) {
                h.units.add(u);
            }
            return h;
        } catch (RecordFile.Damaged e) {
            throw new KosaException(KosaException.Kind.STATE, e.problem(), e.remedy(), e);
        } catch (IOException | ErrnoException e) {
            throw new KosaException(KosaException.Kind.HOST, "cannot open the held changes in " + dir + ": "
                    + e.getMessage(), "check the sandbox's directory is yours and the disk has room", e);
        }
    }

    /** Whether {@code dir} holds anything held, without opening it. */
    public static boolean anyHeld(Path dir) {
        Path file = dir.resolve("held.json");
        try {
            return Files.exists(file) && !RECORD.read(file).units().isEmpty();
        } catch (IOException e) {
            return true; // a damaged record may still hold changes: say so rather than drop them
        }
    }

    /** The layer's directory: {@code held.json} and {@code tree/} (what a checkpoint captures of it). */
    public Path dir() {
        return dir;
    }

    /**
     * Reads {@code held.json} again, after a rewind put the directory back as it was at a checkpoint
     * (the tree's contents are put back in place, so its descriptor stays good).
     */
    public synchronized void reload() {
        units.clear();
        space.forget(); // the tree is the checkpoint's now
        Path file = dir.resolve("held.json");
        try {
            if (Files.exists(file)) {
                for (Unit u : RECORD.read(file).units()) {
                    units.add(u);
                }
            }
        } catch (IOException e) {
            throw new KosaException(KosaException.Kind.STATE, "cannot read " + file + " back: " + e.getMessage(),
                    "the held changes are as the checkpoint's; look at " + dir + " by hand", e);
        }
    }

    /** The folder the held changes belong in, as recorded when the sandbox was made ("" if not). */
    public String folder() {
        return folder;
    }

    public HeldPolicy policy() {
        return policy;
    }

    int treeFd() {
        return treeFd;
    }

    /** The bound on what the tree keeps, which each guest write and change into it is counted against. */
    HeldSpace space() {
        return space;
    }

    boolean isEmpty() {
        return units.isEmpty();
    }

    /** The units held, by path. */
    public List<Unit> units() {
        return units.sorted();
    }

    /** The held unit {@code path} is in (itself or an ancestor), or null. */
    Unit unitOf(String path) {
        return units.unitOf(path);
    }

    /** The names of units directly in directory {@code dirPath}: those its listing takes from the tree. */
    Set<String> unitNamesIn(String dirPath) {
        return units.namesIn(dirPath);
    }

    /** Whether a unit directly in {@code dirPath} has something in the tree: the guest sees it there. */
    boolean anyPresentIn(String dirPath) throws ErrnoException {
        for (String name : unitNamesIn(dirPath)) {
            if (TreeCopy.statOrNull(treeFd, Fid.child(dirPath, name)) != null) {
                return true;
            }
        }
        return false;
    }

    /**
     * After {@code path} was removed or moved away: a unit there that the folder never had and the
     * tree no longer has is nothing to review, and is forgotten.
     */
    synchronized void forgetIfGone(String path) throws ErrnoException {
        Unit u = units.get(path);
        if (u == null || !u.base().equals(TreeCopy.ABSENT) || TreeCopy.statOrNull(treeFd, path) != null) {
            return;
        }
        units.remove(u);
        try {
            save();
        } catch (IOException e) {
            log.accept("cannot record held units: " + e.getMessage());
        }
    }

    /** Whether any unit lies strictly under {@code dirPath}. */
    boolean anyUnder(String dirPath) {
        return units.anyUnder(dirPath);
    }

    /**
     * Holds unit {@code unitPath}: copies what the folder (below {@code hostRoot}) has there into
     * the tree and records it. Idempotent.
     */
    synchronized Unit hold(int hostRoot, String unitPath, String className) throws ErrnoException {
        return hold(hostRoot, unitPath, className, true);
    }

    /**
     * As {@link #hold(int, String, String)}; {@code bounded}: the copy counted against the layer's bound first
     * ({@link HeldSpace}), refused with ENOSPC before anything is copied. A unit held to be removed is not: a
     * removal is never refused for room (what it copied and the removal left, the rest of a directory unit, is
     * counted at the layer's next measure).
     */
    synchronized Unit hold(int hostRoot, String unitPath, String className, boolean bounded) throws ErrnoException {
        Unit u = units.get(unitPath);
        if (u != null) {
            return u;
        }
        if (closed) {
            throw new ErrnoException(ErrnoException.EIO, "held layer closed");
        }
        if (bounded) {
            try {
                space.chargeCopyOf(hostRoot, unitPath, TreeCopy.missingParents(treeFd, unitPath));
            } catch (ErrnoException e) {
                if (space.mayLogRefusal()) {
                    log.accept("not holding " + className + " unit " + unitPath + ": " + e.getMessage()
                            + " (said at most once a minute)");
                }
                throw e;
            }
        }
        TreeCopy.makeParents(treeFd, unitPath);
        TreeCopy.remove(treeFd, unitPath); // left over from a crash between copy and record
        String base = TreeCopy.fingerprint(hostRoot, unitPath);
        TreeCopy.copy(hostRoot, unitPath, treeFd, unitPath);
        u = new Unit(unitPath, className, base, Instant.now());
        units.add(u);
        try {
            save();
        } catch (IOException e) {
            units.remove(u);
            TreeCopy.remove(treeFd, unitPath);
            log.accept("cannot record held unit " + unitPath + ": " + e.getMessage());
            throw new ErrnoException(ErrnoException.EIO, "cannot record a held unit");
        }
        log.accept("held " + className + " unit " + unitPath);
        return u;
    }

    private void save() throws IOException {
        RECORD.write(dir.resolve("held.json"), new Record(units(), hold, noHold, folder));
    }

    // --- review ---

    /** What one held unit would do to the folder if accepted. */
    public enum Change { ADD, MODIFY, DELETE, NONE }

    /** A unit as a review shows it. */
    public record Entry(Unit unit, Change change, boolean conflict, String protects, long size, String diff) {
    }

    /**
     * Every held unit against the folder {@code folder} now: what accepting it changes, whether the
     * folder changed since it was held (a conflict), and a diff of text.
     */
    public synchronized List<Entry> review(Path folder, boolean withDiff) {
        int root = openFolder(folder);
        try {
            List<Entry> out = new ArrayList<>();
            for (Unit u : units()) {
                out.add(entry(root, u, withDiff));
            }
            return out;
        } catch (ErrnoException e) {
            throw failed("read the held changes", e);
        } finally {
            LinuxFs.closeQuietly(root);
        }
    }

    private Entry entry(int root, Unit u, boolean withDiff) throws ErrnoException {
        LinuxFs.Stat held = TreeCopy.statOrNull(treeFd, u.path());
        String now = TreeCopy.fingerprint(root, u.path());
        boolean conflict = !now.equals(u.base());
        Change change;
        if (held == null) {
            change = now.equals(TreeCopy.ABSENT) ? Change.NONE : Change.DELETE;
        } else if (now.equals(TreeCopy.ABSENT)) {
            change = Change.ADD;
        } else {
            change = TreeCopy.fingerprint(treeFd, u.path()).equals(now) ? Change.NONE : Change.MODIFY;
        }
        long size = held == null ? 0 : held.isDir() ? TreeDiff.size(treeFd, u.path()) : held.size();
        String diff = withDiff ? TreeDiff.diff(root, treeFd, u.path()) : "";
        return new Entry(u, change, conflict, policy.protects(u.className()), size, diff);
    }

    /** The result of accepting or rejecting: the units done, and the conflicts left held. */
    public record Outcome(List<String> done, List<String> conflicts) {
    }

    /**
     * Puts the held version of each unit named (or all) into the folder. A unit whose folder
     * version changed since it was held is a conflict: left held, reported, not overwritten.
     */
    public synchronized Outcome accept(Path folder, List<String> paths, boolean all) {
        List<Unit> chosen = units.named(paths, all);
        int root = openFolder(folder);
        List<String> done = new ArrayList<>();
        List<String> changed = new ArrayList<>(); // in the guest's view: unindexed, if not yet done
        List<String> conflicts = new ArrayList<>();
        try {
            for (Unit u : chosen) {
                TreeCopy.removeLeftCopies(root, u.path(), ACCEPT_TEMP); // of an accept the daemon died in
                String now = TreeCopy.fingerprint(root, u.path());
                if (!now.equals(u.base())) {
                    if (!now.equals(TreeCopy.fingerprint(treeFd, u.path()))) {
                        conflicts.add(u.path());
                        continue;
                    }
                    // the folder holds the held version already: an accept the daemon died in after placing it
                } else {
                    apply(root, u);
                }
                dev.kosa8.host.CrashPoints.reached("accept", "placed");
                units.remove(u);
                changed.add(u.path());
                save();
                TreeCopy.remove(treeFd, u.path());
                done.add(u.path());
            }
            return new Outcome(done, conflicts);
        } catch (ErrnoException | IOException e) {
            throw failed("accept the held changes", e);
        } finally {
            LinuxFs.closeQuietly(root);
            tellChanged(changed);
        }
    }

    /**
     * The tree's version of {@code u} into the folder, whole or not at all whenever the daemon dies
     * ({@link TreeCopy#replace}); a unit the tree no longer has is removed from the folder.
     */
    private void apply(int root, Unit u) throws ErrnoException {
        if (TreeCopy.statOrNull(treeFd, u.path()) == null) {
            TreeCopy.remove(root, u.path());
        } else {
            TreeCopy.replace(treeFd, root, u.path(), ACCEPT_TEMP, () -> dev.kosa8.host.CrashPoints.reached("accept",
                    "copied"));
        }
    }

    /** The prefix of the name an accepted unit is copied to beside its place before it is renamed over it. */
    static final String ACCEPT_TEMP = ".kosa8-accept-";

    /**
     * From now on, {@code listener} is told the paths of the units each accept and reject changed in the guest's
     * view (a rejected unit shows the folder's version again, an accepted one the folder's copy of the held
     * one): the server of a guest that caches the folder tells it ({@link FolderNotices#told}).
     */
    public void tellChanges(Consumer<List<String>> listener) {
        this.listener = listener;
    }

    /** {@code listener} is told no more, unless another has taken its place. */
    public void stopTelling(Consumer<List<String>> listener) {
        if (this.listener == listener) {
            this.listener = paths -> { };
        }
    }

    /** Tells the listener ({@link #tellChanges}) that the guest's view changed at {@code paths}. */
    void tellChanged(List<String> paths) {
        if (!paths.isEmpty()) {
            listener.accept(List.copyOf(paths));
        }
    }

    /** Drops the held version of each unit named (or all): the guest sees the folder's again. */
    public synchronized Outcome reject(List<String> paths, boolean all) {
        List<Unit> chosen = units.named(paths, all);
        List<String> done = new ArrayList<>();
        List<String> changed = new ArrayList<>(); // in the guest's view: unindexed, if not yet done
        try {
            for (Unit u : chosen) {
                units.remove(u);
                changed.add(u.path());
                save();
                TreeCopy.remove(treeFd, u.path());
                done.add(u.path());
            }
            return new Outcome(done, List.of());
        } catch (ErrnoException | IOException e) {
            throw failed("reject the held changes", e);
        } finally {
            tellChanged(changed);
        }
    }

    /** Opens a sandbox's folder as a root to resolve paths beneath; a clear error if it is gone. */
    static int openFolder(Path folder) {
        try {
            return LinuxFs.openRoot(folder.toAbsolutePath().toString());
        } catch (ErrnoException e) {
            throw new KosaException(KosaException.Kind.USAGE, "cannot open the workspace " + folder + ": "
                    + e.getMessage(), "check the folder still exists");
        }
    }

    private static KosaException failed(String what, Exception e) {
        return new KosaException(KosaException.Kind.HOST, "cannot " + what + ": " + e.getMessage(),
                "see the daemon's log; what was not done stays held");
    }


    /** Drops every held change and the layer's files (the sandbox is being removed). */
    public synchronized void discard() {
        close();
        try (var walk = Files.walk(dir)) {
            for (Path p : walk.sorted(Comparator.reverseOrder()).toList()) {
                Files.deleteIfExists(p);
            }
        } catch (IOException e) {
            log.accept("cannot remove " + dir + ": " + e.getMessage());
        }
    }

    @Override
    public synchronized void close() {
        if (!closed) {
            closed = true;
            LinuxFs.closeQuietly(treeFd);
        }
    }
}
