package dev.kosa8.it;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.json.JsonMapper;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Turn checkpoints from inside a real guest (docs/agents.md): {@code kosa8-guest checkpoint} as an agent's
 * pre-tool hook runs it, {@code rewind --turn N} putting the machine and the folder back to just before the tool
 * call and stopping that call, and the bounds a guest asking in a loop runs into. The daemon runs with the test
 * bounds Kosa sets ({@code KOSA8_TEST_TURN_BOUNDS}: three at once, none refilled within the test, two kept).
 */
class TurnCheckpointIT {
    static final Duration T = Duration.ofMinutes(3);
    static final String GUEST = "/run/kosa8/kosa8-guest";

    @RegisterExtension
    static final ReplaceableSandbox SANDBOX = new ReplaceableSandbox("TurnCheckpointIT", "--memory", "256M");

    @Test
    void aHookAsksBeforeEachToolCallAndRewindingToATurnStopsThatCall() throws Exception {
        SharedSandbox.Booted box = SANDBOX.justMade();
        String id = box.id();
        Path folder = box.workspace();
        String mine = Kosa.ok(T, "checkpoint", id, "-m", "the user's own").stdout().strip();

        // turn 1: asked by hand
        Kosa.Result first = box.exec(T, GUEST, "checkpoint", "-m", "Bash: make test");
        assertThat(first.exitCode()).as(first.toString()).isZero();
        assertThat(first.stdout()).startsWith("turn 1 c");

        // turn 2: the way Claude Code's PreToolUse hook runs it, before a Write of hello.txt; the tool call (the
        // echo) runs only when the hook lets it. Detached and deaf to hang-ups, as a long-lived agent is, so that
        // the process the rewind restores runs on.
        Files.writeString(folder.resolve("flow.sh"), """
                trap '' HUP
                printf '%s' '{"session_id":"s","tool_name":"Write","tool_input":{"file_path":"/workspace/hello.txt"}}' \\
                    | /run/kosa8/kosa8-guest checkpoint --hook 2>/root/hook.err
                code=$?
                echo "$code" >> /root/hook.codes
                [ "$code" = 0 ] && echo hi > /workspace/hello.txt
                echo done >> /root/hook.codes
                """);
        Kosa.Result started = box.exec(T, "sh", "-c", "setsid -f sh /workspace/flow.sh </dev/null >/dev/null 2>&1");
        assertThat(started.exitCode()).as(started.toString()).isZero();
        await(box, "cat /root/hook.codes 2>/dev/null", "0\ndone\n");
        assertThat(folder.resolve("hello.txt")).hasContent("hi");

        JsonNode listed = JsonMapper.builder().build().readTree(Kosa.ok(T, "checkpoints", id, "--json").stdout());
        List<String> messages = new ArrayList<>();
        listed.forEach(c -> messages.add(c.path("turn").asInt() + " " + c.path("message").asText()));
        assertThat(messages).containsExactly("0 the user's own", "1 turn 1: Bash: make test",
                "2 turn 2: Write /workspace/hello.txt");
        assertThat(Kosa.ok(T, "checkpoints", id).stdout()).contains("turn 2: Write /workspace/hello.txt");

        // back to just before turn 2: the file the tool call wrote is gone, and the restored hook is told the
        // sandbox was put back, so the Write does not run again
        Kosa.ok(T, "rewind", id, "--turn", "2");
        assertThat(folder.resolve("hello.txt")).doesNotExist();
        await(box, "cat /root/hook.codes", "2\ndone\n");
        assertThat(folder.resolve("hello.txt")).doesNotExist();
        assertThat(box.exec(T, "cat", "/root/hook.err").stdout())
                .contains("put the sandbox back to just before this tool call", "turn 2");

        // the bounds: one token is left of the three, so a guest asking in a loop gets one more turn, then
        // refusals that say why; two turns are kept (the oldest thinned), and the user's own checkpoint stays
        Kosa.Result loop = box.exec(T, "sh", "-c", "for i in 1 2 3 4; do " + GUEST
                + " checkpoint -m loop$i; echo \"exit $?\"; done");
        assertThat(loop.stdout().lines().filter(l -> l.startsWith("exit ")).toList())
                .containsExactly("exit 0", "exit 1", "exit 1", "exit 1");
        assertThat(loop.stdout()).contains("turn 3 c");
        assertThat(loop.stderr()).contains("turn checkpoints are limited to 3 at once");
        // thinning runs once the turn is answered, after the commit under way: waited for, within T
        List<String> left = new ArrayList<>();
        long deadline = System.nanoTime() + T.toNanos();
        do {
            left.clear();
            JsonMapper.builder().build().readTree(Kosa.ok(T, "checkpoints", id, "--json").stdout())
                    .forEach(c -> left.add(c.path("id").asText() + " " + c.path("turn").asInt()));
        } while (left.size() > 3 && System.nanoTime() < deadline && sleep(500));
        assertThat(left).hasSize(3).first().isEqualTo(mine + " 0");
        assertThat(left.subList(1, 3)).extracting(s -> s.substring(s.indexOf(' ') + 1)).containsExactly("2", "3");

        Kosa.Result gone = Kosa.run(T, "rewind", id, "--turn", "1");
        assertThat(gone.exitCode()).isEqualTo(2);
        assertThat(gone.stderr()).contains("has no turn 1", "turns 2..3 are kept");
    }

