package dev.kosa8.daemon;

import dev.kosa8.vm.VmSpec;

/**
 * What one sandbox may keep on the host's disk: all of it together (its
 * root disk's overlay with the checkpoints' disk snapshots inside, its
 * checkpoints' RAM and workspace snapshots, its logs), how many checkpoints
 * and how many bytes of them, and how much of its console. The settings
 * give every new sandbox's ({@link Settings}); {@code create} and {@code run}
 * may give one sandbox its own, which its record keeps.
 *
 * @param diskBytes       everything the sandbox keeps on disk ({@link DiskUsage})
 * @param checkpointCount the most checkpoints it keeps
 * @param checkpointBytes the most bytes its checkpoints hold alone (their RAM and workspace snapshots, as
 *                        {@code kosa8 checkpoints} lists them); 0: no limit of their own, the disk budget holds
 * @param consoleBytes    the console output kept ({@code console.log} and {@code console.log.1})
 */
public record Budget(long diskBytes, int checkpointCount, long checkpointBytes, long consoleBytes) {
    /** The least disk budget: a booted guest's overlay and logs need tens of MiB. */
    public static final long MIN_DISK = 256L << 20;
    public static final Budget DEFAULT = new Budget(32L << 30, 64, 0, VmSpec.DEFAULT_CONSOLE_LIMIT);

    public Budget {
        java.util.List<String> problems = new java.util.ArrayList<>();
        if (diskBytes < MIN_DISK) {
            problems.add("the disk budget must be at least 256M, not " + diskBytes + " bytes");
        }
        if (checkpointCount < 1) {
            problems.add("a sandbox must be allowed at least one checkpoint, not " + checkpointCount);
        }
        if (checkpointBytes < 0) {
            problems.add("the checkpoints' byte limit cannot be negative");
        }
        if (consoleBytes < VmSpec.MIN_CONSOLE_LIMIT) {
            problems.add("the console limit must be at least 64K, not " + consoleBytes + " bytes");
        }
        if (!problems.isEmpty()) {
            throw new dev.kosa8.host.KosaException(dev.kosa8.host.KosaException.Kind.USAGE, String.join("; ", problems),
                    "give larger values");
        }
    }

    /** What {@code create} asks to change of the default budget; each null keeps the default's. */
    public record Change(Long diskBytes, Integer checkpointCount, Long checkpointBytes, Long consoleBytes) {
        public static final Change NONE = new Change(null, null, null, null);

        /** {@code dflt} with this change's values. */
        public Budget applyTo(Budget dflt) {
            return new Budget(diskBytes != null ? diskBytes : dflt.diskBytes(),
                    checkpointCount != null ? checkpointCount : dflt.checkpointCount(),
                    checkpointBytes != null ? checkpointBytes : dflt.checkpointBytes(),
                    consoleBytes != null ? consoleBytes : dflt.consoleBytes());
        }
    }
}
