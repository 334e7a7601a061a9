package dev.kosa8.checkpoint;

import dev.kosa8.checkpoint.ram.RamStore;
import dev.kosa8.host.KosaException;
import dev.kosa8.host.RecordFile;
import dev.kosa8.vm.GuestCommand;
import dev.kosa8.vm.MachineState;
import dev.kosa8.vm.SavedMachine;
import dev.kosa8.vm.Vm;
import dev.kosa8.workspace.WorkspaceServer;
import dev.kosa8.workspace.WorkspaceSnapshot;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.Consumer;

/**
 * Undo, for one sandbox: checkpoints of the whole running machine, rewinding
 * in place, forking from a checkpoint, pausing to disk, and recovering from a
 * daemon that died in the middle of one of them (docs/checkpoints.md). The one
 * door the daemon uses: it passes in the running machine and, for a rewind,
 * how to start a new one ({@link Relauncher}); it never names a file of
 * undo's. This class owns {@code checkpoints/} and {@code suspended/} in the
 * sandbox's directory (docs/files.md); the sandbox's root disk, which holds
 * each checkpoint's disk as an internal snapshot, stays the daemon's.
 *
 * <p>A checkpoint returns as soon as its instant is fixed, pending, and
 * commits on a thread of its own ({@link Commits}): the daemon keeps one Undo
 * per sandbox for as long as it holds the sandbox, and {@link #cancel}s it
 * when the sandbox goes. What needs a checkpoint committed (a rewind or fork
 * to it) waits for its commit; what needs the machine's stream or undo's
 * files (the next checkpoint, a rewind, a removal, a pause to disk) waits for
 * the commit under way.
 *
 * <p>Callers hold the sandbox's lock: one operation at a time, but for the
 * commit under way, which needs no lock.
 */
public final class Undo {
    /** Why a checkpoint whose commit was cut short failed. */
    static final String CUT_SHORT = "its commit was cut short (the daemon stopped before its memory was saved)";

    /**
     * Starts the sandbox's machine again from a saved state, its workspace
     * served with the given fid table; returns the new machine, running, its
     * agent connected and its folder served. {@code beforeServe} runs once
     * the new QEMU has the state, possibly while the guest already runs, and
     * before the workspace server reads any request of the guest's (a rewind
     * waits there for its folder, put back meanwhile).
     */
    public interface Relauncher {
        Vm relaunch(SavedMachine state, WorkspaceSnapshot server, Runnable beforeServe);
    }

    /**
     * The running machine an operation works on.
     *
     * @param workspace its 9p server, or null when it shares no folder
     * @param folder    the folder that server serves, or null
     */
    public record Machine(Vm vm, WorkspaceServer workspace, Path folder) {
    }

    /** A finished rewind: the checkpoint it went back to and how long each step took. */
    public record Rewound(Checkpoint checkpoint, Map<String, Long> stepMillis) {
    }

    /** A checkpoint (of any state) with the bytes on disk only it holds. */
    public record Listed(Checkpoint checkpoint, long bytesOnDisk) {
    }

    /** Where a new sandbox starts from a checkpoint of this one: the checkpoint and its machine as QEMU loads it. */
    public record ForkPoint(Checkpoint checkpoint, SavedMachine machine) {
    }

    /** A machine paused to disk, ready to resume. */
    public record Suspended(SavedMachine machine, WorkspaceSnapshot server, Instant when) {
    }

    private final Path sandboxDir;
    private final String sandboxId;
    private final Consumer<String> log;
    private final Commits commits = new Commits();
    /** Set by {@link #recover} when it marked a checkpoint failed: its parts are swept once the machine is back. */
    private volatile boolean cutShort;

    /**
     * @param sandboxDir the sandbox's directory, whose {@code checkpoints/} and {@code suspended/} this owns
     * @param sandboxId  the sandbox's id, for messages that tell the user what to run
     */
    public Undo(Path sandboxDir, String sandboxId, Consumer<String> log) {
        this.sandboxDir = sandboxDir;
        this.sandboxId = sandboxId;
        this.log = log;
    }

    private Path checkpoints() {
        return sandboxDir.resolve("checkpoints");
    }

    private CheckpointStore store() {
        return new CheckpointStore(checkpoints(), log);
    }

