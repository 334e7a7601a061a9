package dev.kosa8.checkpoint;

import java.time.Duration;

/**
 * What one capture did.
 *
 * @param entries     everything in the snapshot, the folder itself not counted
 * @param filesCopied files whose content was read and stored, because their identity was not known from the
 *                    last capture or restore; an unchanged file costs no read and no space
 * @param bytesCopied the size of those files (content already in the store is read but not written again)
 * @param filesCloned of those, the files stored as clones of the folder's files (sharing their blocks,
 *                    {@link Clones}): read for their hash, never written
 * @param bytesTotal  the size of all regular files in the snapshot
 */
public record Capture(String id, int entries, int filesCopied, long bytesCopied, int filesCloned, long bytesTotal, Duration took) {
}
