package dev.kosa8.checkpoint;

import dev.kosa8.checkpoint.ram.RamStore;
import dev.kosa8.vm.EarlyPages;
import dev.kosa8.vm.MachineState;
import dev.kosa8.vm.RamFile;
import dev.kosa8.vm.SavedMachine;
import dev.kosa8.vm.Vm;
import dev.kosa8.workspace.WorkspaceServer;
import dev.kosa8.workspace.WorkspaceSnapshot;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.function.Consumer;

/**
 * Takes a checkpoint of one running sandbox, and rewinds it in place: the
 * procedure of docs/checkpoints.md. The instant is the one at which the
 * guest's processes are frozen, the workspace server is idle and QEMU is
 * stopped ({@link Halt}); the root disk (an internal qcow2 snapshot, metadata
 * only: {@link DiskSnapshots}), the devices and the workspace (content and fid
 * table) are taken there, and RAM as it was there is written by a background
 * snapshot while the guest runs on ({@link MachineState}): the pause is the
 * freeze, the workspace and a few milliseconds of QEMU's, not the size of RAM.
 *
 * <p>Every step that changed something pushes its undo onto a {@link
 * Rollback}; when a later one fails the stack unwinds, newest first: the
 * guest runs on, and earlier checkpoints are untouched. A checkpoint exists
 * only once its record is committed, last; the parts of one that was never
 * committed (the daemon or QEMU died half-way) are swept away before the next
 * checkpoint ({@link Leftovers}).
 *
 * <p>A rewind replaces the machine: QEMU cannot load a migration stream into
 * a running process, so the old one quits and a fresh one, started from the
 * saved state by the caller's {@link Undo.Relauncher}, takes its place behind
 * the same sandbox (its id, folder, broker and secrets live in the daemon).
 *
 * <p>The caller holds the sandbox's lock: one checkpoint or rewind at a time.
 */
final class Checkpointer {
    static final Duration FREEZE = Duration.ofSeconds(30);
    static final Duration QMP = Duration.ofMinutes(10);
    /** How long a checkpoint waits for the RAM of a machine restored lazily to be all in place. */
    static final Duration LOADED = Duration.ofMinutes(5);
    /** Room kept beyond the guest's memory size: device state, the workspace's manifests, the file system's own. */
    static final long ROOM_MARGIN_MIB = 64;

    private final Vm vm;
    private final WorkspaceServer workspace;
    private final Path folder;
    private final FolderSnapshots folders;
    /** The held layer's directory (docs/workspace.md, "What can reach the host"), or null: captured with the folder. */
    private final Path heldDir;
    private final FolderSnapshots held;
    /** Where a checkpoint's copy of the held layer is kept, beside the workspace's. */
    static final String HELD = "held";
    private final CheckpointStore store;
    private final RamStore ram;
    private final RamBase ramBase;
    private final Consumer<String> log;

    /**
     * @param workspace the sandbox's 9p server, or null when it shares no folder
     * @param folder    the folder it serves, or null
     */
    Checkpointer(Vm vm, WorkspaceServer workspace, Path folder, Path checkpointDir, Consumer<String> log) {
        this.vm = vm;
        this.workspace = workspace;
        this.folder = folder;
        this.folders = new FolderSnapshots(checkpointDir.resolve("workspace"));
        this.heldDir = workspace == null || workspace.held() == null ? null : workspace.held().dir();
        this.held = new FolderSnapshots(checkpointDir.resolve(HELD));
        this.store = new CheckpointStore(checkpointDir, log);
        this.ram = new RamStore(checkpointDir);
        this.ramBase = new RamBase(store, ram);
        this.log = log;
    }

    /** The checkpoint the machine now comes from: the base its next one shares. */
    private void head(String id) {
        quietly("note the latest checkpoint", () -> ramBase.head(id));
        quietly("forget the first checkpoint's base", ramBase::dropAdopted);
    }

    /** The mark of a checkpoint or rewind under way: left behind when the daemon dies in the middle of one. */
    static Path marker(Path checkpointDir) {
        return checkpointDir.resolve("in-progress");
    }

