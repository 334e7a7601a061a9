package dev.kosa8.it;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Sandboxes coming and going: run, create, the daemon dying, QEMU dying, bad input. */
class LifecycleIT {

    @Test
    void runExecutesInAFreshSandboxAndLeavesNothingBehind() {
        Kosa.Result r = Kosa.run(Duration.ofMinutes(15), "run", "--", "sh", "-c", "echo hello from $(hostname); exit 5");
        assertThat(r.exitCode()).as(r.toString()).isEqualTo(5);
        assertThat(r.stdout()).isEqualTo("hello from sandbox\n");
        assertThat(Kosa.ok(Duration.ofMinutes(1), "ls", "-q").stdout()).doesNotContain("\n\n");
        await(() -> Kosa.ok(Duration.ofMinutes(1), "ls").stdout().lines().noneMatch(l -> l.contains("ephemeral")),
                "the ephemeral sandbox is removed");
    }

    /**
     * A client killed while its sandbox boots takes the sandbox with it. The stream once opened before the
     * sandbox existed, so its end found nothing to remove, and the sandbox, made a moment later, ran on: three of
     * four such kills left one running. The kills land at several points: during the CLI's start, the boot, the
     * command.
     */
    @Test
    void aRunWhoseClientIsKilledAtAnyPointLeavesNoSandboxBehind() throws Exception {
        Kosa.ok(Duration.ofMinutes(1), "ls"); // the daemon up, so the kills land in the boot, not in its start
        for (long delay : new long[] {300, 700, 1100, 1600, 2500}) {
            Process cli = Kosa.builder("run", "--", "sleep", "30").redirectErrorStream(true)
                    .redirectOutput(ProcessBuilder.Redirect.DISCARD).start();
            Thread.sleep(delay);
            cli.destroyForcibly().waitFor();
        }
        await(() -> Kosa.ok(Duration.ofMinutes(1), "ls").stdout().lines().noneMatch(l -> l.contains("ephemeral")),
                "every killed run's sandbox is removed");
    }

    @Test
    void aRunRefusedBeforeItsSandboxExistsSaysWhatToDoAndExitsAsAUsageError() {
        Kosa.Result r = Kosa.run(Duration.ofMinutes(1), "run", "--allow", "@nosuch", "--", "true");
        assertThat(r.exitCode()).as(r.toString()).isEqualTo(2);
        assertThat(r.stderr()).contains("no network preset '@nosuch'").contains("→ the presets are").contains("@pypi");
    }

    @Test
    void unknownSandboxGetsAClearError() {
        Kosa.Result r = Kosa.run(Duration.ofMinutes(1), "exec", "abcdef123456", "--", "true");
        assertThat(r.exitCode()).isEqualTo(2);
        assertThat(r.stderr()).contains("no sandbox 'abcdef123456'").contains("kosa8 ls");
    }

    /**
     * Two CLIs that find no daemon start one each; the second finds the first's lock and exits. It once
     * removed the first's socket on its way out, which left that daemon unreachable and every later start
     * refused by its lock ("kosa8d did not start within 20 s") until someone killed it.
     */
    @Test
    void aSecondDaemonStartedBesideARunningOneExitsAndLeavesItServing() throws Exception {
        Kosa.ok(Duration.ofMinutes(1), "ls"); // starts the daemon if none runs
        String serving = Kosa.ok(Duration.ofMinutes(1), "daemon", "status").stdout();
        Path socket = Kosa.HOME.resolve("run/kosa8d.sock");
        assertThat(socket).exists();
        List<String> argv = Kosa.jvm();
        argv.addAll(List.of("-cp", Kosa.JAR.toString(), "dev.kosa8.daemon.DaemonMain"));
        Path log = Files.createTempFile("second-kosa8d", ".log");
        Process second = Kosa.builder().command(argv).redirectErrorStream(true).redirectOutput(log.toFile()).start();
        boolean exited = second.waitFor(1, java.util.concurrent.TimeUnit.MINUTES);
        second.destroyForcibly();
        String out = Files.readString(log);
        Files.delete(log);
        assertThat(exited).as("the second daemon exits: " + out).isTrue();
        assertThat(second.exitValue()).as(out).isNotZero();
        assertThat(out).contains("another kosa8d already serves");

        assertThat(socket).as("the running daemon's socket").exists();
        assertThat(Kosa.ok(Duration.ofMinutes(1), "daemon", "status").stdout()).as("the same daemon, still serving")
                .isEqualTo(serving);
    }

