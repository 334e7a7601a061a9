package dev.kosa8.checkpoint;

import java.time.Duration;

/**
 * What one restore did.
 *
 * @param filesWritten   entries created or rewritten: files, directories, symlinks, FIFOs; entries that
 *                       only had their mode or mtime put back are not counted
 * @param filesCloned    of the files written, those made as clones of the store's objects (sharing their
 *                       blocks: {@link Clones}) rather than copies
 * @param entriesRemoved entries removed because the snapshot does not have them, each one inside a removed
 *                       directory counted too
 */
public record Restore(String id, int filesWritten, int filesCloned, int entriesRemoved, Duration took) {
}
