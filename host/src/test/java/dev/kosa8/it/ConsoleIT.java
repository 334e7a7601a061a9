package dev.kosa8.it;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kosa8.vm.ConsoleLog;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The guest's console on the host: a guest writing without end to its serial
 * console leaves a log within the sandbox's limit, whose latest lines
 * {@code kosa8 logs} shows, and a daemon restart leaves a note where the
 * output it could not read went.
 *
 * <p>The sandbox's limit is 256 KiB and the guest writes 2 MiB, eight times
 * as much: the emulated serial port carries about 40 KB/s under TCG on this
 * machine, so the 100 MiB would take the better part of an hour
 * here; {@code ConsolePumpTest} sends 100 MiB through the same pump and log
 * from a stand-in for QEMU's socket.
 */
class ConsoleIT {
    static final Duration T = Duration.ofMinutes(10);
    static final long LIMIT = 256L << 10;
    static String id;
    static Path dir;

    @BeforeAll
    static void create() {
        id = Kosa.ok(T, "create", "--net", "none", "--console-limit", "256K").stdout().strip();
        dir = Kosa.HOME.resolve("data/sandboxes").resolve(id);
    }

    @AfterAll
    static void remove() {
        if (id != null) {
            Kosa.run(Duration.ofMinutes(1), "rm", "-f", id);
        }
    }

    @Test
    void aGuestFloodingItsConsoleLeavesALogWithinItsLimitWhoseLatestLinesAreShown() throws Exception {
        Kosa.ok(Duration.ofMinutes(20), "exec", id, "--", "sh", "-c",
                "head -c 2097152 /dev/zero | tr '\\0' x | fold -w 99 > /dev/ttyS0; echo the-last-line > /dev/ttyS0");
        Path log = dir.resolve("console.log");
        long deadline = System.nanoTime() + Duration.ofMinutes(1).toNanos();
        while (!Kosa.ok(Duration.ofMinutes(1), "logs", id).stdout().contains("the-last-line")
                && System.nanoTime() < deadline) {
            Thread.sleep(200);
        }
        long kept = Files.size(log) + Files.size(ConsoleLog.older(log));
        assertThat(kept).as("console.log and console.log.1 together").isLessThanOrEqualTo(LIMIT);
        assertThat(Files.readString(log)).as("what was dropped is said")
                .containsPattern("\\d+ bytes older than that were dropped");
        String logs = Kosa.ok(Duration.ofMinutes(1), "logs", id).stdout();
        assertThat(logs.strip()).endsWith("the-last-line");
        assertThat(logs).contains("x".repeat(99));
    }

    @Test
    void aDaemonRestartIsNotedAndTheConsoleIsReadAgain() throws Exception {
        long daemonPid = Long.parseLong(Kosa.ok(Duration.ofMinutes(1), "daemon", "status").stdout()
                .replaceAll("(?s).* pid (\\d+) .*", "$1").strip());
        ProcessHandle.of(daemonPid).ifPresent(h -> {
            h.destroyForcibly();
            h.onExit().join();
        });
        // the next command starts a daemon, which re-attaches; on a loaded machine that can take longer than
        // the CLI waits for it (exit 7), so the daemon is given a few tries to come up before the command
        for (int attempt = 0; attempt < 3 && Kosa.run(Duration.ofMinutes(2), "ls").exitCode() == 7; attempt++) {
            Thread.sleep(1000);
        }
        Kosa.ok(T, "exec", id, "--", "sh", "-c", "echo after-the-restart > /dev/ttyS0");
        long deadline = System.nanoTime() + Duration.ofMinutes(1).toNanos();
        String logs = "";
        while (!logs.contains("after-the-restart") && System.nanoTime() < deadline) {
            logs = Kosa.ok(Duration.ofMinutes(1), "logs", id).stdout();
            Thread.sleep(200);
        }
        assertThat(logs).contains("[kosa8: ").contains("a daemon re-attached").contains("after-the-restart");
    }
}
