package dev.kosa8.it;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kosa8.vm.ConsoleLog;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * The guest's console on the host: a guest writing without end to its serial
 * console leaves a log within the sandbox's limit, whose latest lines
 * {@code kosa8 logs} shows, and a daemon restart leaves a note where the
 * output it could not read went.
 *
 * <p>The sandbox keeps the least console a sandbox may keep, 64 KiB
 * ({@code --console-limit 64K}, a host-side option the guest cannot reach),
 * so 2 MiB written to {@code /dev/console}, 32 times the limit, turns the log
 * over many times: the same code keeps any limit. The emulated serial port
 * carries some tens of KB/s under TCG here, so that takes about a minute; the
 * 32 MiB case (what made 32 MiB more of {@code console.log} before the
 * limit; 512 times the limit over ten minutes or more, with the daemon's and
 * QEMU's memory printed for docs/limits.md) is tagged long. {@code ConsolePumpTest} sends 100 MiB
 * through the same pump and log from a stand-in for QEMU's socket.
 */
class ConsoleIT {
    static final Duration T = Duration.ofMinutes(10);
    static final long LIMIT = 64L << 10;
    static String id;
    static Path dir;

    @BeforeAll
    static void create() {
        id = Kosa.ok(T, "create", "--net", "none", "--console-limit", "64K").stdout().strip();
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
        floods(2L << 20);
    }

    @Test
    @Tag("long") // 32 MiB through the emulated serial port: 10-15 minutes under TCG; ./run-tests long
    void aGuestFlooding32MiBToItsConsoleForMinutesLeavesALogWithinItsLimit() throws Exception {
        floods(32L << 20);
    }

    /**
     * The guest writes {@code bytes} to its console: what the host keeps is
     * looked at throughout and never passes the limit, no process is started
     * per line, what was dropped is noted and the latest lines are shown.
     */
    private static void floods(long bytes) throws Exception {
        Path log = dir.resolve("console.log");
        long daemon = Long.parseLong(Kosa.ok(Duration.ofMinutes(1), "daemon", "status").stdout()
                .replaceAll("(?s).* pid (\\d+) .*", "$1").strip());
        long qemu = Long.parseLong(Kosa.ok(Duration.ofMinutes(1), "inspect", id).stdout()
                .replaceAll("(?s).*\"qemuPid\" : (\\d+).*", "$1"));
        long daemonRssBefore = rssKiB(daemon);
        long qemuRssBefore = treeRssKiB(qemu);
        int processesBefore = tree(qemu).size();
        // what the host keeps, looked at every 100 ms while the guest writes: never more than the limit
        AtomicLong mostKept = new AtomicLong();
        AtomicLong mostDaemonRss = new AtomicLong();
        AtomicLong mostQemuRss = new AtomicLong();
        AtomicLong mostProcesses = new AtomicLong();
        AtomicBoolean flooding = new AtomicBoolean(true);
        Thread watch = Thread.ofVirtual().start(() -> {
            while (flooding.get()) {
                try {
                    mostKept.accumulateAndGet(size(log) + size(ConsoleLog.older(log)), Math::max);
                    mostDaemonRss.accumulateAndGet(rssKiB(daemon), Math::max);
                    mostQemuRss.accumulateAndGet(treeRssKiB(qemu), Math::max);
                    mostProcesses.accumulateAndGet(tree(qemu).size(), Math::max);
                    Thread.sleep(100);
                } catch (Exception e) {
                    // a file rotated or a process read mid-change: the next look
                }
            }
        });
        long start = System.nanoTime();
        try {
            Kosa.ok(Duration.ofMinutes(60), "exec", id, "--", "sh", "-c",
                    "head -c " + bytes + " /dev/zero | tr '\\0' x | fold -w 99 > /dev/console;"
                            + " echo the-last-line > /dev/console");
        } finally {
            flooding.set(false);
            watch.join();
        }
        double seconds = (System.nanoTime() - start) / 1e9;
        long deadline = System.nanoTime() + Duration.ofMinutes(1).toNanos();
        while (!Kosa.ok(Duration.ofMinutes(1), "logs", id).stdout().contains("the-last-line")
                && System.nanoTime() < deadline) {
            Thread.sleep(200);
        }
        long kept = size(log) + size(ConsoleLog.older(log));
        System.out.printf("ConsoleIT: %d MiB to /dev/console in %.0f s (%.0f KB/s); console.log and .1 at most %d"
                        + " bytes (limit %d); daemon RSS %d -> at most %d KiB; QEMU's jail RSS %d -> at most %d KiB;"
                        + " its processes %d -> at most %d%n", bytes >> 20, seconds, bytes / seconds / 1000,
                mostKept.get(), LIMIT, daemonRssBefore, mostDaemonRss.get(), qemuRssBefore, mostQemuRss.get(), processesBefore,
                mostProcesses.get());
        assertThat(mostKept.get()).as("console.log and console.log.1 together, at any time").isLessThanOrEqualTo(LIMIT);
        assertThat(kept).as("console.log and console.log.1 together, after").isLessThanOrEqualTo(LIMIT);
        assertThat(mostProcesses.get()).as("no host process per line").isEqualTo(processesBefore);
        assertThat(Files.readString(log)).as("what was dropped is said")
                .containsPattern("\\d+ bytes older than that were dropped");
        String logs = Kosa.ok(Duration.ofMinutes(1), "logs", id).stdout();
        assertThat(logs.strip()).endsWith("the-last-line");
        assertThat(logs).contains("x".repeat(99));
    }

    private static long size(Path p) throws java.io.IOException {
        return Files.exists(p) ? Files.size(p) : 0;
    }

    /** A process's resident memory, from /proc. */
    static long rssKiB(long pid) throws java.io.IOException {
        String status = Files.readString(Path.of("/proc", Long.toString(pid), "status"));
        return Long.parseLong(status.replaceAll("(?s).*VmRSS:\\s+(\\d+) kB.*", "$1"));
    }

    /** {@code pid} and every process under it. */
    static List<Long> tree(long pid) throws java.io.IOException {
        List<Long> all = new ArrayList<>(List.of(pid));
        for (int i = 0; i < all.size(); i++) {
            try (var tasks = Files.list(Path.of("/proc", Long.toString(all.get(i)), "task"))) {
                for (Path t : tasks.toList()) {
                    for (String c : Files.readString(t.resolve("children")).strip().split("\\s+")) {
                        if (!c.isEmpty()) {
                            all.add(Long.parseLong(c));
                        }
                    }
                }
            }
        }
        return all;
    }

    static long treeRssKiB(long pid) throws java.io.IOException {
        long sum = 0;
        for (long p : tree(pid)) {
            sum += rssKiB(p);
        }
        return sum;
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
