package dev.kosa8.checkpoint;

import com.fasterxml.jackson.databind.JsonNode;
import dev.kosa8.checkpoint.ram.RamStore;
import dev.kosa8.host.HostCommand;
import dev.kosa8.host.KosaException;
import dev.kosa8.vm.GuestCommand;
import dev.kosa8.vm.MachineState;
import dev.kosa8.vm.SavedMachine;
import dev.kosa8.vm.Vm;
import dev.kosa8.workspace.WorkspaceServer;
import dev.kosa8.workspace.WorkspaceSnapshot;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Consumer;

/**
 * Takes a checkpoint of one running sandbox, and rewinds it in place: the
 * procedure of docs/checkpoints.md. The instant is the one at which the
 * guest's processes are frozen, the workspace server is idle and QEMU is
 * stopped; the root disk (an internal qcow2 snapshot, metadata only), the
 * devices and the workspace (content and fid table) are taken there, and RAM
 * as it was there is written by a background snapshot while the guest runs
 * on ({@link MachineState}): the pause is the freeze, the workspace and a few
 * milliseconds of QEMU's, not the size of RAM.
 *
 * <p>Every step that changed something is undone when a later one fails, in
 * reverse: the guest runs on, and earlier checkpoints are untouched. A
 * checkpoint exists only once its record is committed, last; the parts of
 * one that was never committed (the daemon or QEMU died half-way) are swept
 * away before the next checkpoint.
 *
 * <p>A rewind replaces the machine: QEMU cannot load a migration stream into
 * a running process, so the old one quits and a fresh one, started from the
 * saved state by the caller's {@link Relauncher}, takes its place behind the
 * same sandbox (its id, folder, broker and secrets live in the daemon).
 *
 * <p>The caller holds the sandbox's lock: one checkpoint or rewind at a time.
 */
public final class Checkpointer {
    static final Duration FREEZE = Duration.ofSeconds(30);
    static final Duration QMP = Duration.ofMinutes(10);
    /** How long a checkpoint waits for the RAM of a machine restored lazily to be all in place. */
    static final Duration LOADED = Duration.ofMinutes(5);
    /** Room kept beyond the guest's memory size: device state, the workspace's manifests, the file system's own. */
    static final long ROOM_MARGIN_MIB = 64;

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

    /** A finished rewind: the machine now behind the sandbox, and how long each step took. */
    public record Rewound(Vm vm, Map<String, Long> stepMillis) {
    }

    private final Vm vm;
    private final WorkspaceServer workspace;
    private final Path folder;
    private final FolderSnapshots folders;
    private final CheckpointStore store;
    private final RamStore ram;
    private final Consumer<String> log;

    /**
     * @param workspace the sandbox's 9p server, or null when it shares no folder
     * @param folder    the folder it serves, or null
     */
    public Checkpointer(Vm vm, WorkspaceServer workspace, Path folder, Path checkpointDir, Consumer<String> log) {
        this.vm = vm;
        this.workspace = workspace;
        this.folder = folder;
        this.folders = new FolderSnapshots(checkpointDir.resolve("workspace"));
        this.store = new CheckpointStore(checkpointDir);
        this.ram = new RamStore(checkpointDir);
        this.log = log;
    }

    /**
     * Checkpoint {@code c}'s RAM and devices as QEMU loads them: put together
     * from its pages ({@link RamStore}), or its whole stream where that was
     * kept.
     */
    public static SavedMachine savedMachine(Path checkpointDir, Checkpoint c) throws IOException {
        RamStore ram = new RamStore(checkpointDir);
        if (ram.has(c.id())) {
            return ram.open(c.id());
        }
        Path whole = new CheckpointStore(checkpointDir).vmState(c.id());
        if (!Files.isRegularFile(whole)) {
            throw new IOException("the machine state of checkpoint " + c.id() + " is missing"
                    + " (checkpoints taken by kosa8 before 2026-11-30 kept it in the disk image; take a new one)");
        }
        return SavedMachine.file(whole);
    }

    /** The checkpoint the running machine last came from (taken or rewound to): the base its next one shares. */
    private Path head() {
        return store.directory().resolve("head");
    }