    @Tag("long") // the default suite took 35.7 min on a clean clone on 2026-12-05 (goal 30): ./run-tests long
    @Test
    void atTheSandboxsCheckpointLimitATurnMakesRoomByRemovingTheOldestTurnNeverTheUsersOwn() throws Exception {
        // a sandbox of its own that keeps three checkpoints
        String id = Kosa.ok(Duration.ofMinutes(10), "create", "--memory", "256M", "--max-checkpoints", "3",
                "--workspace", "none").stdout().strip();
        try {
            String mine = Kosa.ok(T, "checkpoint", id, "-m", "the user's own").stdout().strip();
            List<String> taken = new ArrayList<>();
            for (int i = 1; i <= 3; i++) {
                Kosa.Result r = Kosa.run(T, "exec", id, "--", GUEST, "checkpoint", "-m", "step " + i);
                assertThat(r.exitCode()).as("turn %d at the limit is taken: %s", i, r).isZero();
                assertThat(r.stdout()).startsWith("turn " + i + " c");
                taken.add(r.stdout().strip().split(" ")[2]);
            }
            List<String> left = new ArrayList<>();
            JsonMapper.builder().build().readTree(Kosa.ok(T, "checkpoints", id, "--json").stdout())
                    .forEach(c -> left.add(c.path("id").asText() + " " + c.path("turn").asInt()));
            assertThat(left).as("turn 3 made room by removing turn 1, the oldest turn; the user's own stays")
                    .containsExactly(mine + " 0", taken.get(1) + " 2", taken.get(2) + " 3");
            // the user's own checkpoint at the limit is refused as before: nothing is removed for it
            Kosa.Result refused = Kosa.run(T, "checkpoint", id, "-m", "another of the user's");
            assertThat(refused.exitCode()).as(refused.toString()).isEqualTo(8);
            assertThat(refused.stderr()).contains("--max-checkpoints 3");
        } finally {
            Kosa.run(T, "rm", "-f", id);
        }
    }

    @Test
    void whatAGuestSendsIsALabelAndNothingElse() throws Exception {
        SharedSandbox.Booted box = SANDBOX.running();
        // any other request, an overlong or multi-line label, an answer forged by the guest: refused by the agent
        Kosa.Result raw = box.exec(T, "bash", "-c", """
                ask() { exec 3<>/dev/tcp/127.0.0.1/7719; printf '%s\\n' "$1" >&3; IFS= read -r r <&3; echo "$r"; }
                ask 'rewind c20260101T000000'
                ask "checkpoint $(head -c 300 /dev/zero | tr '\\0' x)"
                ask "$(printf 'checkpoint a\\tb')"
                ask 'taken turn 9 c1'
                """);
        assertThat(raw.stdout().lines().toList()).hasSize(4).allMatch(l -> l.startsWith("refused "));
    }

    private static boolean sleep(long millis) throws InterruptedException {
        Thread.sleep(millis);
        return true;
    }

    private static void await(SharedSandbox.Booted box, String command, String expected) throws InterruptedException {
        long deadline = System.nanoTime() + T.toNanos();
        String last = "";
        while (System.nanoTime() < deadline) {
            last = box.exec(T, "sh", "-c", command).stdout();
            if (last.equals(expected)) {
                return;
            }
            Thread.sleep(500);
        }
        throw new AssertionError("`" + command + "` printed " + last + " not " + expected + "\n" + Kosa.consoles());
    }
}