    @Test
    void execStillWorksAfterTheDaemonIsKilledAndQemuDyingIsReportedAndCleanedUp() throws Exception {
        String id = Kosa.ok(Duration.ofMinutes(10), "create").stdout().strip();
        try {
            long daemonPid = Kosa.ok(Duration.ofMinutes(1), "daemon", "status").stdout()
                    .replaceAll("(?s).* pid (\\d+) .*", "$1").transform(s -> Long.parseLong(s.strip()));
            ProcessHandle.of(daemonPid).orElseThrow().destroyForcibly();
            ProcessHandle.of(daemonPid).ifPresent(h -> h.onExit().join());

            // the next command starts a new daemon, which re-attaches to the running VM
            Kosa.Result r = Kosa.run(Duration.ofMinutes(2), "exec", id, "--", "echo", "still here");
            assertThat(r.stdout()).as(r.toString()).isEqualTo("still here\n");

            String inspect = Kosa.ok(Duration.ofMinutes(1), "inspect", id).stdout();
            long recorded = Long.parseLong(inspect.replaceAll("(?s).*\"qemuPid\" : (\\d+).*", "$1"));
            // QEMU itself dies, as a crash in a device model would; the record names its jail's first process
            // when it runs in one, and that jail must end with it
            List<ProcessHandle> machine = machine(recorded);
            qemuOf(machine).destroyForcibly();
            await(() -> machine.stream().noneMatch(ProcessHandle::isAlive), "QEMU and its jail are gone");

            await(() -> Kosa.ok(Duration.ofMinutes(1), "inspect", id).stdout().contains("\"state\" : \"failed\""),
                    "the sandbox is marked failed");
            Kosa.Result dead = Kosa.run(Duration.ofMinutes(1), "exec", id, "--", "true");
            assertThat(dead.exitCode()).isEqualTo(3);
            assertThat(dead.stderr()).contains("is not running").contains("QEMU exited unexpectedly");
            Path runtime = Kosa.HOME.resolve("run").resolve(id);
            assertThat(Files.exists(runtime.resolve("qmp.sock"))).as("sockets cleaned up").isFalse();
        } finally {
            Kosa.run(Duration.ofMinutes(1), "rm", "-f", id);
        }
        assertThat(Files.exists(Kosa.HOME.resolve("data/sandboxes").resolve(id))).isFalse();
    }

    @Test
    void aDaemonKilledWhileABootIsUnderWayLeavesNoQemuBehind() throws Exception {
        Process cli = Kosa.builder("run", "--", "sleep", "600").start();
        try {
            // wait until the booting sandbox's record names its QEMU
            long[] qemuPid = {0};
            await(() -> {
                qemuPid[0] = booting().orElse(0L);
                return qemuPid[0] > 0;
            }, "the booting sandbox records its QEMU's pid", Duration.ofMinutes(15)); // the first run may build the image
            List<ProcessHandle> machine = new java.util.ArrayList<>();
            await(() -> {
                machine.clear();
                machine.addAll(machine(qemuPid[0]));
                return machine.stream().anyMatch(LifecycleIT::isQemu);
            }, "QEMU runs (in its jail, when the record names the jail)");
            long daemonPid = Long.parseLong(Kosa.ok(Duration.ofMinutes(1), "daemon", "status").stdout()
                    .replaceAll("(?s).* pid (\\d+) .*", "$1").strip());
            ProcessHandle.of(daemonPid).ifPresent(h -> {
                h.destroyForcibly();
                h.onExit().join();
            });
            cli.destroyForcibly().waitFor();
            Kosa.ok(Duration.ofMinutes(1), "ls"); // a new daemon recovers: an ephemeral sandbox without its client goes
            await(() -> ProcessHandle.of(qemuPid[0]).map(h -> !h.isAlive()).orElse(true), "the orphaned QEMU is stopped");
            await(() -> machine.stream().noneMatch(ProcessHandle::isAlive), "QEMU itself is gone with its jail");
        } finally {
            cli.destroyForcibly();
        }
    }

    /**
     * The process a record names ({@code qemuPid}: QEMU, or the first process of the jail QEMU runs in) and
     * every process under it; empty when it is gone.
     */
    static List<ProcessHandle> machine(long recorded) {
        return ProcessHandle.of(recorded).map(h -> java.util.stream.Stream.concat(java.util.stream.Stream.of(h),
                h.descendants()).toList()).orElse(List.of());
    }

    static boolean isQemu(ProcessHandle h) {
        try {
            return h.info().command().orElse("").contains("qemu-system")
                    || Files.readString(Path.of("/proc", Long.toString(h.pid()), "comm")).startsWith("qemu-system");
        } catch (java.io.IOException e) {
            return false; // it ended meanwhile
        }
    }