    private Checkpointer checkpointer(Machine m) {
        return new Checkpointer(m.vm(), m.workspace(), m.folder(), checkpoints(), log);
    }

    /**
     * Takes a checkpoint of the running machine: returns once its instant is
     * fixed and the guest runs on, pending; its commit goes on in the
     * background ({@link #awaitCommit}). A checkpoint taken while the one
     * before still commits waits for that commit first.
     */
    public Checkpoint checkpoint(Machine m, String message) {
        return checkpoint(m, message, CheckpointLimits.NONE);
    }

    /**
     * Takes a checkpoint of the running machine if {@code limits} admit one
     * more, first removing what they say must go to make room; refuses,
     * before anything stops, when they do not.
     */
    public Checkpoint checkpoint(Machine m, String message, CheckpointLimits limits) {
        commits.awaitIdle(); // the limits count what the commit under way will have stored
        while (true) { // each round removes one checkpoint, so it ends
            Optional<Checkpoint> thin;
            try {
                thin = limits.admit(sandboxId, store().list(), bytesHeld());
            } catch (IOException e) {
                throw unreadable(e);
            }
            if (thin.isEmpty()) {
                break;
            }
            remove(thin.get().id(), m, null);
        }
        Commit c = checkpointer(m).instant(message);
        commits.start(c);
        return c.pending();
    }

    /** How many committed checkpoints there are (their records alone are read). */
    public int count() {
        try {
            return store().list().size();
        } catch (IOException e) {
            throw unreadable(e);
        }
    }

    /**
     * Waits until checkpoint {@code idOrPrefix} is committed and returns it.
     *
     * @throws KosaException when it failed, saying why
     */
    public Checkpoint awaitCommit(String idOrPrefix) {
        return committed(find(idOrPrefix));
    }

    /** Checkpoint {@code c} once committed: waited for while pending; a failed one is refused, saying why. */
    private Checkpoint committed(Checkpoint c) {
        switch (c.state()) {
            case COMMITTED -> {
                return c;
            }
            case PENDING -> {
                Optional<Checkpoint> done = commits.await(c.id());
                if (done.isPresent()) {
                    return done.get();
                }
                // its commit ended before this asked, or died with an earlier daemon: the record says which
                Checkpoint now = reread(c);
                if (now.state() == Checkpoint.State.PENDING) {
                    throw failed(c.failed(CUT_SHORT));
                }
                return committed(now);
            }
            default -> throw failed(c);
        }
    }

    private Checkpoint reread(Checkpoint c) {
        try {
            return store().find(c.id()).orElseThrow(() -> new KosaException(KosaException.Kind.USAGE,
                    "checkpoint " + c.id() + " of sandbox " + sandboxId + " was removed",
                    "`kosa8 checkpoints " + sandboxId + "` lists them"));
        } catch (IOException e) {
            throw unreadable(e);
        }
    }

    /**
     * The bytes the sandbox's checkpoints and its pause to disk hold alone:
     * every file under {@code checkpoints/} and {@code suspended/} that is not
     * also linked elsewhere (a template's or a parent's RAM pages, shared,
     * count for them). Their disk snapshots are inside the root disk.
     */
    public long bytesHeld() throws IOException {
        return dev.kosa8.host.LiveTreeBytes.of(checkpoints(), true) - holesOfRamCopies()
                + dev.kosa8.host.LiveTreeBytes.of(sandboxDir.resolve("suspended"), true);
    }

    /**
     * A file-RAM checkpoint's copy of the guest's RAM ({@code <id>.memory}) is as long as the guest's memory but
     * holds only what the guest touched: what it holds on disk is its data, not its length. The length less
     * the data, summed: what {@link #bytesHeld} takes off the files' lengths.
     */
    private long holesOfRamCopies() throws IOException {
        long holes = 0;
        if (!Files.isDirectory(checkpoints())) {
            return 0;
        }
        try (var files = Files.newDirectoryStream(checkpoints(), "*.memory")) {
            for (Path f : files) {
                try {
                    if (Files.isRegularFile(f, java.nio.file.LinkOption.NOFOLLOW_LINKS)) {
                        holes += Math.max(0, Files.size(f) - dev.kosa8.vm.RamFile.dataBytes(f));
                    }
                } catch (java.nio.file.NoSuchFileException gone) {
                    // removed meanwhile: the walk did not count it either, or counts it whole: never below zero
                }
            }
        }
        return holes;
    }