    /** Marks a checkpoint or rewind under way, and pushes the mark's removal. */
    private Rollback.Entry mark(Rollback rollback) throws IOException {
        Files.createDirectories(store.directory());
        Files.writeString(marker(store.directory()), Long.toString(ProcessHandle.current().pid()));
        return rollback.push("clear the in-progress mark", this::clearMark);
    }

    private void clearMark() throws IOException {
        Files.deleteIfExists(marker(store.directory()));
    }

    /**
     * Fixes a checkpoint's instant: the guest's processes frozen, the
     * workspace captured, the disk snapshot taken, the devices saved, and
     * the guest running again while QEMU writes its RAM as it was at the
     * instant. The checkpoint is recorded pending; the {@link Commit}
     * returned finishes it. The caller holds the sandbox's lock, and no
     * other commit of the sandbox is under way ({@link Commits}).
     */
    Commit instant(String message) {
        String id = CheckpointIds.next(Instant.now());
        Instant created = Instant.now();
        Rollback rollback = new Rollback(log);
        Halt halt = new Halt(vm, workspace, rollback);
        Path temp = store.vmStateTemp(id);
        // RAM in a file (CheckpointMode.FILE_RAM): QEMU saves the devices alone, the daemon copies the file
        boolean fileRam = vm.spec().memoryFile() != null;
        Path memoryTemp = store.memoryTemp(id);
        Steps steps = new Steps("checkpoint", () -> vm.process().pid());
        try {
            Rollback.Entry marked = mark(rollback);
            // a stream a daemon that died left behind ends first: QEMU saves one machine at a time
            MachineState.awaitIdle(vm.qmp(), QMP);
            new Leftovers(vm.qmp(), store, folders, held, ram, log).sweep();
            steps.time("sweep");
            checkRoom(store.directory());
            vm.awaitLoaded(LOADED); // a machine restored lazily is saved once all of its RAM is in
            String baseId = ramBase.base();
            steps.time("ready");
            // the writer process and QEMU's parameters before the pause: in it, only the stream's start. The
            // writer's start (a shell and socat, 0.2-0.4 s on two busy cores) runs beside the workspace's pre-copy
            long[] writerMillis = {0};
            CompletableFuture<MachineState.Saving> writer = CompletableFuture.supplyAsync(() -> {
                long t = System.nanoTime();
                try {
                    Path socket = vm.spec().qmpSocket().resolveSibling("vmstate.sock");
                    return fileRam ? MachineState.prepareDevices(vm.qmp(), socket, temp, QMP)
                            : MachineState.prepareBackground(vm.qmp(), socket, temp, QMP);
                } catch (IOException e) {
                    throw new UncheckedIOException(e);
                } finally {
                    writerMillis[0] = (System.nanoTime() - t) / 1_000_000;
                }
            }, r -> Thread.ofPlatform().daemon().name("kosa8-state-writer").start(r));
            long precopied;
            try {
                precopied = precopy(id, rollback);
            } catch (RuntimeException e) {
                stopUnstarted(writer); // never left listening behind a failure
                throw e;
            }
            MachineState.Saving saving = joinWriter(writer);
            steps.beside("writer", writerMillis[0]);
            // pushed in the reverse of the order they are undone in: the stream is cut before its files go
            rollback.push("delete the unfinished machine state", () -> {
                var keep = RamBase.kept(store);
                keep.remove(id);
                ram.retainOnly(keep);
            });
            rollback.push("delete the unfinished machine state", () -> Files.deleteIfExists(store.vmState(id)));
            rollback.push("delete the unfinished machine state", () -> Files.deleteIfExists(temp));
            rollback.push("delete the unfinished copy of RAM", () -> Files.deleteIfExists(store.memory(id)));
            rollback.push("delete the unfinished copy of RAM", () -> Files.deleteIfExists(memoryTemp));
            rollback.push("cancel the machine state's stream", saving::cancel);
            steps.done("precopy"); // the pre-copy, and any wait for the writer beyond it
            long frozenAt = System.nanoTime(); // the pause starts here: the pre-copy ran with the guest running
            halt.enter(steps);
            WorkspaceSnapshot server = workspace == null ? null : workspace.snapshot();
            FolderSnapshots.Pending scanned = null;
            Rollback.Entry abandon = null;
            if (workspace != null) {
                FolderSnapshots.Pending p = folders.scan(folder, id); // made durable and named once the guest runs
                scanned = p;
                abandon = rollback.push("abandon the workspace snapshot", () -> folders.abandon(p));
            }
            if (heldDir != null) {
                // small (what the guest wrote to held paths): copied whole in the pause
                held.capture(heldDir, id);
                rollback.push("delete the held layer's snapshot", () -> held.delete(id));
            }
            steps.done("workspace");
            DiskSnapshots.take(vm.qmp(), id);
            rollback.push("delete the disk snapshot", () -> DiskSnapshots.delete(vm.qmp(), id));
            steps.done("disk");
            long savedBytes = 0;
            if (fileRam) {
                // the devices saved and the RAM file copied while the machine stands still: without userfaultfd
                // nothing can keep the guest's writes from the copy, so it is made before the guest runs
                rollback.push("end the machine state's stream", saving::cancel);
                saving.start(QMP);
                savedBytes = saving.awaitSaved(QMP);
                // a completed migration let go of the disks (QEMU inactivates them for the destination): a failure
                // from here continues the machine first, which takes them back, before anything touches the disk
                // (the snapshot's deletion writes its metadata)
                Rollback.Entry disksBack = rollback.push("run the machine, its disks taken back from the migration",
                        () -> vm.qmp().execute("cont", Map.of(), QMP));
                steps.done("devices");
                savedBytes += RamFile.copy(vm.spec().memoryFile(), memoryTemp).bytes();
                steps.done("memory");
                halt.resume();
                disksBack.drop();
            } else {
                // QEMU saves the devices, write-protects RAM and runs the machine on by itself. From here a failure
                // ends the stream before anything else is undone: while it runs, a guest write waits for its page
                // to be sent, and the thaw below must not wait on a stream no one will finish
                rollback.push("end the machine state's stream", saving::cancel);
                saving.start(QMP);
                saving.awaitRunning(QMP);
                halt.machineRuns();
                steps.done("devices");
            }
            halt.leave(saving);
            steps.done("thaw");
            long pause = Duration.ofNanos(System.nanoTime() - frozenAt).toMillis();
            Checkpoint pending = new Checkpoint(id, created, message, pause, 0,
                    scanned == null ? 0 : scanned.entries(), precopied + (scanned == null ? 0 : scanned.bytesCopied()),
                    server, steps.millis(), 0, Checkpoint.State.PENDING, "");
            store.save(pending);
            marked.runNow(); // the processes run: a daemon dying from here on leaves a pending record, not a freeze
            steps.done("record");
            return new Commit(new Commit.Parts(pending, saving, temp, fileRam ? memoryTemp : null, savedBytes,
                    scanned, abandon, precopied, baseId, steps, frozenAt), rollback, store, folders, ram, log);
        } catch (Exception e) {
            if (e instanceof InterruptedException) {
                Thread.currentThread().interrupt();
            }
            rollback.unwind();
            quietly("forget the unfinished checkpoint", () -> store.forget(id));
            throw new dev.kosa8.host.KosaException(dev.kosa8.host.KosaException.Kind.VM, "the checkpoint failed: "
                    + e.getMessage() + "; the sandbox runs on and earlier checkpoints are intact",
                    hint(String.valueOf(e.getMessage())), e);
        }
    }

