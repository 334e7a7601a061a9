package dev.kosa8.processes;

/**
 * What the processes of one sandbox may make the daemon keep (docs/limits.md).
 *
 * @param running     processes running at once per sandbox; one more is refused
 * @param outputBytes output kept per process while no one reads it; older bytes are dropped, and counted
 * @param finishedKept records of ended processes kept per sandbox, output included; the oldest go first
 */
public record ProcessLimits(int running, long outputBytes, int finishedKept) {
    public static final ProcessLimits DEFAULT = new ProcessLimits(64, 1L << 20, 64);
    /** The least output a process keeps: a few lines, whatever the settings say. */
    public static final long MIN_OUTPUT = 1024;

    public ProcessLimits {
        if (running < 1) {
            throw new IllegalArgumentException("a sandbox runs at least one process, not " + running);
        }
        if (outputBytes < MIN_OUTPUT) {
            throw new IllegalArgumentException("a process keeps at least " + MIN_OUTPUT + " bytes of output, not "
                    + outputBytes);
        }
        if (finishedKept < 0) {
            throw new IllegalArgumentException("negative count of finished processes kept: " + finishedKept);
        }
    }
}
