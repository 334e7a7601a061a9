package dev.kosa8.daemon;

/**
 * What one sandbox may keep on the host's disk: all of it together (its
 * root disk's overlay with the checkpoints' disk snapshots inside, its
 * checkpoints' RAM and workspace snapshots, its logs), and how many
 * checkpoints and how many bytes of them. The settings give every sandbox's
 * default ({@link Settings}); {@code create} and {@code run} may give one
 * sandbox its own.
 *
 * @param diskBytes       everything the sandbox keeps on disk
 * @param checkpointCount the most checkpoints it keeps
 * @param checkpointBytes the most bytes its checkpoints hold alone (their RAM and workspace snapshots); 0: no
 *                        limit of their own, the disk budget still holds
 */
public record Budget(long diskBytes, int checkpointCount, long checkpointBytes) {
    /** The least disk budget: a booted guest's overlay and logs need tens of MiB. */
    public static final long MIN_DISK = 256L << 20;
    public static final Budget DEFAULT = new Budget(32L << 30, 64, 0);

    public Budget {
        if (diskBytes < MIN_DISK) {
            throw new IllegalArgumentException("a disk budget must be at least 256 MiB, not " + diskBytes + " bytes");
        }
        if (checkpointCount < 1) {
            throw new IllegalArgumentException("a sandbox must be allowed at least one checkpoint");
        }
        if (checkpointBytes < 0) {
            throw new IllegalArgumentException("a checkpoint byte limit cannot be negative");
        }
    }
}
