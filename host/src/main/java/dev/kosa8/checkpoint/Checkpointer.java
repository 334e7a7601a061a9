package dev.kosa8.checkpoint;

import com.fasterxml.jackson.databind.JsonNode;
import dev.kosa8.host.KosaException;
import dev.kosa8.vm.GuestCommand;
import dev.kosa8.vm.Vm;
import dev.kosa8.workspace.WorkspaceServer;
import dev.kosa8.workspace.WorkspaceSnapshot;
import java.io.IOException;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.time.Duration;
import java.time.Instant;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Consumer;

/**
 * Takes a checkpoint of one running sandbox, and rewinds it in place: the
 * procedure of docs/checkpoints.md. The instant is the one at which the
 * guest's processes are frozen, the workspace server is idle and QEMU is
 * stopped; RAM, devices and root disk (QEMU's {@code savevm}, into the
 * sandbox's qcow2) and the workspace (content and fid table) are all taken
 * there.
 *
 * <p>Every step that changed something is undone when a later one fails, in
 * reverse: the guest runs on, and earlier checkpoints are untouched. A
 * checkpoint exists only once its record is committed, last; the parts of
 * one that was never committed (the daemon or QEMU died half-way) are swept
 * away before the next checkpoint.
 *
 * <p>The caller holds the sandbox's lock: one checkpoint or rewind at a time.
 */
public final class Checkpointer {
    static final Duration FREEZE = Duration.ofSeconds(30);
    static final Duration QMP = Duration.ofMinutes(10);
    private static final SecureRandom RANDOM = new SecureRandom();