    static ProcessHandle qemuOf(List<ProcessHandle> machine) {
        return machine.stream().filter(LifecycleIT::isQemu).findFirst()
                .orElseThrow(() -> new AssertionError("no QEMU among " + machine.stream()
                        .map(h -> h.pid() + " " + h.info().command().orElse("?")).toList()));
    }

    /** The pid of a QEMU a sandbox record names while it is still starting. */
    private static java.util.Optional<Long> booting() {
        Path boxes = Kosa.HOME.resolve("data/sandboxes");
        try (var dirs = Files.list(boxes)) {
            for (Path d : dirs.toList()) {
                Path f = d.resolve("sandbox.json");
                if (Files.exists(f)) {
                    String json = Files.readString(f);
                    if (json.contains("\"STARTING\"")) {
                        long pid = Long.parseLong(json.replaceAll("(?s).*\"qemuPid\" : (\\d+).*", "$1"));
                        if (pid > 0) {
                            return java.util.Optional.of(pid);
                        }
                    }
                }
            }
        } catch (java.io.IOException | RuntimeException e) {
            // not there yet
        }
        return java.util.Optional.empty();
    }

    @Test
    void removingARunningSandboxNeedsForce() {
        String id = Kosa.ok(Duration.ofMinutes(10), "create").stdout().strip();
        try {
            Kosa.Result r = Kosa.run(Duration.ofMinutes(1), "rm", id);
            assertThat(r.exitCode()).isEqualTo(3);
            assertThat(r.stderr()).contains("is running").contains("rm -f");
            Kosa.ok(Duration.ofMinutes(2), "stop", id);
            assertThat(Kosa.ok(Duration.ofMinutes(1), "ls").stdout()).contains(id + "  stopped");
            Kosa.Result stopped = Kosa.run(Duration.ofMinutes(1), "exec", id, "--", "true");
            assertThat(stopped.stderr()).contains("is not running: it is stopped").contains("kosa8 start");
            Kosa.ok(Duration.ofMinutes(10), "start", id);
            assertThat(Kosa.ok(Duration.ofMinutes(2), "exec", id, "--", "echo", "back").stdout()).isEqualTo("back\n");
        } finally {
            Kosa.run(Duration.ofMinutes(1), "rm", "-f", id);
        }
    }

    @Test
    void imagePruneRemovesATemplateNothingUsesAndKeepsTheOneASandboxRestsOn() throws Exception {
        String id = Kosa.ok(Duration.ofMinutes(10), "create").stdout().strip();
        try {
            Path itsTemplate = Kosa.templateOf(id);
            // a template of an image that is gone, as an image rebuild leaves them
            Path stale = Kosa.HOME.resolve("data/templates").resolve("0000000000000000-tcg-c1-m256-1");
            Files.createDirectories(stale);
            Files.writeString(stale.resolve("template.json"), "{\"bootImage\": \"0000000000000000\"}");

            Kosa.Result doctor = Kosa.run(Duration.ofMinutes(1), "doctor");
            assertThat(doctor.stdout()).as("doctor points at it").containsPattern("warn +old images +\\d+ old image")
                    .contains("fix: kosa8 image prune");
            Kosa.Result dry = Kosa.ok(Duration.ofMinutes(1), "image", "prune", "--dry-run");
            assertThat(dry.stdout()).contains("would remove template " + stale.getFileName());
            assertThat(stale).exists();
            Kosa.Result pruned = Kosa.ok(Duration.ofMinutes(1), "image", "prune");
            assertThat(pruned.stdout()).contains("removed template " + stale.getFileName())
                    .doesNotContain(itsTemplate.getFileName().toString());
            assertThat(stale).doesNotExist();
            assertThat(itsTemplate.resolve("disk.qcow2")).exists();
            assertThat(Kosa.ok(Duration.ofMinutes(2), "exec", id, "--", "echo", "still").stdout()).isEqualTo("still\n");
        } finally {
            Kosa.run(Duration.ofMinutes(1), "rm", "-f", id);
        }
    }

    static void await(java.util.function.BooleanSupplier condition, String what) {
        await(condition, what, Duration.ofSeconds(60));
    }

    static void await(java.util.function.BooleanSupplier condition, String what, Duration timeout) {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("timed out waiting until " + what + Kosa.consoles());
            }
            try {
                Thread.sleep(250);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new AssertionError("interrupted");
            }
        }
    }
}