    /**
     * Copies the workspace's changed files into the store while the guest
     * still runs, as a snapshot of its own, so that the capture in the pause
     * finds their content known and reads only what changed in between (as
     * QEMU's pre-copy migration does for RAM). Without it the first
     * checkpoint of a 200 MB workspace stood still for the whole copy
     * (bench/history/undo.md, run 2). A file that changes while it is read
     * fails only the pre-copy: the capture in the pause then reads it. The pre-copy's
     * manifest is deleted once the checkpoint's is committed (the objects
     * stay, named by it); a leftover one is swept like any unfinished part.
     */
    private long precopy(String id, Rollback rollback) {
        if (workspace == null) {
            return 0;
        }
        rollback.push("delete the workspace's pre-copy", () -> {
            if (folders.ids().contains(precopyId(id))) {
                folders.delete(precopyId(id));
            }
        });
        try {
            return folders.capture(folder, precopyId(id)).bytesCopied();
        } catch (IOException | RuntimeException e) {
            log.accept("workspace pre-copy skipped: " + e.getMessage());
            return 0;
        }
    }

    /** The writer started beside the pre-copy; its failure as it was thrown. */
    private static MachineState.Saving joinWriter(CompletableFuture<MachineState.Saving> writer)
            throws IOException {
        try {
            return writer.join();
        } catch (CompletionException e) {
            if (e.getCause() instanceof UncheckedIOException u) {
                throw u.getCause();
            }
            if (e.getCause() instanceof RuntimeException r) {
                throw r;
            }
            throw e;
        }
    }

