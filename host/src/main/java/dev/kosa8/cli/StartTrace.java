package dev.kosa8.cli;

import java.util.ArrayList;
import java.util.List;

/**
 * Where a CLI start's time goes, for measuring it (docs/performance.md,
 * "Wall time of the commands"): with {@value #ENVIRONMENT} set, the launcher
 * puts the wall-clock time it began and the time it started the JVM in that
 * variable, and the CLI prints to stderr, as it exits, one line with the
 * launcher's time, the JVM's start up to {@code main}, and each step since.
 * Off (nothing recorded, nothing printed) when the variable is unset.
 */
final class StartTrace {
    static final String ENVIRONMENT = "KOSA8_START_TRACE";

    private static String launcher; // "BEGAN EXEC PATH", seconds since the epoch with microseconds, from bash
    private static long mainMicros;
    private static long last;
    private static List<String> steps; // the names; their times in nanos, formatted only at the end
    private static final long[] NANOS = new long[32];

    private StartTrace() {
    }

    /** At {@code main}'s start. */
    static void begin() {
        String v = System.getenv(ENVIRONMENT);
        if (v == null || v.isEmpty()) {
            return;
        }
        java.time.Instant now = java.time.Instant.now();
        mainMicros = now.getEpochSecond() * 1_000_000 + now.getNano() / 1000;
        last = System.nanoTime();
        launcher = v;
        steps = new ArrayList<>();
    }

    /** A step has ended: the time since the one before. */
    static void step(String name) {
        if (steps == null) {
            return;
        }
        long now = System.nanoTime();
        if (steps.size() < NANOS.length) {
            NANOS[steps.size()] = now - last;
            steps.add(name);
        }
        last = now;
    }

    /** As the CLI exits: the line, printed. */
    static void end() {
        if (steps == null) {
            return;
        }
        step("exit");
        String[] l = launcher.split(" ");
        StringBuilder line = new StringBuilder("kosa8 start:");
        if (l.length >= 3) {
            long began = micros(l[0]);
            long exec = micros(l[1]);
            line.append(" launcher ").append(ms((exec - began) * 1000)).append(" (").append(l[2]).append(" path),")
                    .append(" jvm to main ").append(ms((mainMicros - exec) * 1000)).append(',');
        }
        for (int i = 0; i < steps.size(); i++) {
            line.append(i == 0 ? " " : ", ").append(steps.get(i)).append(' ').append(ms(NANOS[i]));
        }
        line.append(" (ms)");
        System.err.println(line);
    }

    private static long micros(String epochRealtime) {
        int dot = epochRealtime.indexOf('.');
        return dot < 0 ? 0 : Long.parseLong(epochRealtime.substring(0, dot)) * 1_000_000
                + Long.parseLong(epochRealtime.substring(dot + 1));
    }

    private static String ms(long nanos) {
        return String.format(java.util.Locale.ROOT, "%.1f", nanos / 1e6);
    }
}
