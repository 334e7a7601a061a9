package dev.kosa8.daemon;

import java.time.Duration;
import java.time.Instant;

/** Kills a QEMU left by an earlier daemon, only if the pid still names that same process. */
final class QemuKill {
    private QemuKill() {
    }

    static void ifSame(long pid, Instant started) {
        if (pid <= 0 || started == null) {
            return;
        }
        ProcessHandle.of(pid)
                .filter(h -> h.info().startInstant()
                        .map(s -> Duration.between(s, started).abs().toMillis() < 1000).orElse(false))
                .ifPresent(h -> {
                    h.destroyForcibly();
                    try {
                        h.onExit().get(10, java.util.concurrent.TimeUnit.SECONDS);
                    } catch (Exception ignored) {
                        // it was killed; waiting is a courtesy
                    }
                });
    }
}