    private KosaException failed(Checkpoint c) {
        return new KosaException(KosaException.Kind.STATE, "checkpoint " + c.id() + " of sandbox " + sandboxId
                + " failed: " + c.failure() + "; it cannot be used", Checkpointer.hint(c.failure())
                .replace("then try again", "then take a new one") + "; `kosa8 checkpoint rm " + sandboxId + " "
                + c.id() + "` removes it");
    }

    /**
     * Rewinds the running machine in place to a checkpoint (an id or a
     * unique prefix; empty: the latest that did not fail), once the commit
     * under way, which needs the running machine's QEMU, has ended.
     */
    public Rewound rewind(Machine m, String idOrPrefix, Relauncher relauncher) {
        commits.awaitIdle();
        Checkpoint c = committed(find(idOrPrefix));
        return new Rewound(c, checkpointer(m).rewind(c, relauncher));
    }

    /** The committed checkpoints' records, oldest first: cheap, unlike {@link #list}. */
    public List<Checkpoint> records() {
        try {
            return store().list();
        } catch (IOException e) {
            throw unreadable(e);
        }
    }

    /** Every checkpoint, oldest first, with its state and the bytes on disk only it holds. */
    public List<Listed> list(boolean withFolder) {
        try {
            List<Listed> all = new ArrayList<>();
            var folders = new FolderSnapshots(checkpoints().resolve("workspace"));
            Map<String, Long> ram = new RamStore(checkpoints()).bytesOnlyIn();
            for (Checkpoint c : store().list()) {
                long bytes = c.state() != Checkpoint.State.COMMITTED ? 0 : ram.getOrDefault(c.id(), c.vmStateBytes())
                        + (withFolder ? folders.bytesOnlyIn(c.id()) : 0);
                all.add(new Listed(c, bytes));
            }
            return all;
        } catch (IOException e) {
            throw unreadable(e);
        }
    }

    /**
     * A checkpoint by its id or a unique prefix of it, in whatever state;
     * empty or null: the latest that did not fail. Reads the records alone: what each checkpoint alone holds on
     * disk ({@link #list}) reads every RAM image and every workspace
     * manifest, 0.3-0.5 s with a 10,000-file workspace, and a rewind paid it
     * before it began.
     */
    public Checkpoint find(String idOrPrefix) {
        List<Checkpoint> all;
        try {
            all = store().list();
            if (idOrPrefix != null && all.stream().noneMatch(c -> c.id().equals(idOrPrefix))) {
                store().find(idOrPrefix); // a damaged record by its exact id: said, naming the file
            }
        } catch (RecordFile.Damaged e) {
            throw new KosaException(KosaException.Kind.HOST, "checkpoint " + idOrPrefix + " of sandbox " + sandboxId
                    + " cannot be used: " + e.problem(), e.remedy(), e);
        } catch (IOException e) {
            throw unreadable(e);
        }
        if (idOrPrefix == null || idOrPrefix.isEmpty()) {
            all = all.stream().filter(c -> c.state() != Checkpoint.State.FAILED).toList();
        }
        if (all.isEmpty()) {
            throw new KosaException(KosaException.Kind.USAGE, "sandbox " + sandboxId + " has no checkpoints",
                    "take one with `kosa8 checkpoint " + sandboxId + "`");
        }
        if (idOrPrefix == null || idOrPrefix.isEmpty()) {
            return all.getLast();
        }
        List<Checkpoint> matches = all.stream().filter(c -> c.id().startsWith(idOrPrefix)).toList();
        if (matches.size() != 1) {
            throw new KosaException(KosaException.Kind.USAGE, matches.isEmpty()
                    ? "sandbox " + sandboxId + " has no checkpoint '" + idOrPrefix + "'"
                    : "'" + idOrPrefix + "' matches " + matches.size() + " checkpoints",
                    "`kosa8 checkpoints " + sandboxId + "` lists them");
        }
        return matches.getFirst();
    }

