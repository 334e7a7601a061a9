package dev.kosa8.processes;

import java.util.Locale;

/** Where a process the daemon owns is in its life. */
public enum ProcessState {
    /** Started, or being started, in the guest. */
    RUNNING,
    /** Ended by itself or by a signal: its exit code (128 + the signal) is known. */
    EXITED,
    /** Never started (the program was not found, say), or lost with its machine: the reason says which. */
    FAILED;

    public String label() {
        return name().toLowerCase(Locale.ROOT);
    }
}
