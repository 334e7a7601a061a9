package dev.kosa8.daemon;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * What a daemon killed outright leaves of standby QEMUs, and what the next
 * one does about it: real processes (a {@code sleep} stands in for QEMU: the
 * sweep goes by pid and start time, never by program), real pid files.
 */
class StandbysTest {
    @TempDir
    Path run;
    final List<Process> started = new ArrayList<>();
    final List<String> log = new ArrayList<>();

    @AfterEach
    void stopAll() {
        started.forEach(Process::destroyForcibly);
    }

    Process sleeper() throws Exception {
        Process p = new ProcessBuilder("sleep", "600").start();
        started.add(p);
        return p;
    }

    static void record(Path dir, Process p) throws Exception {
        Files.createDirectories(dir);
        Files.writeString(dir.resolve(Standbys.PID_FILE),
                p.pid() + " " + p.toHandle().info().startInstant().orElseThrow() + "\n");
    }

    @Test
    void aLeftStandbyIsStoppedAndItsPidFileRemoved() throws Exception {
        Process standby = sleeper();
        Process machine = sleeper();
        record(run.resolve("alt"), standby);
        Standbys.sweep(machine.pid(), List.of(run, run.resolve("alt")), log::add);
        assertThat(standby.waitFor(10, java.util.concurrent.TimeUnit.SECONDS)).as("the standby was stopped").isTrue();
        assertThat(machine.isAlive()).as("the sandbox's machine runs on").isTrue();
        assertThat(run.resolve("alt").resolve(Standbys.PID_FILE)).doesNotExist();
        assertThat(log).anyMatch(l -> l.contains("pid " + standby.pid()));
    }

    @Test
    void aStandbyThatBecameTheRecordedMachineIsLeftRunning() throws Exception {
        // the daemon died after the rewind recorded the standby as the sandbox's QEMU, before its pid file went
        Process machine = sleeper();
        record(run, machine);
        Standbys.sweep(machine.pid(), List.of(run, run.resolve("alt")), log::add);
        assertThat(machine.waitFor(300, java.util.concurrent.TimeUnit.MILLISECONDS)).isFalse();
        assertThat(run.resolve(Standbys.PID_FILE)).doesNotExist();
    }

    @Test
    void aPidReusedByAnotherProcessIsNotKilled() throws Exception {
        Process other = sleeper();
        Files.writeString(run.resolve(Standbys.PID_FILE), other.pid() + " "
                + other.toHandle().info().startInstant().orElseThrow().minus(Duration.ofMinutes(5)) + "\n");
        Standbys.sweep(0, List.of(run), log::add);
        assertThat(other.waitFor(300, java.util.concurrent.TimeUnit.MILLISECONDS)).as("not the recorded process")
                .isFalse();
        assertThat(run.resolve(Standbys.PID_FILE)).doesNotExist();
    }

    @Test
    void aDamagedPidFileIsReportedAndRemoved() throws Exception {
        Files.writeString(run.resolve(Standbys.PID_FILE), "garbage");
        Standbys.sweep(0, List.of(run, run.resolve("alt")), log::add);
        assertThat(run.resolve(Standbys.PID_FILE)).doesNotExist();
        assertThat(log).anyMatch(l -> l.contains("cannot read the standby QEMU"));
    }
}