    /** Stops a writer started beside the pre-copy that failed; QEMU never connected to it. */
    private static void stopUnstarted(CompletableFuture<MachineState.Saving> writer) {
        try {
            joinWriter(writer).cancel();
        } catch (IOException | RuntimeException e) {
            // it never started: nothing to stop
        }
    }

    static String precopyId(String id) {
        return id + ".pre";
    }

    /**
     * Puts the whole machine back to checkpoint {@code c}: the old QEMU
     * quits, the root disk goes back to the checkpoint's snapshot, the
     * workspace's content is restored, and {@code relauncher} starts a fresh
     * QEMU from the saved RAM and devices with the fid table of the
     * instant; the guest's clock is set to now and its random generator
     * reseeded with fresh host bytes (the same RAM restored twice must not
     * draw the same numbers), then its processes, frozen at the checkpoint's
     * instant, run on.
     *
     * <p>Until the old QEMU quits, a failure leaves the sandbox running as
     * it was. After it, the sandbox has no machine until a relaunch works:
     * the exception says so, and the checkpoint is intact for another try.
     *
     * @return how long each step took
     */
    Map<String, Long> rewind(Checkpoint c, Undo.Relauncher relauncher) {
        Vm[] current = {vm}; // the QEMU a crash point kills: the new one, once it is started
        Steps steps = new Steps("rewind", () -> current[0].process().pid());
        Rollback rollback = new Rollback(log);
        boolean replaced = false;
        SavedMachine state = null;
        try {
            // its pages open beside the steps before the new QEMU can take them
            state = EarlyPages.of(RamBase.savedMachine(store.directory(), c));
            if (state instanceof dev.kosa8.vm.FileRamMachine) {
                // its RAM is copied back for the new machine after the old one has quit: the room is checked while
                // the sandbox still runs as it was
                checkRoom(store.directory());
            }
            mark(rollback);
            // the state is about to be replaced, so its processes need not be frozen: the machine stops where it
            // stands (QMP stop, milliseconds, where the agent's freezer cost 30-60 ms under TCG), and only the
            // workspace server must be idle
            Rollback.Entry cont = rollback.push("run the machine on",
                    () -> vm.qmp().execute("cont", Map.of(), QMP));
            vm.qmp().execute("stop", Map.of(), QMP);
            steps.done("stop");
            Rollback.Entry resume = workspace == null ? null
                    : rollback.push("resume the workspace server", workspace::resume);
            if (workspace != null && !workspace.pause(Duration.ofSeconds(10))) {
                throw new IOException("the workspace server did not become idle within 10 s");
            }
            steps.done("idle");
            vm.agent().rewound(c.id());
            replaced = true; // from here the old machine is let go of, never run on
            cont.drop();
            if (resume != null) {
                resume.drop();
            }
            // the folder goes back beside the old QEMU's end, the disk's revert, the new QEMU's start and the
            // guest's first steps (they share nothing, the machine is stopped and the server idle, and the new
            // server reads no request of the guest's before it is done)
            CompletableFuture<Long> folderBack = restoreFolderBeside(c.id());
            try {
                // the old QEMU's memory is freed beside the next steps: only its files must be let go of first
                vm.quitReleasing(Duration.ofSeconds(10));
                if (workspace != null) {
                    workspace.close();
                }
                steps.done("quit");
                DiskSnapshots.revert(vm.spec().rootDisk(), c.id(), vm.spec().consoleLog().resolveSibling("qemu.log"));
                steps.done("disk");
                Vm next = relauncher.relaunch(state, c.server(), () -> steps.beside("workspace",
                        joinFolder(folderBack)));
                current[0] = next;
                steps.done("load");
                steps.split("load", "wake", next.wakeMillis());
                next.loadRest();
                steps.point("loaded");
                head(c.id());
                clearMark();
                return steps.millis();
            } finally {
                try {
                    folderBack.join(); // never left writing the folder behind a failure
                } catch (CompletionException e) {
                    // reported where it was waited for, or by the failure that came first
                }
            }
        } catch (Exception e) {
            if (e instanceof InterruptedException) {
                Thread.currentThread().interrupt();
            }
            rollback.unwind();
            throw new dev.kosa8.host.KosaException(dev.kosa8.host.KosaException.Kind.VM, "the rewind to " + c.id()
                    + " failed: " + e.getMessage()
                    + (replaced ? "; the sandbox's machine is stopped" : "; the sandbox runs on as it was"),
                    replaced ? "the checkpoint is intact: `kosa8 start` the sandbox and rewind again"
                            : "the checkpoint is intact; try again", e);
        } finally {
            if (state instanceof EarlyPages early) {
                early.close(); // its pages, if no load took them
            }
        }
    }

