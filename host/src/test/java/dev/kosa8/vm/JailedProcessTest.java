package dev.kosa8.vm;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assumptions.assumeThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A process in the jail, as {@link Vm#startQemu} starts QEMU, with {@code
 * sleep} in QEMU's place: the pid recorded is the one to watch and kill, a
 * restarted daemon finds it by pid and start time, and killing it ends what
 * runs inside. Needs bubblewrap and namespaces (skipped where {@link
 * JailProbe} finds none; CI has both).
 */
class JailedProcessTest {
    @TempDir
    Path dir;

    VmSpec spec(Jail jail) throws Exception {
        Path run = Files.createDirectories(dir.resolve("run"));
        Files.writeString(dir.resolve("vmlinux"), "kernel");
        Files.writeString(dir.resolve("initramfs.cpio"), "initramfs");
        Files.writeString(dir.resolve("root.qcow2"), "disk");
        return new VmSpec("abc123abc123", Accelerator.TCG, 2, 1024, dir.resolve("vmlinux"),
                dir.resolve("initramfs.cpio"), dir.resolve("root.qcow2"), "console=ttyS0", dir.resolve("console.log"),
                run.resolve("qmp.sock"), run.resolve("agent.sock"), null).confined(jail, VmSpec.DEFAULT_CONSOLE_LIMIT);
    }

    static Jail jail() {
        Jail jail = JailProbe.detect(JailProbe.Mode.AUTO);
        assumeThat(jail.confines()).as(jail.describe()).isTrue();
        return jail;
    }

    @Test
    void theRecordedProcessIsTheJailsFirstAndKillingItEndsWhatRunsInside() throws Exception {
        VmSpec spec = spec(jail());
        QemuProcess q = Vm.startQemu(spec, List.of("/usr/bin/sleep", "600"), false, p -> { });
        try {
            assertThat(Files.readString(Path.of("/proc", Long.toString(q.pid()), "comm")).strip())
                    .as("the jail's PID 1, bubblewrap's first child").isEqualTo("bwrap");
            long inner = waitForChild(q.pid(), "sleep");
            assertThat(Files.readSymbolicLink(Path.of("/proc", Long.toString(inner), "ns", "mnt")))
                    .as("a mount namespace of its own")
                    .isNotEqualTo(Files.readSymbolicLink(Path.of("/proc/self/ns/mnt")));
            for (String ns : List.of("pid", "net", "ipc", "uts")) {
                assertThat(Files.readSymbolicLink(Path.of("/proc", Long.toString(inner), "ns", ns))).as(ns)
                        .isNotEqualTo(Files.readSymbolicLink(Path.of("/proc/self/ns", ns)));
            }
            assertThat(QemuProcess.withJailed(q.pid())).as("QEMU's threads are found under the jail's first process")
                    .contains(q.pid(), inner);

            QemuProcess again = QemuProcess.attach(q.pid(), q.startInstant(), null).orElseThrow();
            assertThat(again.isAlive()).isTrue();
            assertThat(QemuProcess.attach(q.pid(), q.startInstant().minusSeconds(5), null))
                    .as("another start time is another process").isEmpty();

            long t0 = System.nanoTime();
            again.kill(); // as a restarted daemon kills a QEMU it found (QemuKill)
            assertThat(q.onExit()).succeedsWithin(Duration.ofSeconds(5));
            assertThat((System.nanoTime() - t0) / 1_000_000).as("the end of a process started here is seen at once")
                    .isLessThan(3000);
            assertThat(ProcessHandle.of(inner).map(ProcessHandle::isAlive).orElse(false))
                    .as("what ran in the jail ended with it").isFalse();
            assertThat(q.exitDescription()).isEqualTo("killed by signal 9");
        } finally {
            q.kill();
        }
    }

    @Test
    void insideOnlyTheMachinesOwnFilesAreThere() throws Exception {
        VmSpec spec = spec(jail());
        Files.writeString(dir.resolve("secret"), "not for QEMU");
        QemuProcess q = Vm.startQemu(spec, List.of("/bin/sh", "-c", "ls " + dir + "; cat " + dir.resolve("secret")
                + "; cat " + spec.kernel() + "; echo x > " + spec.kernel() + "; echo ok > " + dir.resolve("run/mine")
                + "; echo $HOME; id -u"), false, p -> { });
        assertThat(q.waitFor(Duration.ofSeconds(20))).isTrue();
        String said = Files.readString(dir.resolve("qemu.log"));
        assertThat(said).contains("initramfs.cpio").contains("root.qcow2").contains("run").contains("vmlinux")
                .doesNotContain("not for QEMU").contains("No such file").contains("Read-only file system")
                .contains("kernel");
        assertThat(dir.resolve("run/mine")).hasContent("ok");
        assertThat(said.lines().filter(l -> l.startsWith("/")).toList()).as("no HOME in its environment").isEmpty();
    }

    /** The process under the jail's first one, once it runs {@code program} (before its exec it is bubblewrap's). */
    private static long waitForChild(long pid, String program) throws Exception {
        long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
        while (System.nanoTime() < deadline) {
            List<Long> under = QemuProcess.withJailed(pid);
            if (under.size() > 1) {
                try {
                    if (Files.readString(Path.of("/proc", Long.toString(under.get(1)), "comm")).strip().equals(program)) {
                        return under.get(1);
                    }
                } catch (java.io.IOException e) {
                    // it ended meanwhile
                }
            }
            Thread.sleep(5);
        }
        throw new AssertionError("no " + program + " started in the jail");
    }
}
