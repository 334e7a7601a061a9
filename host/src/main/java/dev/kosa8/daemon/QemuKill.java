package dev.kosa8.daemon;

import dev.kosa8.vm.QemuProcess;
import java.time.Instant;

/** Kills a QEMU left by an earlier daemon, only if the pid still names that same process. */
final class QemuKill {
    private QemuKill() {
    }

    static void ifSame(long pid, Instant started) {
        if (pid > 0 && started != null) {
            QemuProcess.attach(pid, started, null).ifPresent(QemuProcess::kill);
        }
    }
}