    private final Vm vm;
    private final WorkspaceServer workspace;
    private final Path folder;
    private final FolderSnapshots folders;
    private final CheckpointStore store;
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
        this.log = log;
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
        return java.nio.file.Files.exists(marker(checkpointDir));
    }

    public static void clearInterrupted(Path checkpointDir) throws IOException {
        java.nio.file.Files.deleteIfExists(marker(checkpointDir));
    }

    private void mark() throws IOException {
        java.nio.file.Files.createDirectories(store.directory());
        java.nio.file.Files.writeString(marker(store.directory()), Long.toString(ProcessHandle.current().pid()));
    }

    public Checkpoint checkpoint(String message) {
        sweep();
        String id = CheckpointIds.next(Instant.now());
        Instant created = Instant.now();
        long start = System.nanoTime();
        boolean frozen = false;
        boolean paused = false;
        boolean stopped = false;
        boolean folderSaved = false;
        boolean vmSaved = false;
        Steps steps = new Steps();
        try {
            mark();
            GuestCommand.freeze(vm.agent(), FREEZE);
            frozen = true;
            steps.done("freeze");
            if (workspace != null) {
                if (!workspace.pause(Duration.ofSeconds(10))) {
                    throw new IOException("the workspace server did not become idle within 10 s");
                }
                paused = true;
            }
            steps.done("idle");
            qmp("stop");
            stopped = true;
            steps.done("stop");
            WorkspaceSnapshot server = workspace == null ? null : workspace.snapshot();
            Capture capture = null;
            if (workspace != null) {
                capture = folders.capture(folder, id);
                folderSaved = true;
            }
            steps.done("workspace");
            hmp("savevm " + id);
            vmSaved = true;
            steps.done("savevm");
            qmp("cont");
            stopped = false;
            if (paused) {
                workspace.resume();
                paused = false;
            }
            steps.done("cont");
            GuestCommand.thaw(vm.agent(), 0, new byte[0], FREEZE);
            frozen = false;
            steps.done("thaw");
            long pause = Duration.ofNanos(System.nanoTime() - start).toMillis();
            Checkpoint c = new Checkpoint(id, created, message, pause, vmStateBytes(id),
                    capture == null ? 0 : capture.entries(), capture == null ? 0 : capture.bytesCopied(), server,
                    steps.millis());
            store.commit(c);
            clearInterrupted(store.directory());
            return c;
        } catch (IOException | RuntimeException | InterruptedException e) {
            if (e instanceof InterruptedException) {
                Thread.currentThread().interrupt();
            }
            // undo, newest step first; each undo on its own, so one failing does not skip the rest
            if (vmSaved) {
                quietly("delete the VM snapshot", () -> hmp("delvm " + id));
            }
            if (folderSaved) {
                quietly("delete the workspace snapshot", () -> folders.delete(id));
            }
            if (stopped) {
                quietly("resume the machine", () -> qmp("cont"));
            }
            if (paused) {
                workspace.resume();
            }
            if (frozen) {
                quietly("thaw the guest", () -> GuestCommand.thaw(vm.agent(), 0, new byte[0], FREEZE));
            }
            quietly("clear the in-progress mark", () -> clearInterrupted(store.directory()));
            throw new KosaException(KosaException.Kind.VM, "the checkpoint failed: " + e.getMessage()
                    + "; the sandbox runs on and earlier checkpoints are intact", hint(e), e);
        }
    }

    /**
     * Puts the whole machine back to checkpoint {@code c}: the workspace's
     * content and fid table, then RAM, devices and disk; the guest's clock is
     * set to now and its random generator reseeded with fresh host bytes (the
     * same RAM restored twice must not draw the same numbers), then its
     * processes, frozen at the checkpoint's instant, run on.
     */
    public Map<String, Long> rewind(Checkpoint c) {
        Steps steps = new Steps();
        try {
            mark();
            try {
                GuestCommand.freeze(vm.agent(), Duration.ofSeconds(10));
            } catch (RuntimeException e) {
                // the state about to be replaced need not be frozen; only the workspace server must be idle
                log.accept("rewind: the guest did not freeze (" + e.getMessage() + "); going on");
            }
            steps.done("freeze");
            if (workspace != null && !workspace.pause(Duration.ofSeconds(10))) {
                throw new IOException("the workspace server did not become idle within 10 s");
            }
            steps.done("idle");
            qmp("stop");
            steps.done("stop");
            if (workspace != null) {
                folders.restore(c.id(), folder);
                if (c.server() != null) {
                    workspace.restore(c.server());
                }
            }
            steps.done("workspace");
            hmp("loadvm " + c.id());
            steps.done("loadvm");
            vm.agent().failOpenChannels("the sandbox was rewound to checkpoint " + c.id());
            qmp("cont");
            if (workspace != null) {
                workspace.resume();
            }
            steps.done("cont");
            byte[] seed = new byte[64];
            RANDOM.nextBytes(seed);
            GuestCommand.thaw(vm.agent(), System.currentTimeMillis(), seed, FREEZE);
            steps.done("thaw");
            clearInterrupted(store.directory());
            return steps.millis();
        } catch (IOException | RuntimeException | InterruptedException e) {
            if (e instanceof InterruptedException) {
                Thread.currentThread().interrupt();
            }
            quietly("resume the machine", () -> qmp("cont"));
            if (workspace != null) {
                workspace.resume();
            }
            quietly("thaw the guest", () -> GuestCommand.thaw(vm.agent(), 0, new byte[0], FREEZE));
            quietly("clear the in-progress mark", () -> clearInterrupted(store.directory()));
            throw new KosaException(KosaException.Kind.VM, "the rewind to " + c.id() + " failed: " + e.getMessage(),
                    "the checkpoint is intact; try again, or `kosa8 stop` and `start` the sandbox", e);
        }
    }

    /** Removes a checkpoint: its record first (then it no longer exists), then its parts. */
    public void remove(Checkpoint c) throws IOException {
        store.forget(c.id());
        hmp("delvm " + c.id());
        folders.delete(c.id());
    }

    /** Bytes on disk only this checkpoint holds: its VM state and the workspace files no other one shares. */
    public long bytesOnlyIn(Checkpoint c) throws IOException {
        return c.vmStateBytes() + folders.bytesOnlyIn(c.id());
    }

    /** The parts of checkpoints that were never committed: a daemon or QEMU that died half-way left them. */
    private void sweep() {
        try {
            Set<String> committed = new HashSet<>();
            store.list().forEach(c -> committed.add(c.id()));
            for (String tag : vmSnapshotTags()) {
                if (CheckpointIds.isValid(tag) && !committed.contains(tag)) {
                    log.accept("removing the VM snapshot of an unfinished checkpoint " + tag);
                    hmp("delvm " + tag);
                }
            }
            for (String id : folders.ids()) {
                if (!committed.contains(id)) {
                    log.accept("removing the workspace snapshot of an unfinished checkpoint " + id);
                    folders.delete(id);
                }
            }
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

    private long vmStateBytes(String id) {
        return vmSnapshots().stream().filter(s -> s.path("name").asText().equals(id))
                .mapToLong(s -> s.path("vm-state-size").asLong()).findFirst().orElse(0);
    }

    private void qmp(String command) {
        vm.qmp().execute(command, Map.of(), QMP);
    }

    /** An HMP command through QMP; HMP reports failure as text in its answer, not as a QMP error. */
    private void hmp(String commandLine) {
        JsonNode r = vm.qmp().execute("human-monitor-command", Map.of("command-line", commandLine), QMP);
        String out = r == null ? "" : r.asText("").strip();
        if (!out.isEmpty()) {
            throw new IllegalStateException("QEMU: " + commandLine.split(" ")[0] + ": " + out);
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
