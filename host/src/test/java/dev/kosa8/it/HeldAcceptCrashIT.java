package dev.kosa8.it;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * `kosa8 accept` is atomic when the daemon dies in it (issue 33): the daemon is killed (SIGKILL, the host's
 * test-only crash hook) after the held version is copied beside its place and again after it is put in place;
 * each time the host's file is the old version or the new one, whole, and the next accept finishes the job with
 * no conflict and leaves no copy behind.
 */
class HeldAcceptCrashIT {
    static final Duration T = Duration.ofMinutes(3);

    @RegisterExtension
    static final ReplaceableSandbox SANDBOX = new ReplaceableSandbox("HeldAcceptCrashIT", "--memory", "256M");

    @Test
    void aDaemonKilledWhileAcceptingLeavesTheOldFileOrTheNewOneWholeAndTheNextAcceptFinishes() throws Exception {
        SharedSandbox.Booted box = SANDBOX.running();
        String id = box.id();
        Path folder = box.workspace();
        String old = "export WHO=user\n";
        String guest = "export WHO=guest # " + "x".repeat(64 << 10) + "\n"; // 64 KiB: a copy in more than one write
        Files.writeString(folder.resolve(".envrc"), old);
        assertThat(box.exec(T, "sh", "-euc", "printf '%s' \"$1\" > /workspace/.envrc", "sh", guest).exitCode()).isZero();
        assertThat(Files.readString(folder.resolve(".envrc"))).as("held, not in the folder").isEqualTo(old);

        killedAt("accept/copied", id);
        assertThat(Files.readString(folder.resolve(".envrc"))).as("killed before the rename: the old file whole")
                .isEqualTo(old);
        assertThat(Kosa.ok(T, "review", id).stdout()).contains(".envrc");

        killedAt("accept/placed", id);
        assertThat(Files.readString(folder.resolve(".envrc"))).as("killed after the rename: the new file whole")
                .isEqualTo(guest);

        Kosa.Result done = Kosa.run(T, "accept", id, ".envrc");
        assertThat(done.exitCode()).as("the folder already holds it: done, no conflict: %s", done).isZero();
        assertThat(Kosa.ok(T, "review", id).stdout()).doesNotContain(".envrc");
        try (Stream<Path> names = Files.list(folder)) {
            assertThat(names.map(p -> p.getFileName().toString())).as("no copy left beside the place")
                    .noneMatch(n -> n.startsWith(".kosa8-accept-"));
        }
        assertThat(box.exec(T, "cat", "/workspace/.envrc").stdout()).isEqualTo(guest);
    }

    /** Accepts {@code .envrc} under a daemon the hook kills at {@code point}; a daemon of the usual kind after. */
    private static void killedAt(String point, String id) throws Exception {
        Kosa.run(T, "daemon", "stop");
        Kosa.Result r = Kosa.runWith(Map.of("KOSA8_TEST_CRASH", "kill=" + point + ":daemon"), T, null, "accept", id,
                ".envrc");
        assertThat(r.exitCode()).as("the accept's daemon was killed at %s: %s", point, r).isNotZero();
        Kosa.ok(T, "ls"); // a new daemon, without the hook, re-attached to the machine
    }
}
