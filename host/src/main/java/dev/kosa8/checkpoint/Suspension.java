package dev.kosa8.checkpoint;

import dev.kosa8.workspace.WorkspaceSnapshot;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Instant;

/**
 * A persistent sandbox paused to disk: its running machine as {@code kosa8
 * stop} left it, for {@code kosa8 start} to resume exactly there
 * (docs/checkpoints.md, "Pause to disk"). Lives in {@code <sandbox>/suspended/}:
 * {@code machine.vmstate} (RAM and devices, a QEMU migration stream) and
 * {@code suspended.json} (when, and the workspace server's fid table),
 * written last: without it there is no suspension, only leftovers.
 * The root disk needs nothing: QEMU stopped before the state was saved and
 * quit after, so the disk is as the machine left it.
 */
public final class Suspension {
    /** What {@code suspended.json} holds. */
    public record Record(Instant suspended, WorkspaceSnapshot server) {
    }

    private final Path dir;

    public Suspension(Path sandboxDir) {
        this.dir = sandboxDir.resolve("suspended");
    }

    public Path state() {
        return dir.resolve("machine.vmstate");
    }

    Path stateTemp() {
        return dir.resolve("machine.vmstate.tmp");
    }

    private Path record() {
        return dir.resolve("suspended.json");
    }

    /** Whether a complete suspension is there to resume. */
    public boolean exists() {
        return Files.isRegularFile(record()) && Files.isRegularFile(state());
    }

    public Record read() throws IOException {
        return CheckpointStore.JSON.readValue(record().toFile(), Record.class);
    }

    void prepare() throws IOException {
        discard();
        Files.createDirectories(dir);
    }

    void commit(Record r) throws IOException {
        Files.move(stateTemp(), state(), StandardCopyOption.ATOMIC_MOVE);
        Path tmp = dir.resolve("suspended.json.tmp");
        Files.write(tmp, CheckpointStore.JSON.writeValueAsBytes(r));
        try (var ch = java.nio.channels.FileChannel.open(tmp, java.nio.file.StandardOpenOption.WRITE)) {
            ch.force(true);
        }
        Files.move(tmp, record(), StandardCopyOption.ATOMIC_MOVE);
    }

    /** Removes it, complete or not (after a resume, or when it cannot be resumed). */
    public void discard() throws IOException {
        if (!Files.isDirectory(dir)) {
            return;
        }
        try (var files = Files.list(dir)) {
            for (Path f : files.toList()) {
                Files.deleteIfExists(f);
            }
        }
        Files.deleteIfExists(dir);
    }
}