    private void head(String id) {
        quietly("note the latest checkpoint", () -> Files.writeString(head(), id));
        quietly("forget the first checkpoint's base", () -> Files.deleteIfExists(adopted(store.directory())));
    }

    /** Names the RAM image linked in from elsewhere ({@link #startFrom}) while no checkpoint has been taken since. */
    private static Path adopted(Path checkpointDir) {
        return checkpointDir.resolve("base");
    }

    /**
     * Makes the machine a new sandbox was restored from the base of its first
     * checkpoint: a booted template's, or for a fork the parent's checkpoint.
     * Its RAM image and the packs it uses (kept as pages in
     * {@code otherCheckpointDir} under {@code ramId}) are linked into the
     * sandbox's store ({@link RamStore#adopt}) and named in {@code base}, so
     * that checkpoint stores only the pages changed since, not all RAM in
     * use. Without it nothing is lost but the sharing: the reason goes to the
     * log.
     *
     * @param template whether the other is a template, whose list of pages to send first is then shared
     *                 ({@link RamStore#adopt(RamStore, String, boolean)})
     */
    public static void startFrom(Path checkpointDir, Path otherCheckpointDir, String ramId, boolean template,
                                 Consumer<String> log) {
        try {
            if (new RamStore(checkpointDir).adopt(new RamStore(otherCheckpointDir), ramId, template)) {
                Files.writeString(adopted(checkpointDir), ramId);
            }
        } catch (IOException e) {
            log.accept("the RAM the machine was restored from cannot be its first checkpoint's base ("
                    + e.getMessage() + "); that checkpoint stores all RAM in use");
        }
    }

    /** The checkpoint whose pages the next one compares with: {@link #head}, the adopted base, else the newest. */
    private String base() throws IOException {
        for (Path named : List.of(head(), adopted(store.directory()))) {
            if (Files.isRegularFile(named)) {
                String id = Files.readString(named).strip();
                if (ram.has(id)) {
                    return id;
                }
            }
        }
        String newest = null;
        for (Checkpoint c : store.list()) {
            if (ram.has(c.id())) {
                newest = c.id();
            }
        }
        return newest;
    }

    /**
     * The RAM images to keep: every committed checkpoint's, and the adopted
     * base until a checkpoint is taken or rewound to. A head naming a removed
     * checkpoint keeps nothing: removing a checkpoint frees its pages.
     */
    private static Set<String> ramKept(CheckpointStore store) throws IOException {
        Set<String> keep = new java.util.HashSet<>(store.ids());
        Path base = adopted(store.directory());
        if (Files.isRegularFile(base)) {
            keep.add(Files.readString(base).strip());
        }
        return keep;
    }

    /**
     * Keeps checkpoint {@code id}'s RAM as pages, only the changed ones
     * written ({@link RamStore}); a stream that cannot be taken apart is kept
     * whole, and says why in the log. Returns the bytes it takes on disk.
     */
    private long storePages(String id, long streamBytes) {
        try {
            return ram.store(id, store.vmState(id), base());
        } catch (IOException e) {
            log.accept("checkpoint " + id + ": its RAM is kept as one stream (" + e.getMessage() + ")");
            return streamBytes;
        }
    }

    public CheckpointStore store() {
        return store;
    }

    /** The mark of a checkpoint or rewind under way: left behind when the daemon dies in the middle of one. */
    private static Path marker(Path checkpointDir) {
        return checkpointDir.resolve("in-progress");
    }

    /** Whether a daemon died in the middle of a checkpoint or rewind of this sandbox (its processes may be frozen). */
    public static boolean wasInterrupted(Path checkpointDir) {
        return Files.exists(marker(checkpointDir));
    }

    public static void clearInterrupted(Path checkpointDir) throws IOException {
        Files.deleteIfExists(marker(checkpointDir));
    }

    private void mark() throws IOException {
        Files.createDirectories(store.directory());
        Files.writeString(marker(store.directory()), Long.toString(ProcessHandle.current().pid()));
    }

