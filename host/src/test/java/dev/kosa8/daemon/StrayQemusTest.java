package dev.kosa8.daemon;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.kosa8.host.HostTools;
import dev.kosa8.vm.QemuProcess;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The stray sweep with real QEMUs (no machine: {@code -machine none}, a
 * monitor socket and nothing else), jailed by real bubblewrap the way the
 * daemon jails them ({@link QemuProcess#start(List, Path, boolean)}).
 */
class StrayQemusTest {
    @TempDir
    Path home;
    final List<QemuProcess> started = new ArrayList<>();
    final List<String> log = new ArrayList<>();

    @AfterEach
    void stopAll() {
        started.forEach(QemuProcess::kill);
    }

    QemuProcess qemu(Path dir, boolean jailed) throws Exception {
        Files.createDirectories(dir);
        List<String> argv = new ArrayList<>();
        if (jailed) {
            argv.addAll(List.of(HostTools.which("bwrap"), "--unshare-pid", "--dev-bind", "/", "/", "--"));
        }
        argv.addAll(List.of(HostTools.which("qemu-system-x86_64"), "-machine", "none", "-nodefaults", "-display",
                "none", "-S", "-qmp", "unix:" + dir.resolve("qmp.sock") + ",server=on,wait=off"));
        QemuProcess q = QemuProcess.start(argv, dir.resolve("qemu.log"), jailed);
        started.add(q);
        long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
        while (!Files.exists(dir.resolve("qmp.sock")) && System.nanoTime() < deadline) {
            Thread.sleep(20);
        }
        assertThat(dir.resolve("qmp.sock")).as("QEMU is up").exists();
        return q;
    }

    @Test
    void aQemuNoRecordNamesIsKilledAndTheRecordedOneAndOtherSandboxesAreLeft() throws Exception {
        assumeTrue(HostTools.which("qemu-system-x86_64") != null, "qemu-system-x86 is not installed");
        Path run = home.resolve("run/a1");
        List<Path> dirs = List.of(run, run.resolve("alt"));
        QemuProcess recorded = qemu(run, false);
        QemuProcess stray = qemu(run.resolve("alt"), false);
        QemuProcess otherSandbox = qemu(home.resolve("run/b2"), false);

        assertThat(StrayQemus.of(dirs)).extracting(ProcessHandle::pid)
                .containsExactlyInAnyOrder(recorded.pid(), stray.pid());
        assertThat(StrayQemus.end("a1", dirs, recorded.pid(), log::add)).isEqualTo(1);

        assertThat(stray.isAlive()).isFalse();
        assertThat(recorded.isAlive()).isTrue();
        assertThat(otherSandbox.isAlive()).isTrue();
        assertThat(log).singleElement().asString().contains("pid " + stray.pid()).contains("no record named");
    }

    @Test
    void aJailedMachineIsKeptWholeWhenRecordedAndEndedWholeWhenNot() throws Exception {
        assumeTrue(HostTools.which("qemu-system-x86_64") != null && HostTools.which("bwrap") != null,
                "qemu-system-x86 or bubblewrap is not installed");
        Path run = home.resolve("run/c3");
        List<Path> dirs = List.of(run, run.resolve("alt"));
        QemuProcess jailed = qemu(run, true); // the recorded pid: the jail's first process, QEMU's parent

        assertThat(StrayQemus.of(dirs)).as("outer bubblewrap, the jail's first process, QEMU").hasSize(3);
        assertThat(StrayQemus.end("c3", dirs, jailed.pid(), log::add)).isZero();
        assertThat(jailed.isAlive()).isTrue();

        // removed: nothing is recorded any more, and all of the jail goes
        // each killed is logged; a jail's processes left without their QEMU end by themselves and are not counted
        assertThat(StrayQemus.end("c3", dirs, 0, log::add)).isBetween(1, 3).isEqualTo(log.size());
        assertThat(StrayQemus.of(dirs)).isEmpty();
        assertThat(jailed.isAlive()).isFalse();
    }
}
