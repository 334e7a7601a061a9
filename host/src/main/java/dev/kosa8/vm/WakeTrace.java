package dev.kosa8.vm;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;

/**
 * A diagnostic, off unless the daemon was started with {@code KOSA8_TRACE_WAKE_DIR}: QEMU writes the guest code
 * it translates during each restore's wake (from {@code cont} to the thaw's answer) to a file there, its
 * {@code in_asm} log, one block per translation. Under TCG a fresh QEMU translates every code path the guest
 * runs anew, and that is most of what a wake costs (bench/history/undo.md, run 15), so the file says what the wake
 * ran: {@code bench/wake-trace.sh} counts it by kernel function and guest library. Writing it slows the wake
 * several times over; a traced wake counts code, its time means nothing.
 *
 * <p>Only the host's environment turns it on; nothing the guest sends reaches it.
 */
final class WakeTrace {
    private static final String DIR = System.getenv("KOSA8_TRACE_WAKE_DIR");

    private WakeTrace() {
    }

    /** Starts the log for the wake of {@code name} when tracing is on; returns whether it did. */
    static boolean start(QmpClient qmp, String name, Duration timeout) {
        if (DIR == null || DIR.isBlank()) {
            return false;
        }
        try {
            Files.createDirectories(Path.of(DIR));
        } catch (java.io.IOException e) {
            return false;
        }
        Path file = Path.of(DIR).resolve(System.currentTimeMillis() + "-" + name.replaceAll("[^A-Za-z0-9._-]", "_")
                + ".in_asm");
        hmp(qmp, "logfile " + file, timeout);
        hmp(qmp, "log in_asm", timeout);
        return true;
    }

    /** Ends the log {@link #start} began. */
    static void stop(QmpClient qmp, boolean started, Duration timeout) {
        if (started) {
            hmp(qmp, "log none", timeout);
        }
    }

    private static void hmp(QmpClient qmp, String command, Duration timeout) {
        qmp.execute("human-monitor-command", Map.of("command-line", command), timeout);
    }
}