    public Checkpoint checkpoint(String message) {
        sweep();
        String id = CheckpointIds.next(Instant.now());
        Instant created = Instant.now();
        long start = System.nanoTime();
        Halt halt = new Halt();
        boolean folderSaved = false;
        boolean diskSaved = false;
        FolderSnapshots.Pending scanned = null;
        MachineState.Saving saving = null;
        Path temp = store.vmStateTemp(id);
        Steps steps = new Steps();
        try {
            mark();
            checkRoom(store.directory());
            vm.awaitLoaded(LOADED); // a machine restored lazily is saved once all of its RAM is in
            long precopied = precopy(id);
            // the writer process and QEMU's parameters before the pause: in it, only the stream's start
            saving = MachineState.prepareBackground(vm.qmp(), vm.spec().qmpSocket().resolveSibling("vmstate.sock"),
                    temp, QMP);
            steps.done("precopy");
            long frozenAt = System.nanoTime(); // the pause starts here: the pre-copy ran with the guest running
            halt.enter(steps);
            WorkspaceSnapshot server = workspace == null ? null : workspace.snapshot();
            if (workspace != null) {
                scanned = folders.scan(folder, id); // made durable and named once the guest runs again
            }
            steps.done("workspace");
            vm.qmp().execute("blockdev-snapshot-internal-sync", Map.of("device", "root", "name", id), QMP);
            diskSaved = true;
            steps.done("disk");
            // QEMU saves the devices, write-protects RAM and runs the machine on by itself
            saving.start(QMP);
            saving.awaitRunning(QMP);
            halt.machineRuns();
            steps.done("devices");
            halt.leave();
            steps.done("thaw");
            long pause = Duration.ofNanos(System.nanoTime() - frozenAt).toMillis();
            Capture capture = null;
            if (scanned != null) {
                capture = folders.commit(scanned);
                folderSaved = true;
            }
            steps.done("workspace-commit");
            if (workspace != null) {
                quietly("delete the workspace's pre-copy", () -> folders.delete(precopyId(id)));
            }
            long bytes = saving.awaitSaved(QMP);
            Files.move(temp, store.vmState(id), StandardCopyOption.ATOMIC_MOVE);
            steps.done("ram");
            bytes = storePages(id, bytes);
            steps.done("pages");
            Checkpoint c = new Checkpoint(id, created, message, pause, bytes,
                    capture == null ? 0 : capture.entries(), precopied + (capture == null ? 0 : capture.bytesCopied()),
                    server,
                    steps.millis(), Duration.ofNanos(System.nanoTime() - start).toMillis());
            store.commit(c);
            head(id);
            clearInterrupted(store.directory());
            return c;
        } catch (IOException | RuntimeException | InterruptedException e) {
            if (e instanceof InterruptedException) {
                Thread.currentThread().interrupt();
            }
            // undo, newest step first; each undo on its own, so one failing does not skip the rest
            if (saving != null) {
                saving.cancel();
            }
            quietly("delete the unfinished machine state", () -> Files.deleteIfExists(temp));
            quietly("delete the unfinished machine state", () -> Files.deleteIfExists(store.vmState(id)));
            quietly("delete the unfinished machine state", () -> ram.retainOnly(ramKept(store)));
            if (diskSaved) {
                quietly("delete the disk snapshot", () -> deleteDiskSnapshot(id));
            }
            if (folderSaved) {
                quietly("delete the workspace snapshot", () -> folders.delete(id));
            } else if (scanned != null) {
                folders.abandon(scanned);
            }
            if (workspace != null) {
                quietly("delete the workspace's pre-copy", () -> {
                    if (folders.ids().contains(precopyId(id))) {
                        folders.delete(precopyId(id));
                    }
                });
            }
            halt.undo();
            quietly("clear the in-progress mark", () -> clearInterrupted(store.directory()));
            throw new KosaException(KosaException.Kind.VM, "the checkpoint failed: " + e.getMessage()
                    + "; the sandbox runs on and earlier checkpoints are intact", hint(e), e);
        }
    }

