package dev.kosa8.host;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class CrashPointsTest {
    @TempDir
    Path dir;

    @AfterEach
    void off() {
        CrashPoints.setForTest(CrashPoints.Settings.OFF);
    }

    @Test
    void unsetOrBlankIsOffAndAPointThenAsksForNothing() {
        assertThat(CrashPoints.Settings.of(Map.of()).on()).isFalse();
        assertThat(CrashPoints.Settings.of(Map.of(CrashPoints.ENVIRONMENT, " ")).on()).isFalse();
        CrashPoints.setForTest(CrashPoints.Settings.OFF);
        CrashPoints.reached("checkpoint", "disk", () -> {
            throw new AssertionError("the QEMU pid is asked for with the hook off");
        });
    }

    @Test
    void aRecordAndAKillAreReadFromTheEnvironment() {
        var s = CrashPoints.Settings.of(Map.of(CrashPoints.ENVIRONMENT,
                "record=" + dir.resolve("steps") + "; kill=rewind/quit:qemu"));
        assertThat(s.record()).contains(dir.resolve("steps"));
        assertThat(s.kill()).contains(new CrashPoints.Kill("rewind/quit", CrashPoints.Target.QEMU));
    }

    @Test
    void aMalformedSettingIsRefusedNamingTheVariableNeverHalfUsed() {
        for (String bad : List.of("kill=checkpoint/disk", "kill=checkpoint/disk:guest", "kill=Checkpoint:daemon",
                "record", "crash=everything")) {
            assertThatThrownBy(() -> CrashPoints.Settings.of(Map.of(CrashPoints.ENVIRONMENT, bad)))
                    .as(bad).isInstanceOf(KosaException.class)
                    .hasMessageContaining(CrashPoints.ENVIRONMENT + "=" + bad)
                    .hasMessageContaining("not a crash point setting");
        }
    }

    @Test
    void everyPointReachedIsRecordedInOrder() throws Exception {
        Path steps = dir.resolve("steps");
        CrashPoints.setForTest(new CrashPoints.Settings(Optional.of(steps), Optional.empty()));
        CrashPoints.reached("checkpoint", "precopy");
        CrashPoints.reached("checkpoint", "freeze", () -> ProcessHandle.current().pid());
        assertThat(Files.readAllLines(steps)).as("+qemu: a live QEMU to kill there").containsExactly(
                "checkpoint/precopy", "checkpoint/freeze +qemu");
    }

    @Test
    void aQemuKillPointKillsThatProcessWithSigkillOnceAndSaysSo() throws Exception {
        Process victim = new ProcessBuilder("sleep", "60").start();
        Process other = new ProcessBuilder("sleep", "60").start();
        try {
            Path steps = dir.resolve("steps");
            CrashPoints.setForTest(new CrashPoints.Settings(Optional.of(steps),
                    Optional.of(new CrashPoints.Kill("rewind/quit", CrashPoints.Target.QEMU))));
            CrashPoints.reached("rewind", "stop", victim::pid);
            assertThat(victim.isAlive()).as("another point kills nothing").isTrue();
            CrashPoints.reached("rewind", "quit", victim::pid);
            assertThat(victim.waitFor(10, TimeUnit.SECONDS)).isTrue();
            assertThat(victim.exitValue()).as("SIGKILL").isEqualTo(128 + 9);
            CrashPoints.reached("rewind", "quit", other::pid);
            assertThat(other.isAlive()).as("a point is killed at its first reach only").isTrue();
            assertThat(Files.readAllLines(steps)).containsExactly("rewind/stop +qemu", "rewind/quit +qemu",
                    "killed rewind/quit qemu", "rewind/quit +qemu");
        } finally {
            victim.destroyForcibly();
            other.destroyForcibly();
        }
    }

    @Test
    void aQemuKillWhereThereIsNoQemuKillsNothingAndSaysSo() throws Exception {
        Path steps = dir.resolve("steps");
        CrashPoints.setForTest(new CrashPoints.Settings(Optional.of(steps),
                Optional.of(new CrashPoints.Kill("secret-set/value", CrashPoints.Target.QEMU))));
        CrashPoints.reached("secret-set", "value");
        assertThat(Files.readAllLines(steps)).containsExactly("secret-set/value", "no-qemu secret-set/value");
    }

    /**
     * The hook is set from the process's own environment at its start, in the two entry points, and nowhere
     * else: no API handler, guest message or file a guest can write reaches it.
     */
    @Test
    void onlyTheEntryPointsSetTheHookAndOnlyFromTheirOwnEnvironment() throws Exception {
        Path main = Path.of("src/main/java");
        List<String> callers = new ArrayList<>();
        try (var files = Files.walk(main)) {
            for (Path f : files.filter(p -> p.toString().endsWith(".java")).toList()) {
                String src = Files.readString(f);
                int at = src.indexOf("CrashPoints.install(");
                while (at >= 0) {
                    callers.add(main.relativize(f) + " " + src.substring(at, src.indexOf(')', at) + 1));
                    at = src.indexOf("CrashPoints.install(", at + 1);
                }
                assertThat(!f.endsWith("CrashPoints.java") && src.contains("setForTest"))
                        .as("%s uses the tests' seam", f).isFalse();
            }
        }
        assertThat(callers).containsExactlyInAnyOrder(
                "dev/kosa8/daemon/DaemonMain.java CrashPoints.install(System.getenv()",
                "dev/kosa8/cli/Main.java CrashPoints.install(System.getenv()");
        // and the agent, which runs in the guest, has no such hook at all
        try (var files = Files.walk(Path.of("../agent/src/main/java"))) {
            for (Path f : files.filter(p -> p.toString().endsWith(".java")).toList()) {
                assertThat(Files.readString(f)).as("%s", f).doesNotContain("CrashPoints")
                        .doesNotContain(CrashPoints.ENVIRONMENT);
            }
        }
    }

    @Test
    void installIsOnceOnly() {
        // the JVM of the tests never had it installed from its environment; a second install changes nothing
        CrashPoints.setForTest(CrashPoints.Settings.OFF);
        var after = CrashPoints.install(Map.of(CrashPoints.ENVIRONMENT, "kill=checkpoint/disk:daemon"));
        assertThat(after.on()).isFalse();
        assertThat(CrashPoints.settings().on()).isFalse();
    }
}