    /**
     * Removes a checkpoint, once the commit under way has ended (a pending
     * one is removed committed or failed): through the running machine's
     * QEMU when there is one ({@code running} non-null), else from the disk
     * {@code disk} that no QEMU holds.
     */
    public Checkpoint remove(String idOrPrefix, Machine running, Path disk) {
        commits.awaitIdle();
        Checkpoint c = find(idOrPrefix);
        try {
            if (running != null) {
                checkpointer(running).remove(c);
            } else {
                Checkpointer.removeOffline(checkpoints(), disk, c);
            }
            return c;
        } catch (IOException e) {
            throw new KosaException(KosaException.Kind.HOST, "cannot remove checkpoint " + idOrPrefix + ": "
                    + e.getMessage(), "check " + checkpoints(), e);
        }
    }

    /** Where a fork starts: checkpoint {@code idOrPrefix}, once committed, and its saved machine. */
    public ForkPoint forkPoint(String idOrPrefix) {
        Checkpoint c = committed(find(idOrPrefix));
        try {
            return new ForkPoint(c, RamBase.savedMachine(checkpoints(), c));
        } catch (IOException e) {
            throw new KosaException(KosaException.Kind.USAGE, e.getMessage(),
                    "take a new checkpoint and fork from that");
        }
    }

    /**
     * Writes a fork's own root disk: {@code disk} (this sandbox's, which may
     * be in use) as checkpoint {@code c} holds it, as an overlay on the same
     * image, to {@code target}; {@code log} receives qemu-img's output.
     */
    public void copyDisk(Checkpoint c, Path disk, Path target, Path log) throws IOException {
        DiskSnapshots.copyOut(disk, c.id(), target, log);
    }

    /**
     * A fork's folder as it starts, which is its parent's checkpoint {@code c}: that snapshot, its content shared
     * with the parent's store ({@link FolderSnapshots#linkFrom}), rather than the folder read again.
     */
    public void startFromParentFolder(Undo parent, Checkpoint c) throws IOException {
        new FolderSnapshots(checkpoints().resolve("workspace")).linkFrom(
                new FolderSnapshots(parent.checkpoints().resolve("workspace")), c.id(), FolderSnapshots.START);
    }

    /** The folder as the sandbox starts with it: {@code kosa8 diff}'s default instant. Kept until the sandbox goes. */
    public void captureStart(Path folder) throws IOException {
        var folders = new FolderSnapshots(checkpoints().resolve("workspace"));
        if (!folders.ids().contains(FolderSnapshots.START)) {
            folders.capture(folder, FolderSnapshots.START);
        }
    }

    /**
     * How {@code folder} differs now from checkpoint {@code idOrPrefix}, or, when that is empty, from the folder
     * as the sandbox started ({@link #captureStart}). The caller holds the sandbox's lock: no checkpoint starts
     * meanwhile.
     */
    public List<FolderChange> diff(Path folder, String idOrPrefix) {
        // the store's objects are read: once the commit under way (which deletes its pre-copy's) has ended, and a
        // checkpoint named while pending once its snapshot is committed (a failed one refused, saying why)
        commits.awaitIdle();
        var folders = new FolderSnapshots(checkpoints().resolve("workspace"));
        String from = idOrPrefix == null || idOrPrefix.isEmpty() ? FolderSnapshots.START
                : committed(find(idOrPrefix)).id();
        try {
            if (!folders.ids().contains(from)) {
                throw from.equals(FolderSnapshots.START)
                        ? new KosaException(KosaException.Kind.USAGE, "sandbox " + sandboxId + " kept no copy of its"
                                + " folder as it started (an older kosa8 made it, or it shares no folder)",
                                "name a checkpoint to compare with: `kosa8 checkpoints " + sandboxId + "` lists them")
                        : new KosaException(KosaException.Kind.USAGE, "checkpoint " + from + " holds no folder",
                                "name another checkpoint: `kosa8 checkpoints " + sandboxId + "` lists them");
            }
            return folders.diff(from, folder);
        } catch (IOException e) {
            throw new KosaException(KosaException.Kind.HOST, "cannot compare the folder of sandbox " + sandboxId
                    + ": " + e.getMessage(), "try again; if it persists, see the daemon's log", e);
        }
    }

