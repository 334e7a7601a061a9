package dev.kosa8.it;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.json.JsonMapper;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The daemon killed with SIGKILL while a sandbox runs (docs/design.md,
 * "Restarting the daemon"): the next daemon re-attaches to the same QEMU, its
 * folder and its broker; a command that was in flight fails at once with an
 * error that says the daemon went away, never hangs; a machine that died
 * while no daemon ran is named as failed, with why.
 */
class DaemonRestartIT {
    static final Duration T = Duration.ofMinutes(3);
    static final JsonMapper JSON = JsonMapper.builder().build();

    @RegisterExtension
    static final ReplaceableSandbox SANDBOX = new ReplaceableSandbox("DaemonRestartIT", "--memory", "256M");

    @Test
    void aKilledDaemonsSuccessorReattachesToTheMachineItsFolderAndItsBrokerAndACommandInFlightFailsClearly()
            throws Exception {
        SharedSandbox.Booted box = SANDBOX.running();
        String id = box.id();
        long qemu = inspect(id).path("qemuPid").asLong();
        assertThat(qemu).isPositive();
        Path started = box.workspace().resolve("started");
        Files.deleteIfExists(started);
        // a command in flight: its session held by the daemon about to die
        CompletableFuture<Kosa.Result> inFlight = CompletableFuture.supplyAsync(() -> Kosa.run(T, "exec", id, "--",
                "sh", "-c", "echo started > /workspace/started; sleep 100; echo finished"));
        long until = System.nanoTime() + Duration.ofMinutes(2).toNanos();
        while (!Files.exists(started)) {
            assertThat(System.nanoTime()).as("the command started in the guest").isLessThan(until);
            Thread.sleep(100);
        }
        killDaemon();
        long killed = System.nanoTime();
        Kosa.Result failed = inFlight.get(60, TimeUnit.SECONDS); // not a hang
        System.out.printf("the command in flight ended %d ms after the daemon's kill%n",
                (System.nanoTime() - killed) / 1_000_000);
        assertThat(failed.exitCode()).as(failed.toString()).isNotZero();
        assertThat(failed.stdout()).doesNotContain("finished");
        assertThat(failed.stderr()).as("a clear error").contains("kosa8d").containsAnyOf("ended", "lost");

        // the next daemon: the same machine, running, its folder live both ways, its broker answering
        JsonNode after = inspect(id);
        assertThat(after.path("state").asText()).isEqualTo("running");
        assertThat(after.path("qemuPid").asLong()).as("the same QEMU, re-attached, not a new one").isEqualTo(qemu);
        Files.writeString(box.workspace().resolve("from-host"), "written while the daemon was away");
        Kosa.Result folder = Kosa.ok(T, "exec", id, "--", "sh", "-c",
                "cat /workspace/from-host && echo back > /workspace/from-guest");
        assertThat(folder.stdout()).isEqualTo("written while the daemon was away");
        assertThat(box.workspace().resolve("from-guest")).hasContent("back");
        Kosa.Result denied = Kosa.run(T, "exec", id, "--", "curl", "-sS", "--max-time", "60", "http://denied.test/");
        assertThat(denied.stdout()).as("the broker answers again: %s", denied).contains("kosa8 allow " + id
                + " denied.test");
        assertThat(Kosa.ok(T, "daemon", "status").stdout()).contains("pid");
    }

    @Test
    void aMachineThatDiedWhileNoDaemonRanIsNamedAsFailedWithWhyAndStartsAgain() throws Exception {
        SharedSandbox.Booted box = SANDBOX.running();
        String id = box.id();
        long qemu = inspect(id).path("qemuPid").asLong();
        killDaemon();
        new ProcessBuilder("kill", "-9", Long.toString(qemu)).start().waitFor();
        ProcessHandle.of(qemu).ifPresent(h -> h.onExit().join());

        JsonNode after = inspect(id); // the next daemon starts for this call
        assertThat(after.path("state").asText()).isEqualTo("failed");
        assertThat(after.path("failure").asText()).as("says which and why").contains("lost while the daemon was down");
        assertThat(Kosa.ok(T, "ls").stdout()).contains(id).contains("failed");
        Kosa.Result exec = Kosa.run(T, "exec", id, "--", "true");
        assertThat(exec.exitCode()).isNotZero();
        assertThat(exec.stderr()).as("names the state").contains("failed");
        assertThat(Files.readString(Kosa.HOME.resolve("data/kosa8d.log"))).as("the daemon's log names the sandbox")
                .contains("sandbox " + id + ": ");
        Kosa.ok(Duration.ofMinutes(10), "start", id);
        assertThat(Kosa.ok(T, "exec", id, "--", "echo", "again").stdout()).isEqualTo("again\n");
    }

    /**
     * A CLI of another build (the jar rebuilt) finds the daemon's build file
     * naming this one: it replaces the daemon before its command runs, the
     * command runs once, and the sandbox goes on under the new daemon; then a
     * CLI of this build takes it back the same way.
     */
    @Test
    void aCliOfAnotherBuildReplacesTheDaemonBeforeItsCommandRunsOnce() throws Exception {
        SharedSandbox.Booted box = SANDBOX.running();
        String id = box.id();
        Path buildFile = Kosa.HOME.resolve("run/kosa8d.build");
        String ours = Files.readString(buildFile).strip();
        Path ran = box.workspace().resolve("ran");
        Files.deleteIfExists(ran);
        Kosa.Result other = Kosa.runWith(java.util.Map.of("JDK_JAVA_OPTIONS", "-Dkosa8.build=it-another-build"), T,
                new byte[0], "exec", id, "--", "sh", "-c", "echo once >> /workspace/ran");
        assertThat(other.exitCode()).as(other.toString()).isZero();
        assertThat(Files.readString(ran)).as("the command ran once").isEqualTo("once\n");
        assertThat(Files.readString(buildFile).strip()).as("a daemon of the other build serves").isEqualTo(
                "it-another-build");
        assertThat(Kosa.ok(T, "exec", id, "--", "echo", "back").stdout()).isEqualTo("back\n");
        assertThat(Files.readString(buildFile).strip()).as("this build's daemon again").isEqualTo(ours);
    }

    static JsonNode inspect(String id) throws Exception {
        return JSON.readTree(Kosa.ok(T, "inspect", id).stdout());
    }

    /** SIGKILL to the running daemon, as a crash or an OOM kill would; waits until it is gone. */
    static void killDaemon() throws Exception {
        java.util.regex.Matcher m = java.util.regex.Pattern.compile(" pid (\\d+) ")
                .matcher(Kosa.ok(T, "daemon", "status").stdout());
        assertThat(m.find()).isTrue();
        long daemon = Long.parseLong(m.group(1));
        new ProcessBuilder("kill", "-9", Long.toString(daemon)).start().waitFor();
        ProcessHandle.of(daemon).ifPresent(h -> h.onExit().join());
    }
}
