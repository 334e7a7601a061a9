package dev.kosa8.checkpoint;

import dev.kosa8.workspace.WorkspaceSnapshot;
import java.time.Instant;

/**
 * One committed checkpoint of a sandbox, as {@code checkpoints/<id>.json}
 * keeps it. The machine's RAM and devices are kept as pages
 * ({@code checkpoints/<id>.ram} and the packs it names, see
 * {@link dev.kosa8.checkpoint.ram.RamStore}), or as the migration stream
 * {@code checkpoints/<id>.vmstate} where that could not be taken apart; its root disk is the internal snapshot
 * named {@code id} inside the sandbox's {@code root.qcow2}; the workspace's
 * content is the folder snapshot {@code id}; {@code server} is the 9p
 * server's fid table at the same instant (null without a workspace).
 *
 * @param pauseMillis how long the guest's processes stood frozen
 * @param vmStateBytes the bytes the RAM and device state added on disk: the pages that changed since the
 *                     checkpoint the machine came from, and the image naming them all
 * @param workspaceBytesCopied bytes of workspace files this checkpoint had to store (unchanged ones cost none)
 * @param stepMillis  how long each step took (precopy, freeze, idle, stop, workspace, disk, devices, thaw,
 *                    workspace-commit, ram, pages), in order
 * @param savedMillis from the freeze until the checkpoint was committed: the pause, then the RAM written while the
 *                    guest ran on
 */
public record Checkpoint(String id, Instant created, String message, long pauseMillis, long vmStateBytes,
                         int workspaceEntries, long workspaceBytesCopied, WorkspaceSnapshot server,
                         java.util.Map<String, Long> stepMillis, long savedMillis) {
    public Checkpoint {
        if (!CheckpointIds.isValid(id)) {
            throw new IllegalArgumentException("bad checkpoint id: " + id);
        }
        message = message == null ? "" : message;
        stepMillis = stepMillis == null ? java.util.Map.of() : java.util.Collections.unmodifiableMap(
                new java.util.LinkedHashMap<>(stepMillis));
    }
}
