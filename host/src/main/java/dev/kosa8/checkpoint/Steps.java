package dev.kosa8.checkpoint;

import dev.kosa8.host.CrashPoints;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.function.LongSupplier;

/**
 * Wall-clock time per step of a checkpoint, rewind or pause, for the record
 * and the benchmark; each step's end is also a named point of the crash walk
 * ({@link CrashPoints}: {@code operation/step}), so a step added here is
 * walked without the test naming it.
 */
final class Steps {
    private final Map<String, Long> millis = new LinkedHashMap<>();
    private final String operation;
    private final LongSupplier qemuPid;
    private long last = System.nanoTime();

    /**
     * @param operation what these are the steps of, as the crash walk names it: checkpoint, rewind, stop
     * @param qemuPid   the QEMU a {@code qemu} crash point kills at each step
     */
    Steps(String operation, LongSupplier qemuPid) {
        this.operation = operation;
        this.qemuPid = qemuPid;
    }

    void done(String step) {
        long now = System.nanoTime();
        millis.put(step, (now - last) / 1_000_000);
        last = now;
        CrashPoints.reached(operation, step, qemuPid);
    }

    /**
     * Times a part of the operation that is not a point of the crash walk
     * (what an operation does before its first step that changes anything):
     * the next step is timed from here.
     */
    void time(String part) {
        long now = System.nanoTime();
        millis.put(part, (now - last) / 1_000_000);
        last = now;
    }

    /** A point of the crash walk that is not timed: the operation's commit, past its last timed step. */
    void point(String step) {
        CrashPoints.reached(operation, step, qemuPid);
    }

    /** Splits the last part of {@code step}, {@code lastMillis} long, off as the step {@code last}. */
    void split(String step, String last, long lastMillis) {
        long whole = millis.getOrDefault(step, 0L);
        long tail = Math.min(lastMillis, whole);
        millis.put(step, whole - tail);
        millis.put(last, tail);
    }

    /** A step that ran beside the others, by its own duration; the sequence's clock is not moved. */
    void beside(String step, long ms) {
        millis.put(step, ms);
    }

    Map<String, Long> millis() {
        return millis;
    }
}
