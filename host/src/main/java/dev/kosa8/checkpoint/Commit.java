package dev.kosa8.checkpoint;

import dev.kosa8.checkpoint.ram.RamStore;
import dev.kosa8.host.KosaException;
import dev.kosa8.vm.MachineState;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.function.Consumer;

/**
 * The second half of a checkpoint, once its instant is fixed and the guest
 * runs on ({@link Checkpointer#instant}): the workspace snapshot made durable
 * and named, the RAM QEMU goes on writing in the background received and
 * kept as pages, then the record rewritten as committed. Runs on a thread of
 * its own ({@link Commits}) while the sandbox's lock is free.
 *
 * <p>A failure takes back every part the checkpoint had (the disk snapshot,
 * the workspace snapshot, the stream, its pages) from the instant's {@link
 * Rollback}, and rewrites the record as failed with the reason; the
 * checkpoints before it are untouched. The stream is never cut: a failure
 * while QEMU still sends waits for its end first (a background snapshot cut
 * half-way leaves QEMU 7.2's guest stuck, see {@link MachineState}).
 */
final class Commit implements Commits.Job {
    /**
     * What the instant leaves to the commit.
     *
     * @param memoryTemp the copy of the guest's RAM file made in the pause (file-RAM mode), or null: QEMU's
     *                   background snapshot still sends RAM
     * @param savedBytes in file-RAM mode, the bytes of the device state and the RAM copy, saved in the pause
     */
    record Parts(Checkpoint pending, MachineState.Saving saving, Path streamTemp, Path memoryTemp, long savedBytes,
                 FolderSnapshots.Pending scanned, Rollback.Entry abandonScan, long precopied, String baseId,
                 Steps steps, long frozenAt) {
    }

    private final Parts parts;
    private final Rollback rollback;
    private final CheckpointStore store;
    private final FolderSnapshots folders;
    private final RamStore ram;
    private final RamBase ramBase;
    private final Consumer<String> log;
    private volatile boolean cancelled;

    Commit(Parts parts, Rollback rollback, CheckpointStore store, FolderSnapshots folders, RamStore ram,
           Consumer<String> log) {
        this.parts = parts;
        this.rollback = rollback;
        this.store = store;
        this.folders = folders;
        this.ram = ram;
        this.ramBase = new RamBase(store, ram);
        this.log = log;
    }

    /** The checkpoint as recorded at its instant: pending. */
    Checkpoint pending() {
        return parts.pending();
    }

    @Override
    public String id() {
        return parts.pending().id();
    }

    /**
     * The sandbox goes away: its machine is killed, so the stream ends, and
     * this commit leaves nothing behind and writes no record.
     */
    @Override
    public void cancel() {
        cancelled = true;
    }

    /** Commits the checkpoint; returns it committed, or throws, having recorded it failed. */
    @Override
    public Checkpoint run() {
        String id = id();
        Steps steps = parts.steps();
        boolean streamEnded = false;
        try {
            long copied = parts.precopied();
            if (parts.scanned() != null) {
                Capture capture = folders.commit(parts.scanned());
                parts.abandonScan().drop();
                rollback.push("delete the workspace snapshot", () -> folders.delete(id));
                copied += capture.bytesCopied();
            }
            steps.done("workspace-commit");
            if (parts.scanned() != null) {
                quietly("delete the workspace's pre-copy", () -> folders.delete(Checkpointer.precopyId(id)));
            }
            long bytes;
            if (parts.memoryTemp() != null) {
                streamEnded = true; // saved in the pause
                checkNotCancelled();
                // made durable here, off the pause, then named
                MachineState.makeDurable(parts.streamTemp());
                MachineState.makeDurable(parts.memoryTemp());
                Files.move(parts.streamTemp(), store.vmState(id), StandardCopyOption.ATOMIC_MOVE);
                Files.move(parts.memoryTemp(), store.memory(id), StandardCopyOption.ATOMIC_MOVE);
                bytes = parts.savedBytes();
                steps.done("ram");
            } else {
                bytes = parts.saving().awaitSaved(Checkpointer.QMP);
                streamEnded = true;
                checkNotCancelled();
                Files.move(parts.streamTemp(), store.vmState(id), StandardCopyOption.ATOMIC_MOVE);
                steps.done("ram");
                bytes = storePages(id, bytes);
                steps.done("pages");
            }
            checkNotCancelled();
            Checkpoint c = parts.pending().committed(bytes, copied, steps.millis(),
                    Duration.ofNanos(System.nanoTime() - parts.frozenAt()).toMillis());
            store.save(c);
            steps.point("committed");
            // the machine now comes from this checkpoint: the next one compares its pages with this one's
            quietly("note the latest checkpoint", () -> ramBase.head(id));
            quietly("forget the first checkpoint's base", ramBase::dropAdopted);
            return c;
        } catch (Exception e) {
            if (e instanceof InterruptedException) {
                Thread.currentThread().interrupt();
            }
            if (!streamEnded) {
                drain();
            }
            rollback.unwind();
            String why = cancelled ? "the sandbox was removed" : String.valueOf(e.getMessage());
            if (!cancelled) {
                quietly("record the failed checkpoint", () -> store.save(parts.pending().failed(why)));
                log.accept("checkpoint " + id + " failed to commit: " + why);
            }
            throw new KosaException(KosaException.Kind.VM, "checkpoint " + id + " failed: " + why
                    + "; the sandbox runs on and earlier checkpoints are intact", Checkpointer.hint(why), e);
        }
    }

    /** Lets QEMU's stream end before its parts go: a background snapshot is never cut. */
    private void drain() {
        try {
            parts.saving().awaitSaved(Checkpointer.QMP);
        } catch (RuntimeException e) {
            // failed or cut short by QEMU's end: either way QEMU no longer sends
        }
    }

    private void checkNotCancelled() throws IOException {
        if (cancelled) {
            throw new IOException("the sandbox was removed");
        }
    }

    /**
     * Keeps the RAM as pages, only the changed ones written ({@link RamStore});
     * a stream that cannot be taken apart is kept whole, and the log says why.
     * Returns the bytes it takes on disk.
     */
    private long storePages(String id, long streamBytes) throws IOException {
        try {
            return ram.store(id, store.vmState(id), parts.baseId());
        } catch (IOException e) {
            log.accept("checkpoint " + id + ": its RAM is kept as one stream (" + e.getMessage() + ")");
            // written unsynced, to be taken apart: kept whole, it is made durable before the record names it
            MachineState.makeDurable(store.vmState(id));
            return streamBytes;
        }
    }

    private void quietly(String what, Rollback.Action step) {
        try {
            step.run();
        } catch (Exception e) {
            log.accept("checkpoint cleanup: cannot " + what + ": " + e.getMessage());
        }
    }
}