    /**
     * Puts the folder back to checkpoint {@code id} on a thread of its own;
     * the future gives how long it took (0 without a workspace). Not the
     * common pool: a task there (the watch of the old QEMU's exit) waits for
     * the sandbox's lock, which a rewind holds while it waits for the folder.
     */
    private CompletableFuture<Long> restoreFolderBeside(String id) {
        if (workspace == null) {
            return CompletableFuture.completedFuture(0L);
        }
        return CompletableFuture.supplyAsync(() -> {
            long t = System.nanoTime();
            try {
                folders.restore(id, folder);
                if (heldDir != null && held.ids().contains(id)) {
                    held.restore(id, heldDir); // what was held at that instant; the server reads it back
                }
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
            return (System.nanoTime() - t) / 1_000_000;
        }, r -> Thread.ofPlatform().daemon().name("kosa8-folder-restore").start(r));
    }

    /** Waits for a folder being put back; its failure, said plainly. */
    private static long joinFolder(CompletableFuture<Long> folderBack) {
        try {
            return folderBack.join();
        } catch (CompletionException e) {
            Throwable cause = e.getCause() instanceof UncheckedIOException u ? u.getCause() : e.getCause();
            throw new IllegalStateException("the workspace folder could not be put back: " + cause.getMessage(), cause);
        }
    }

    /**
     * Pauses the machine to disk for {@code kosa8 stop}: the same instant as
     * a checkpoint (frozen, idle, stopped), then RAM and devices written
     * while the machine stays stopped, with the workspace server's fid
     * table. The caller then quits QEMU; the processes stay frozen in the
     * saved state until {@code start} thaws them. The folder itself is not
     * saved: it is the user's and lives on while the sandbox is stopped (fids
     * of files deleted meanwhile answer errors after the resume).
     *
     * <p>On failure the machine runs on as before and nothing is left.
     */
    Map<String, Long> suspend(Suspension target) {
        Steps steps = new Steps("stop", () -> vm.process().pid());
        Rollback rollback = new Rollback(log);
        Halt halt = new Halt(vm, workspace, rollback);
        try {
            rollback.push("remove the unfinished suspension", target::discard);
            target.prepare();
            checkRoom(target.state().getParent());
            vm.awaitLoaded(LOADED);
            halt.enter(steps);
            WorkspaceSnapshot server = workspace == null ? null : workspace.snapshot();
            MachineState.saveStopped(vm.qmp(), vm.spec().qmpSocket().resolveSibling("vmstate.sock"),
                    target.stateTemp(), QMP);
            steps.done("save");
            target.commit(new Suspension.Record(Instant.now(), server));
            steps.done("commit");
            return steps.millis();
        } catch (Exception e) {
            if (e instanceof InterruptedException) {
                Thread.currentThread().interrupt();
            }
            rollback.unwind();
            throw new dev.kosa8.host.KosaException(dev.kosa8.host.KosaException.Kind.VM,
                    "cannot save the running machine to disk: " + e.getMessage(), hint(String.valueOf(e.getMessage())), e);
        }
    }

    /**
     * Refuses to start saving a machine whose RAM might not fit: the stream
     * holds up to all of the guest's memory. Checked before anything stops,
     * because a stream that fails half-way is the one failure QEMU 7.2 does
     * not recover from (see {@link MachineState#receive}); the writer drains
     * the stream even then, so a disk filled by someone else meanwhile is
     * still only a failed checkpoint.
     */
    private void checkRoom(Path dir) throws IOException {
        long need = (vm.spec().memoryMiB() + ROOM_MARGIN_MIB) << 20;
        long free = Files.getFileStore(dir).getUsableSpace();
        if (free < need) {
            throw new IOException("No space left on device for the machine's state: " + (free >> 20)
                    + " MiB free in " + dir + ", and the guest's " + vm.spec().memoryMiB() + " MiB of memory need up to "
                    + (need >> 20) + " MiB");
        }
    }

    /** Removes a checkpoint: its record first (then it no longer exists), then its parts. */
    void remove(Checkpoint c) throws IOException {
        store.forget(c.id());
        DiskSnapshots.delete(vm.qmp(), c.id());
        Files.deleteIfExists(store.vmState(c.id()));
        Files.deleteIfExists(store.memory(c.id()));
        ram.retainOnly(RamBase.kept(store));
        if (folders.ids().contains(c.id())) {
            folders.delete(c.id());
        }
        if (held.ids().contains(c.id())) {
            held.delete(c.id());
        }
    }

    /**
     * Removes a checkpoint of a sandbox whose machine is not running: its
     * record first, then the disk snapshot through {@code qemu-img} (no QEMU
     * holds the disk), its machine state and its workspace snapshot.
     */
    static void removeOffline(Path checkpointDir, Path disk, Checkpoint c) throws IOException {
        CheckpointStore store = new CheckpointStore(checkpointDir);
        store.forget(c.id());
        DiskSnapshots.deleteOffline(disk, c.id());
        Files.deleteIfExists(store.vmState(c.id()));
        Files.deleteIfExists(store.memory(c.id()));
        new RamStore(checkpointDir).retainOnly(RamBase.kept(store));
        FolderSnapshots folders = new FolderSnapshots(checkpointDir.resolve("workspace"));
        if (folders.ids().contains(c.id())) {
            folders.delete(c.id());
        }
        FolderSnapshots held = new FolderSnapshots(checkpointDir.resolve(HELD));
        if (held.ids().contains(c.id())) {
            held.delete(c.id());
        }
    }

    private void quietly(String what, Rollback.Action step) {
        try {
            step.run();
        } catch (Exception e) {
            log.accept("checkpoint cleanup: cannot " + what + ": " + e.getMessage());
        }
    }

    static String hint(String m) {
        if (m.contains("No space") || m.contains("ENOSPC")) {
            return "free space on the disk that holds the sandbox, then try again";
        }
        return "see the daemon's log; try again";
    }
}