    /**
     * How {@code folder} (this sandbox's, or another one's: {@code kosa8 adopt} compares the folder a fork was
     * made from too) differs now from this sandbox's folder as it started: for a fork, the instant it was forked
     * at. The caller holds the sandbox's lock.
     */
    public List<FolderEdit> editsSinceStart(Path folder) {
        commits.awaitIdle();
        var folders = new FolderSnapshots(checkpoints().resolve("workspace"));
        try {
            if (!folders.ids().contains(FolderSnapshots.START)) {
                throw new KosaException(KosaException.Kind.USAGE, "sandbox " + sandboxId + " kept no copy of its"
                        + " folder as it started (an older kosa8 made it, or it shares no folder)",
                        "`kosa8 diff " + sandboxId + " CHECKPOINT` shows what changed since one of its checkpoints");
            }
            return folders.edits(FolderSnapshots.START, folder);
        } catch (IOException e) {
            throw new KosaException(KosaException.Kind.HOST, "cannot compare " + folder + " with the folder of "
                    + "sandbox " + sandboxId + " as it started: " + e.getMessage(),
                    "try again; if it persists, see the daemon's log", e);
        }
    }

    /**
     * Writes the workspace as checkpoint {@code c} held it into {@code folder}, a new, empty one: each file a
     * clone of the store's object where the file system can, else a copy ({@link Restore#filesCloned}).
     */
    public Restore copyFolder(Checkpoint c, Path folder) throws IOException {
        return new FolderSnapshots(checkpoints().resolve("workspace")).copyTo(c.id(), folder);
    }

    /**
     * Whether a folder restored from this sandbox's snapshot store into {@code dir} would be made of clones
     * of the store's files (docs/checkpoints.md, "What the copies share"), rather than copies: probed with
     * one scratch file.
     */
    public boolean folderClonesInto(Path dir) {
        return Clones.possible(checkpoints(), dir);
    }

    /**
     * Makes the parent's checkpoint a new fork was restored from the base of
     * the fork's first checkpoint, which then stores only the pages changed
     * since, not all RAM in use ({@link RamBase#startFrom}). Without it
     * nothing is lost but the sharing: the reason goes to the log.
     */
    public void startFrom(Undo parent, Checkpoint c) {
        startFrom(parent.checkpoints(), c.id(), false);
    }

    /** As {@link #startFrom(Undo, Checkpoint)}, for a sandbox restored from a booted template's RAM {@code ramId}. */
    public void startFromTemplate(Path templateDir, String ramId) {
        startFrom(templateDir, ramId, true);
    }

    private void startFrom(Path otherDir, String ramId, boolean template) {
        try {
            RamBase.startFrom(checkpoints(), otherDir, ramId, template);
        } catch (IOException e) {
            log.accept("the RAM the machine was restored from cannot be its first checkpoint's base ("
                    + e.getMessage() + "); that checkpoint stores all RAM in use");
        }
    }

    /**
     * Pauses the running machine to disk for {@code kosa8 stop}
     * ({@link Checkpointer#suspend}); the caller then quits QEMU.
     *
     * @return how long each step took
     */
    public Map<String, Long> suspend(Machine m) {
        commits.awaitIdle();
        return checkpointer(m).suspend(new Suspension(sandboxDir));
    }

    /** The machine paused to disk, if there is a complete one. */
    public Optional<Suspended> suspended() throws IOException {
        Suspension s = new Suspension(sandboxDir);
        if (!s.exists()) {
            return Optional.empty();
        }
        Suspension.Record r = s.read();
        return Optional.of(new Suspended(SavedMachine.file(s.state()), r.server(), r.suspended()));
    }

    /** Removes the machine paused to disk, complete or not (resumed, or it cannot be). */
    public void discardSuspended() throws IOException {
        new Suspension(sandboxDir).discard();
    }

