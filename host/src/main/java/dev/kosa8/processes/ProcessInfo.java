package dev.kosa8.processes;

import java.time.Instant;
import java.util.List;

/**
 * One process as {@code kosa8 procs} and the API show it (docs/api.md).
 *
 * @param id       the process's id in its sandbox ({@code p1}, {@code p2}, …)
 * @param command  its argv
 * @param tag      the caller's label for it; may be empty
 * @param started  when the daemon started it
 * @param pid      its pid in the guest; 0 until the guest says
 * @param state    running, exited or failed
 * @param exitCode its exit code once exited (128 + the signal when a signal ended it); null before
 * @param signal   the signal that ended it; 0 for none
 * @param reason   why it ended, when not by itself: {@code timed out after 5 s}, {@code killed by SIGTERM},
 *                 {@code the sandbox was rewound to checkpoint …}; empty otherwise
 * @param ended    when it ended; null while it runs
 * @param output   its output: every byte written ({@code end}), what the daemon still holds, what it dropped
 * @param stdinOpen whether its stdin still takes bytes
 */
public record ProcessInfo(String id, List<String> command, String tag, Instant started, long pid,
                          ProcessState state, Integer exitCode, int signal, String reason, Instant ended,
                          OutputBuffer.Stats output, boolean stdinOpen, long timeoutSeconds) {
    public ProcessInfo {
        command = List.copyOf(command);
    }
}
