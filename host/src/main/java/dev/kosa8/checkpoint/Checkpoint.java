package dev.kosa8.checkpoint;

import com.fasterxml.jackson.annotation.JsonProperty;
import dev.kosa8.workspace.WorkspaceSnapshot;
import java.time.Instant;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * One checkpoint of a sandbox, as {@code checkpoints/<id>.json} keeps it. The
 * machine's RAM and devices are kept as pages
 * ({@code checkpoints/<id>.ram} and the packs it names, see
 * {@link dev.kosa8.checkpoint.ram.RamStore}), or as the migration stream
 * {@code checkpoints/<id>.vmstate} where that could not be taken apart; its root disk is the internal snapshot
 * named {@code id} inside the sandbox's {@code root.qcow2}; the workspace's
 * content is the folder snapshot {@code id}; {@code server} is the 9p
 * server's fid table at the same instant (null without a workspace).
 *
 * <p>A checkpoint is recorded as soon as its instant is fixed, {@link
 * State#PENDING}, and again once what it names is all on disk, {@link
 * State#COMMITTED}; a commit that fails, or that a daemon's death cut short,
 * leaves it {@link State#FAILED} with the reason, and nothing it named
 * (docs/checkpoints.md, "Committing in the background").
 *
 * @param pauseMillis how long the guest's processes stood frozen
 * @param vmStateBytes the bytes the RAM and device state added on disk: the pages that changed since the
 *                     checkpoint the machine came from, and the image naming them all (0 until committed)
 * @param workspaceBytesCopied bytes of workspace files this checkpoint had to store (unchanged ones cost none)
 * @param stepMillis  how long each step took (precopy, freeze, idle, stop, workspace, disk, devices, thaw;
 *                    once committed also workspace-commit, ram, pages), in order
 * @param savedMillis from the freeze until the checkpoint was committed: the pause, then the RAM written while the
 *                    guest ran on (0 until committed)
 * @param state       pending, committed or failed; a record written before there were pending checkpoints is a
 *                    committed one
 * @param failure     why it failed, for a failed one; else empty
 */
public record Checkpoint(String id, Instant created, String message, long pauseMillis, long vmStateBytes,
                         int workspaceEntries, long workspaceBytesCopied, WorkspaceSnapshot server,
                         Map<String, Long> stepMillis, long savedMillis, State state, String failure) {
    /** Where a checkpoint stands. */
    public enum State {
        /** Its instant is fixed; what it names is still being written. It can be waited for, not yet used. */
        @JsonProperty("pending") PENDING,
        /** Everything it names is on disk: it can be rewound to and forked from. */
        @JsonProperty("committed") COMMITTED,
        /** Its commit failed or was cut short; what it named is gone. It can only be removed. */
        @JsonProperty("failed") FAILED;

        /** As the API and the CLI say it. */
        public String label() {
            return name().toLowerCase(java.util.Locale.ROOT);
        }
    }

    public Checkpoint {
        if (!CheckpointIds.isValid(id)) {
            throw new IllegalArgumentException("bad checkpoint id: " + id);
        }
        message = message == null ? "" : message;
        stepMillis = stepMillis == null ? Map.of() : Collections.unmodifiableMap(new LinkedHashMap<>(stepMillis));
        state = state == null ? State.COMMITTED : state;
        failure = failure == null ? "" : failure;
    }

    /** A committed checkpoint. */
    public Checkpoint(String id, Instant created, String message, long pauseMillis, long vmStateBytes,
                      int workspaceEntries, long workspaceBytesCopied, WorkspaceSnapshot server,
                      Map<String, Long> stepMillis, long savedMillis) {
        this(id, created, message, pauseMillis, vmStateBytes, workspaceEntries, workspaceBytesCopied, server,
                stepMillis, savedMillis, State.COMMITTED, "");
    }

    /** This checkpoint, committed: its machine state took {@code vmStateBytes}, its steps {@code stepMillis}. */
    Checkpoint committed(long vmStateBytes, long workspaceBytesCopied, Map<String, Long> stepMillis,
                         long savedMillis) {
        return new Checkpoint(id, created, message, pauseMillis, vmStateBytes, workspaceEntries, workspaceBytesCopied,
                server, stepMillis, savedMillis, State.COMMITTED, "");
    }

    /** This checkpoint, failed for {@code why}: it names nothing any more. */
    Checkpoint failed(String why) {
        return new Checkpoint(id, created, message, pauseMillis, 0, workspaceEntries, workspaceBytesCopied,
                server, stepMillis, 0, State.FAILED, why);
    }
}
