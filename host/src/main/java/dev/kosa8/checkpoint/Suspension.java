package dev.kosa8.checkpoint;

import dev.kosa8.host.RecordFile;
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
 *
 * <p>{@code suspended.json} is a {@link RecordFile}: format
 * {@code kosa8-suspension}, version 1, the record under {@code suspension},
 * and its SHA-256. One written by a kosa8 from before the checksum (the
 * record alone) is read as it is, with a warning: a sandbox stopped before
 * an upgrade resumes where it was; a damaged one cannot be resumed from, and
 * the sandbox boots afresh from its disk.
 */
public final class Suspension {
    /** What {@code suspended.json} holds. */
    public record Record(Instant suspended, WorkspaceSnapshot server) {
    }

    static final RecordFile<Record> RECORD = new RecordFile<>("kosa8-suspension", 1, "suspension", Record.class,
            CheckpointStore.JSON, RecordFile.Unchecked.READ,
            "the machine cannot resume from it: the sandbox boots afresh from its disk");

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

    /**
     * The record of the suspension.
     *
     * @throws RecordFile.Damaged when it is damaged: the message names the file
     */
    public Record read() throws IOException {
        return RECORD.read(record(), warning -> System.err.println("kosa8: " + warning));
    }

    void prepare() throws IOException {
        discard();
        Files.createDirectories(dir);
    }

    /**
     * Names the state (written and synced by its writer) and writes the
     * record after it; the record's write syncs the directory, which makes
     * both renames durable.
     */
    void commit(Record r) throws IOException {
        Files.move(stateTemp(), state(), StandardCopyOption.ATOMIC_MOVE);
        RECORD.write(record(), r);
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
