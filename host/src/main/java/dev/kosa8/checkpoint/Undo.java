package dev.kosa8.checkpoint;

import dev.kosa8.checkpoint.ram.RamStore;
import dev.kosa8.host.KosaException;
import dev.kosa8.host.RecordFile;
import dev.kosa8.vm.GuestCommand;
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
 * <p>Callers hold the sandbox's lock: one operation at a time.
 */
public final class Undo {
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

    /** A committed checkpoint with the bytes on disk only it holds. */
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

    /** Takes a checkpoint of the running machine. */
    public Checkpoint checkpoint(Machine m, String message) {
        return checkpointer(m).checkpoint(message);
    }

    /** Rewinds the running machine in place to a checkpoint (an id or a unique prefix; empty: the latest). */
    public Rewound rewind(Machine m, String idOrPrefix, Relauncher relauncher) {
        Checkpoint c = find(idOrPrefix);
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

    /** The committed checkpoints, oldest first, each with the bytes on disk only it holds. */
    public List<Listed> list(boolean withFolder) {
        try {
            List<Listed> all = new ArrayList<>();
            var folders = new FolderSnapshots(checkpoints().resolve("workspace"));
            Map<String, Long> ram = new RamStore(checkpoints()).bytesOnlyIn();
            for (Checkpoint c : store().list()) {
                all.add(new Listed(c, ram.getOrDefault(c.id(), c.vmStateBytes())
                        + (withFolder ? folders.bytesOnlyIn(c.id()) : 0)));
            }
            return all;
        } catch (IOException e) {
            throw unreadable(e);
        }
    }

    /**
     * A checkpoint by its id or a unique prefix of it; empty or null: the
     * latest. Reads the records alone: what each checkpoint alone holds on
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
     * Removes a checkpoint: through the running machine's QEMU when there is
     * one ({@code running} non-null), else from the disk {@code disk} that no
     * QEMU holds.
     */
    public Checkpoint remove(String idOrPrefix, Machine running, Path disk) {
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

    /** Where a fork starts: checkpoint {@code idOrPrefix} and its saved machine. */
    public ForkPoint forkPoint(String idOrPrefix) {
        Checkpoint c = find(idOrPrefix);
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

    /** The folder as the sandbox starts with it: {@code kosa8 diff}'s default instant. Kept until the sandbox goes. */
    public void captureStart(Path folder) throws IOException {
        var folders = new FolderSnapshots(checkpoints().resolve("workspace"));
        if (!folders.ids().contains(FolderSnapshots.START)) {
            folders.capture(folder, FolderSnapshots.START);
        }
    }

    /**
     * How {@code folder} differs now from checkpoint {@code idOrPrefix}, or, when that is empty, from the folder
     * as the sandbox started ({@link #captureStart}). The caller holds the sandbox's lock: no checkpoint runs
     * meanwhile.
     */
    public List<FolderChange> diff(Path folder, String idOrPrefix) {
        var folders = new FolderSnapshots(checkpoints().resolve("workspace"));
        String from = idOrPrefix == null || idOrPrefix.isEmpty() ? FolderSnapshots.START : find(idOrPrefix).id();
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

    /** Writes the workspace as checkpoint {@code c} held it into {@code folder}, a new, empty one. */
    public void copyFolder(Checkpoint c, Path folder) throws IOException {
        new FolderSnapshots(checkpoints().resolve("workspace")).copyTo(c.id(), folder);
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
        if (!Files.exists(mark) && !stopCut) {
            return false;
        }
        GuestCommand.thaw(vm.agent(), 0, new byte[0], Duration.ofSeconds(20));
        if (stopCut) {
            log.accept("sandbox " + sandboxId + ": a stop was cut short; its machine runs on, and the state it saved "
                    + "is discarded");
            stop.discard();
        }
        if (Files.deleteIfExists(mark)) {
            new Leftovers(vm.qmp(), store(), new FolderSnapshots(checkpoints().resolve("workspace")),
                    new RamStore(checkpoints()), log).sweep();
        }
        return true;
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

    private KosaException unreadable(IOException e) {
        return new KosaException(KosaException.Kind.HOST, "cannot read the checkpoints of sandbox " + sandboxId + ": "
                + e.getMessage(), "check " + checkpoints(), e);
    }
}
