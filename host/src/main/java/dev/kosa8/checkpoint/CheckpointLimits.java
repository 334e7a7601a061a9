package dev.kosa8.checkpoint;

import dev.kosa8.host.KosaException;
import java.util.List;

/**
 * How many checkpoints a sandbox keeps and how many bytes they may hold
 * alone (everything under {@code checkpoints/} no other sandbox or template
 * shares: RAM pages, workspace snapshots; their disk snapshots are inside
 * the root disk and count towards the sandbox's disk budget instead). A
 * pure decision, taken before anything of a new checkpoint is written:
 * {@link #admit} says which checkpoints must go first to make room, or
 * refuses with what to remove.
 *
 * <p>The one policy today is {@link AtLimit#REFUSE}: nothing is removed but
 * by the user. Another policy (thinning the oldest automatic checkpoints,
 * for an agent's checkpoint per turn) answers {@link #admit} with the
 * checkpoints to remove, which {@link Undo#checkpoint} removes before the new
 * one is taken; the callers need not change.
 *
 * @param maxCount the most checkpoints kept
 * @param maxBytes the most bytes they hold alone; 0 for no limit of their own
 */
public record CheckpointLimits(int maxCount, long maxBytes, AtLimit atLimit) {
    /** What happens when a new checkpoint would pass a limit. */
    public enum AtLimit {
        /** The new checkpoint is refused, saying which to remove. */
        REFUSE
    }

    /** No limit (tests, and what undo did before limits). */
    public static final CheckpointLimits NONE = new CheckpointLimits(Integer.MAX_VALUE, 0, AtLimit.REFUSE);

    public CheckpointLimits {
        if (maxCount < 1 || maxBytes < 0) {
            throw new IllegalArgumentException("limits must allow one checkpoint: " + maxCount + ", " + maxBytes);
        }
    }

    /**
     * Whether one more checkpoint may be taken beside {@code existing}
     * (oldest first), which hold {@code bytes} alone.
     *
     * @return the checkpoints to remove first (none under {@link AtLimit#REFUSE})
     * @throws KosaException (LIMIT) naming the limit, what holds it and what to remove
     */
    public List<Checkpoint> admit(String sandboxId, List<Checkpoint> existing, long bytes) {
        String oldest = existing.isEmpty() ? "ID" : existing.getFirst().id();
        String remove = "remove one with `kosa8 checkpoint rm " + sandboxId + " " + oldest + "` (the oldest; "
                + "`kosa8 checkpoints " + sandboxId + "` lists them with their sizes), then try again";
        if (existing.size() >= maxCount) {
            throw new KosaException(KosaException.Kind.LIMIT, "sandbox " + sandboxId + " has " + existing.size()
                    + " checkpoints, the most it keeps (--max-checkpoints " + maxCount + ")", remove);
        }
        if (maxBytes > 0 && bytes >= maxBytes) {
            throw new KosaException(KosaException.Kind.LIMIT, "sandbox " + sandboxId + "'s checkpoints hold "
                    + mib(bytes) + ", at or past the most they may (--checkpoint-bytes " + mib(maxBytes) + ")", remove);
        }
        return List.of();
    }

    static String mib(long bytes) {
        return (bytes >> 20) + " MiB";
    }
}
