package dev.kosa8.vm;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@link Vm#startQemu}, with a stand-in for QEMU: a process that only waits. */
class VmStartTest {
    @TempDir
    Path dir;

    /** A QEMU whose pid cannot be recorded (a full disk) is stopped: otherwise it would run unknown to anyone. */
    @Test
    void aProcessWhosePidCannotBeRecordedIsStoppedBeforeTheFailureGoesOn() throws Exception {
        VmSpec spec = new VmSpec("abc123abc123", Accelerator.TCG, 2, 1024, dir.resolve("vmlinux"),
                dir.resolve("initramfs.cpio"), dir.resolve("root.qcow2"), "console=ttyS0", dir.resolve("console.log"),
                dir.resolve("qmp.sock"), dir.resolve("agent.sock"), null);
        AtomicReference<QemuProcess> seen = new AtomicReference<>();
        assertThatThrownBy(() -> Vm.startQemu(spec, List.of("sleep", "600"), false, q -> {
            seen.set(q);
            throw new java.io.UncheckedIOException(new java.io.IOException("No space left on device"));
        })).hasMessageContaining("No space left on device");

        long pid = seen.get().pid();
        long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
        while (ProcessHandle.of(pid).map(ProcessHandle::isAlive).orElse(false) && System.nanoTime() < deadline) {
            Thread.sleep(20);
        }
        assertThat(ProcessHandle.of(pid).map(ProcessHandle::isAlive).orElse(false)).as("pid %d left running", pid)
                .isFalse();

        QemuProcess recorded = Vm.startQemu(spec, List.of("sleep", "600"), false, q -> { });
        try {
            assertThat(recorded.isAlive()).as("a process recorded is left to its caller").isTrue();
        } finally {
            recorded.kill();
        }
    }
}