    /**
     * Copies the workspace's changed files into the store while the guest
     * still runs, as a snapshot of its own, so that the capture in the pause
     * finds their content known and reads only what changed in between (as
     * QEMU's pre-copy migration does for RAM). Without it the first
     * checkpoint of a 200 MB workspace stood still for the whole copy
     * (bench/history/undo.md, run 2). A file that changes while it is read fails only the
     * pre-copy: the capture in the pause then reads it. The pre-copy's
     * manifest is deleted once the checkpoint's is committed (the objects
     * stay, named by it); a leftover one is swept like any unfinished part.
     */
    private long precopy(String id) {
        if (workspace == null) {
            return 0;
        }
        try {
            return folders.capture(folder, precopyId(id)).bytesCopied();
        } catch (IOException | RuntimeException e) {
            log.accept("workspace pre-copy skipped: " + e.getMessage());
            return 0;
        }
    }

    private static String precopyId(String id) {
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
     */
    public Rewound rewind(Checkpoint c, Relauncher relauncher) {
        Steps steps = new Steps();
        boolean replaced = false;
        SavedMachine state = null;
        try {
            // its pages open beside the steps before the new QEMU can take them
            state = dev.kosa8.vm.EarlyPages.of(savedMachine(store.directory(), c));
            mark();
            // the state is about to be replaced, so its processes need not be frozen: the machine stops where it
            // stands (QMP stop, milliseconds, where the agent's freezer cost 30-60 ms under TCG), and only the
            // workspace server must be idle
            vm.qmp().execute("stop", Map.of(), QMP);
            steps.done("stop");
            if (workspace != null && !workspace.pause(Duration.ofSeconds(10))) {
                throw new IOException("the workspace server did not become idle within 10 s");
            }
            steps.done("idle");
            vm.agent().failOpenChannels("the sandbox was rewound to checkpoint " + c.id());
            replaced = true;
            // the folder goes back beside the old QEMU's end, the disk's revert, the new QEMU's start and the
            // guest's first steps (they share nothing, the machine is stopped and the server idle, and the new
            // server reads no request of the guest's before it is done)
            java.util.concurrent.CompletableFuture<Long> folderBack = restoreFolderBeside(c.id());
            try {
                // the old QEMU's memory is freed beside the next steps: only its files must be let go of first
                vm.quitReleasing(Duration.ofSeconds(10));
                if (workspace != null) {
                    workspace.close();
                }
                steps.done("quit");
                HostCommand.of("qemu-img", "snapshot", "-a", c.id(), vm.spec().rootDisk().toString())
                        .logTo(vm.spec().consoleLog().resolveSibling("qemu.log"))
                        .timeout(Duration.ofMinutes(5))
                        .run(KosaException.Kind.VM, "putting the root disk back to " + c.id());
                steps.done("disk");
                Vm next = relauncher.relaunch(state, c.server(), () -> steps.beside("workspace", joinFolder(folderBack)));
                steps.done("load");
                steps.split("load", "wake", next.wakeMillis());
                next.loadRest();
                head(c.id());
                clearInterrupted(store.directory());
                return new Rewound(next, steps.millis());
            } finally {
                try {
                    folderBack.join(); // never left writing the folder behind a failure
                } catch (java.util.concurrent.CompletionException e) {
                    // reported where it was waited for, or by the failure that came first
                }
            }
        } catch (IOException | RuntimeException | InterruptedException e) {
            if (e instanceof InterruptedException) {
                Thread.currentThread().interrupt();
            }
            if (!replaced) {
                if (workspace != null) {
                    workspace.resume();
                }
                quietly("run the machine on", () -> vm.qmp().execute("cont", Map.of(), QMP));
            }
            quietly("clear the in-progress mark", () -> clearInterrupted(store.directory()));
            throw new KosaException(KosaException.Kind.VM, "the rewind to " + c.id() + " failed: " + e.getMessage()
                    + (replaced ? "; the sandbox's machine is stopped" : "; the sandbox runs on as it was"),
                    replaced ? "the checkpoint is intact: `kosa8 start` the sandbox and rewind again"
                            : "the checkpoint is intact; try again", e);
        } finally {
            if (state instanceof dev.kosa8.vm.EarlyPages early) {
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
    private java.util.concurrent.CompletableFuture<Long> restoreFolderBeside(String id) {
        if (workspace == null) {
            return java.util.concurrent.CompletableFuture.completedFuture(0L);
        }
        return java.util.concurrent.CompletableFuture.supplyAsync(() -> {
            long t = System.nanoTime();
            try {
                folders.restore(id, folder);
            } catch (IOException e) {
                throw new java.io.UncheckedIOException(e);
            }
            return (System.nanoTime() - t) / 1_000_000;
        }, r -> Thread.ofPlatform().daemon().name("kosa8-folder-restore").start(r));
    }

    /** Waits for a folder being put back; its failure, said plainly. */
    private static long joinFolder(java.util.concurrent.CompletableFuture<Long> folderBack) {
        try {
            return folderBack.join();
        } catch (java.util.concurrent.CompletionException e) {
            Throwable cause = e.getCause() instanceof java.io.UncheckedIOException u ? u.getCause() : e.getCause();
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
    public Map<String, Long> suspend(Suspension target) {
        Steps steps = new Steps();
        Halt halt = new Halt();
        try {
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
        } catch (IOException | RuntimeException | InterruptedException e) {
            if (e instanceof InterruptedException) {
                Thread.currentThread().interrupt();
            }
            quietly("remove the unfinished suspension", target::discard);
            halt.undo();
            throw new KosaException(KosaException.Kind.VM, "cannot save the running machine to disk: "
                    + e.getMessage(), hint(e), e);
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
    public void remove(Checkpoint c) throws IOException {
        store.forget(c.id());
        deleteDiskSnapshot(c.id());
        Files.deleteIfExists(store.vmState(c.id()));
        ram.retainOnly(ramKept(store));
        if (folders.ids().contains(c.id())) {
            folders.delete(c.id());
        }
    }

    /**
     * Removes a checkpoint of a sandbox whose machine is not running: its
     * record first, then the disk snapshot through {@code qemu-img} (no QEMU
     * holds the disk), its machine state and its workspace snapshot.
     */
    public static void removeOffline(Path checkpointDir, Path disk, Checkpoint c) throws IOException {
        CheckpointStore store = new CheckpointStore(checkpointDir);
        store.forget(c.id());
        String listed = HostCommand.of("qemu-img", "snapshot", "-l", disk.toString())
                .run(KosaException.Kind.VM, "listing the disk's snapshots");
        if (listed.lines().anyMatch(l -> l.trim().split("\\s+").length > 1 && l.trim().split("\\s+")[1].equals(c.id()))) {
            HostCommand.of("qemu-img", "snapshot", "-d", c.id(), disk.toString())
                    .run(KosaException.Kind.VM, "deleting the disk snapshot of " + c.id());
        }
        Files.deleteIfExists(store.vmState(c.id()));
        new RamStore(checkpointDir).retainOnly(ramKept(store));
        FolderSnapshots folders = new FolderSnapshots(checkpointDir.resolve("workspace"));
        if (folders.ids().contains(c.id())) {
            folders.delete(c.id());
        }
    }

    /** The parts of checkpoints that were never committed: a daemon or QEMU that died half-way left them. */
    private void sweep() {
        try {
            Set<String> committed = store.ids();
            for (String tag : vmSnapshotTags()) {
                if (CheckpointIds.isValid(tag) && !committed.contains(tag)) {
                    log.accept("removing the disk snapshot of an unfinished checkpoint " + tag);
                    deleteDiskSnapshot(tag);
                }
            }
            if (Files.isDirectory(store.directory())) {
                try (var files = Files.list(store.directory())) {
                    for (Path f : files.toList()) {
                        String name = f.getFileName().toString();
                        int dot = name.indexOf('.');
                        if (dot > 0 && name.substring(dot).startsWith(".vmstate")
                                && !committed.contains(name.substring(0, dot))) {
                            log.accept("removing the machine state of an unfinished checkpoint " + name);
                            Files.deleteIfExists(f);
                        }
                    }
                }
            }
            for (String id : folders.ids()) {
                if (!committed.contains(id)) {
                    log.accept("removing the workspace snapshot of an unfinished checkpoint " + id);
                    folders.delete(id);
                }
            }
            ram.retainOnly(ramKept(store));
        } catch (IOException | RuntimeException e) {
            log.accept("cannot sweep unfinished checkpoints: " + e.getMessage());
        }
    }

    private List<JsonNode> vmSnapshots() {
        JsonNode blocks = vm.qmp().execute("query-block", Map.of(), QMP);
        List<JsonNode> all = new java.util.ArrayList<>();
        for (JsonNode b : blocks) {
            for (JsonNode s : b.path("inserted").path("image").path("snapshots")) {
                all.add(s);
            }
        }
        return all;
    }

    private List<String> vmSnapshotTags() {
        return vmSnapshots().stream().map(s -> s.path("name").asText()).toList();
    }

    /** Removes the root disk's snapshot {@code id}; the savevm-era ones, which hold RAM too, go the same way. */
    private void deleteDiskSnapshot(String id) {
        if (vmSnapshotTags().contains(id)) {
            vm.qmp().execute("blockdev-snapshot-delete-internal-sync", Map.of("device", "root", "name", id), QMP);
        }
    }

    private void qmp(String command) {
        vm.qmp().execute(command, Map.of(), QMP);
    }

    /**
     * The instant's three holds, taken in order (the guest's processes
     * frozen, the 9p server idle, QEMU stopped) and given back newest first,
     * each only if it was taken: the same for a checkpoint and a pause to
     * disk.
     */
    private final class Halt {
        private boolean frozen;
        private boolean paused;
        private boolean stopped;

        void enter(Steps steps) throws IOException, InterruptedException {
            GuestCommand.freeze(vm.agent(), FREEZE);
            frozen = true;
            steps.done("freeze");
            if (workspace != null) {
                // settled: also every read window slot back, since this machine goes on from here
                if (!workspace.pauseSettled(Duration.ofSeconds(10))) {
                    throw new IOException("the workspace server did not become idle within 10 s");
                }
                paused = true;
            }
            steps.done("idle");
            qmp("stop");
            stopped = true;
            steps.done("stop");
        }

        /** QEMU runs the machine again by itself (a background snapshot's start). */
        void machineRuns() {
            stopped = false;
        }

        /** The machine runs: the server serves again and the processes thaw. */
        void leave() {
            if (paused) {
                workspace.resume();
                paused = false;
            }
            GuestCommand.thaw(vm.agent(), 0, new byte[0], FREEZE);
            frozen = false;
        }

        /** After a failure: whatever is still held is given back, each on its own. */
        void undo() {
            if (stopped) {
                quietly("resume the machine", () -> qmp("cont"));
            }
            if (paused) {
                workspace.resume();
            }
            if (frozen) {
                quietly("thaw the guest", () -> GuestCommand.thaw(vm.agent(), 0, new byte[0], FREEZE));
            }
        }
    }

    /** Wall-clock time per step, for the record and the benchmark. */
    private static final class Steps {
        private final Map<String, Long> millis = new java.util.LinkedHashMap<>();
        private long last = System.nanoTime();

        void done(String step) {
            long now = System.nanoTime();
            millis.put(step, (now - last) / 1_000_000);
            last = now;
        }

        /** Splits the last part of {@code step}, {@code millis} long, off as the step {@code last}. */
        void split(String step, String last, long lastMillis) {
            long whole = millis.getOrDefault(step, 0L);
            long tail = Math.min(lastMillis, whole);
            millis.put(step, whole - tail);
            millis.put(last, tail);
        }

        /** A step that ran beside the others, by its own duration; the sequence's clock is not moved. */
        void beside(String step, long ms) {
            millis.put(step, ms);
        }

        Map<String, Long> millis() {
            return millis;
        }
    }

    private interface Step {
        void run() throws Exception;
    }

    private void quietly(String what, Step step) {
        try {
            step.run();
        } catch (Exception e) {
            log.accept("checkpoint cleanup: cannot " + what + ": " + e.getMessage());
        }
    }

    private static String hint(Exception e) {
        String m = String.valueOf(e.getMessage());
        if (m.contains("No space") || m.contains("ENOSPC")) {
            return "free space on the disk that holds the sandbox, then try again";
        }
        return "see the daemon's log; try again";
    }
}
