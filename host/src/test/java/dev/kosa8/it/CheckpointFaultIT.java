package dev.kosa8.it;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.json.JsonMapper;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The fault walk (docs/checkpoints.md, "Fault walk"): a checkpoint that
 * fails at any of its steps — an error of the step itself, thrown there
 * through the host's test-only hook ({@code KOSA8_TEST_CRASH=fail=…},
 * {@code host.CrashPoints}) — says so, and leaves the guest running (never
 * frozen, never stopped), no checkpoint but a failed one, and the sandbox
 * able to checkpoint and rewind. The crash walk kills processes at the same
 * steps; this walk runs each step's own clean-up. The steps are not named
 * here: one checkpoint with the hook recording gives them.
 */
class CheckpointFaultIT {
    static final Duration T = Duration.ofMinutes(3);
    static final Path STEPS = Kosa.HOME.resolveSibling("fault-walk-steps");
    static final JsonMapper JSON = JsonMapper.builder().build();

    @RegisterExtension
    static final ReplaceableSandbox SANDBOX = new ReplaceableSandbox("CheckpointFaultIT", "--memory", "256M");

    @Test
    @Tag("long") // the default suite took 36.9 min on 2026-12-05 (goal 30): ~69 s and a boot, every step's fault
    void aCheckpointFailingAtAnyOfItsStepsLeavesTheGuestRunningAndTheNextOneWorks() throws Exception {
        SharedSandbox.Booted box = SANDBOX.running();
        String id = box.id();
        List<String> steps = discover(id);
        assertThat(steps).as("the steps one checkpoint passes").contains("checkpoint/freeze", "checkpoint/stop",
                "checkpoint/devices", "checkpoint/thaw");

        // each point fails once, at its first reach: the first checkpoint fails at the first step, the next
        // passes it and fails at the second, and so on
        Map<String, String> env = Map.of("KOSA8_TEST_CRASH", "record=" + STEPS + ";fail=" + String.join(",", steps));
        Kosa.run(T, "daemon", "stop");
        Files.deleteIfExists(STEPS);
        try {
            for (String step : steps) {
                Kosa.Result r = Kosa.runWith(env, T, null, "checkpoint", id, "--wait", "-m", "fault at " + step);
                assertThat(r.exitCode()).as("%s: %s", step, r).isNotZero();
                assertThat(r.stderr()).as("%s: the error names what failed", step)
                        .contains("a fault injected at " + step);
                // the guest runs on: a command runs in it (in a frozen guest it would hang) and its clock goes on
                Kosa.Result alive = box.exec(T, "sh", "-c", "echo alive; cat /proc/uptime");
                assertThat(alive.stdout()).as("%s: the guest runs after the failure: %s", step, alive)
                        .startsWith("alive\n");
                for (JsonNode c : checkpoints(id)) {
                    if (c.path("message").asText().equals("fault at " + step)) {
                        assertThat(c.path("state").asText()).as("%s: the checkpoint that failed is listed failed "
                                + "or not at all", step).isEqualTo("failed");
                    }
                }
            }
            List<String> met = Files.readAllLines(STEPS).stream().filter(l -> l.startsWith("failed ")).toList();
            assertThat(met).as("every fault was met, in order")
                    .containsExactlyElementsOf(steps.stream().map(s -> "failed " + s).toList());
        } finally {
            Kosa.run(T, "daemon", "stop"); // the hook off again
        }

        // nothing left that the next checkpoint trips on: it is taken, committed, and rewinding to it works
        String good = Kosa.ok(T, "checkpoint", id, "--wait", "-m", "after the walk").stdout().strip();
        assertThat(box.exec(T, "sh", "-c", "echo later > /root/later").exitCode()).isZero();
        Kosa.ok(T, "rewind", id, good);
        assertThat(box.exec(T, "sh", "-c", "test -e /root/later && echo kept || echo gone").stdout())
                .isEqualTo("gone\n");
    }

    /** One checkpoint with the hook recording: the points of the checkpoint operation, in order. */
    private static List<String> discover(String id) throws Exception {
        Kosa.run(T, "daemon", "stop");
        Files.deleteIfExists(STEPS);
        Kosa.Result r = Kosa.runWith(Map.of("KOSA8_TEST_CRASH", "record=" + STEPS), T, null, "checkpoint", id,
                "--wait", "-m", "discovery");
        assertThat(r.exitCode()).as(r.toString()).isZero();
        Kosa.run(T, "daemon", "stop");
        List<String> steps = new ArrayList<>();
        for (String line : Files.readAllLines(STEPS)) {
            String point = line.split(" ")[0];
            if (point.startsWith("checkpoint/") && !steps.contains(point)) {
                steps.add(point);
            }
        }
        return steps;
    }

    private static JsonNode checkpoints(String id) throws Exception {
        return JSON.readTree(Kosa.ok(T, "checkpoints", id, "--json").stdout());
    }
}
