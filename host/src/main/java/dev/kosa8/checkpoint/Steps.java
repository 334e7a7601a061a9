package dev.kosa8.checkpoint;

import java.util.LinkedHashMap;
import java.util.Map;

/** Wall-clock time per step of a checkpoint, rewind or pause, for the record and the benchmark. */
final class Steps {
    private final Map<String, Long> millis = new LinkedHashMap<>();
    private long last = System.nanoTime();

    void done(String step) {
        long now = System.nanoTime();
        millis.put(step, (now - last) / 1_000_000);
        last = now;
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
