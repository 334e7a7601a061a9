package dev.kosa8.checkpoint;

import dev.kosa8.host.KosaException;
import java.util.List;
import java.util.Optional;
import java.util.Set;

/**
 * How many checkpoints a sandbox keeps and how many bytes they may hold
 * alone (everything under {@code checkpoints/} no other sandbox or template
 * shares: RAM pages, workspace snapshots; their disk snapshots are inside
 * the root disk and count towards the sandbox's disk budget instead). A
 * pure decision, taken before anything of a new checkpoint is written:
 * {@link #admit} says which checkpoint must go first to make room, or
 * refuses with what to remove.
 *
 * <p>{@code thinnable} names the checkpoints that may be removed to make
 * room, oldest first: none for a checkpoint the user takes (nothing is
 * removed but by the user), the sandbox's turn checkpoints for an agent's
 * checkpoint per turn (docs/agents.md), so that a long session goes on at
 * the limit, never removing one the user took. {@link Undo#checkpoint}
 * removes what {@link #admit} names and asks again, until it admits.
 *
 * @param maxCount  the most checkpoints kept
 * @param maxBytes  the most bytes they hold alone; 0 for no limit of their own
 * @param thinnable the ids of checkpoints that may be removed to make room
 */
public record CheckpointLimits(int maxCount, long maxBytes, Set<String> thinnable) {
    /** No limit (tests, and what undo did before limits). */
    public static final CheckpointLimits NONE = new CheckpointLimits(Integer.MAX_VALUE, 0, Set.of());

    public CheckpointLimits {
        if (maxCount < 1 || maxBytes < 0) {
            throw new IllegalArgumentException("limits must allow one checkpoint: " + maxCount + ", " + maxBytes);
        }
        thinnable = Set.copyOf(thinnable);
    }

    /** Limits that remove nothing to make room. */
    public static CheckpointLimits refusing(int maxCount, long maxBytes) {
        return new CheckpointLimits(maxCount, maxBytes, Set.of());
    }

    /**
     * Whether one more checkpoint may be taken beside {@code existing}
     * (oldest first), which hold {@code bytes} alone.
     *
     * @return nothing when it may; else the oldest thinnable checkpoint, to be removed before asking again
     * @throws KosaException (LIMIT) naming the limit, what holds it and what to remove, when none is thinnable
     */
    public Optional<Checkpoint> admit(String sandboxId, List<Checkpoint> existing, long bytes) {
        String oldest = existing.isEmpty() ? "ID" : existing.getFirst().id();
        String remove = "remove one with `kosa8 checkpoint rm " + sandboxId + " " + oldest + "` (the oldest; "
                + "`kosa8 checkpoints " + sandboxId + "` lists them with their sizes), then try again";
        boolean overCount = existing.size() >= maxCount;
        boolean overBytes = maxBytes > 0 && bytes >= maxBytes;
        if (!overCount && !overBytes) {
            return Optional.empty();
        }
        Optional<Checkpoint> thin = existing.stream().filter(c -> thinnable.contains(c.id())).findFirst();
        if (thin.isPresent()) {
            return thin;
        }
        if (overCount) {
            throw new KosaException(KosaException.Kind.LIMIT, "sandbox " + sandboxId + " has " + existing.size()
                    + " checkpoints, the most it keeps (--max-checkpoints " + maxCount + ")", remove);
        }
        throw new KosaException(KosaException.Kind.LIMIT, "sandbox " + sandboxId + "'s checkpoints hold "
                + mib(bytes) + ", at or past the most they may (--checkpoint-bytes " + mib(maxBytes) + ")", remove);
    }

    static String mib(long bytes) {
        return (bytes >> 20) + " MiB";
    }
}