    /**
     * After a daemon restart, with the sandbox's machine re-attached: a
     * daemon that died in the middle of a checkpoint or rewind left the
     * guest's processes frozen (so did one that died in a stop after the
     * machine was saved, before QEMU quit: that saved state is discarded,
     * never resumed over the machine that ran on); they are thawed, the mark cleared, and the
     * parts of the checkpoint it never committed swept away at once (not
     * only before the next checkpoint), so no temporary file outlives the
     * recovery (docs/checkpoints.md, "Crash walk").
     *
     * @return whether there was one to recover from
     */
    public boolean recoverInterrupted(Vm vm) throws IOException {
        Path mark = Checkpointer.marker(checkpoints());
        Suspension stop = new Suspension(sandboxDir);
        // a machine that still runs with a pause to disk beside it: a stop cut short after the save, before QEMU
        // quit; its processes are frozen, and the saved state is older than the machine it would bring back
        boolean stopCut = Files.isDirectory(stop.state().getParent());
        boolean frozen = Files.exists(mark) || stopCut;
        boolean commitCut = cutShort;
        cutShort = false;
        if (!frozen && !commitCut) {
            return false;
        }
        if (frozen) {
            GuestCommand.thaw(vm.agent(), 0, new byte[0], Duration.ofSeconds(20));
        }
        if (stopCut) {
            log.accept("sandbox " + sandboxId + ": a stop was cut short; its machine runs on, and the state it saved "
                    + "is discarded");
            stop.discard();
        }
        if (Files.deleteIfExists(mark) | commitCut) {
            sweepLeftovers(vm);
        }
        return true;
    }

    /**
     * The parts of checkpoints never committed, swept once QEMU's stream has
     * ended (the dead daemon's writer finishes it: a background snapshot is
     * never cut). A stream that does not end in time leaves them to the
     * sweep before the next checkpoint, which waits for it again.
     */
    private void sweepLeftovers(Vm vm) {
        try {
            MachineState.awaitIdle(vm.qmp(), Duration.ofMinutes(1));
        } catch (RuntimeException e) {
            log.accept("sandbox " + sandboxId + ": the machine state a dead daemon's checkpoint began is still being"
                    + " written (" + e.getMessage() + "); its parts are swept before the next checkpoint");
            return;
        }
        new Leftovers(vm.qmp(), store(), new FolderSnapshots(checkpoints().resolve("workspace")),
                new FolderSnapshots(checkpoints().resolve(Checkpointer.HELD)), new RamStore(checkpoints()), log)
                .sweep();
    }

    /**
     * For a sandbox whose machine ended while no daemon ran: the mark of a
     * checkpoint or rewind it was in the middle of goes, since the processes
     * it kept frozen went with the machine. Returns whether there was one.
     * (The parts of a checkpoint never committed are swept before the next.)
     */
    public boolean forgetInterrupted() throws IOException {
        return Files.deleteIfExists(Checkpointer.marker(checkpoints()));
    }

    /**
     * At daemon start, for every sandbox: a checkpoint still pending was
     * being committed by a daemon that died; it is marked failed. What it
     * named is swept once the machine is re-attached ({@link
     * #recoverInterrupted}), else before the next checkpoint ({@link
     * Leftovers}).
     *
     * @return the ids marked failed
     */
    public List<String> recover() {
        List<String> failed = new ArrayList<>();
        try {
            CheckpointStore store = store();
            for (Checkpoint c : store.list()) {
                if (c.state() == Checkpoint.State.PENDING) {
                    store.save(c.failed(CUT_SHORT));
                    failed.add(c.id());
                    cutShort = true;
                }
            }
        } catch (IOException e) {
            log.accept("cannot mark the checkpoints a dead daemon left pending as failed: " + e.getMessage());
        }
        return failed;
    }

    /**
     * The sandbox goes away, its machine already stopped: the commit under
     * way, if any, stops and removes its parts. Returns once it has, or after
     * {@code timeout}; false then.
     */
    public boolean cancel(Duration timeout) {
        return commits.cancel(timeout);
    }

    /** The daemon is exiting: waits up to {@code timeout} for the commit under way; false if it has not ended. */
    public boolean awaitCommits(Duration timeout) {
        return commits.awaitIdle(timeout);
    }

    /** The id of the checkpoint being committed in the background, if one is. */
    public Optional<String> committing() {
        return commits.pending();
    }

    private KosaException unreadable(IOException e) {
        return new KosaException(KosaException.Kind.HOST, "cannot read the checkpoints of sandbox " + sandboxId + ": "
                + e.getMessage(), "check " + checkpoints(), e);
    }
}
