package dev.kosa8.it;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kosa8.egress.FakeMessagesApi;
import dev.kosa8.egress.TestUpstream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * A real Claude Code session in a sandbox, its key outside: {@code kosa8 agent claude -- -p …} runs the real
 * Claude Code from npm in the real guest against a scripted Messages API (the model cannot run here) served on the
 * host for {@code api.anthropic.com} through the broker's test upstream setting. The API asks for one Bash call that
 * writes {@code hello.txt}. Checked: the API saw the real key on every request and the guest holds only the
 * placeholder (its environment, RAM, root disk and folder scanned); the tool call ran in the guest and the file is
 * in the folder; the agent's PreToolUse hook took a turn checkpoint before it; {@code rewind --turn 1} takes the
 * file away again.
 */
@Tag("long") // builds Claude Code's image (about 4 minutes cold under TCG; the two classes share it): ./run-tests long
class ClaudeCodeIT {
    static final Duration BUILD = Duration.ofMinutes(40);
    static final Duration T = Duration.ofMinutes(5);
    static final String KEY = "sk-ant-api03-" + SecretsIT.random(48);
    static Path project;
    static TestUpstream upstream;
    static FakeMessagesApi api;

    @BeforeAll
    static void setUp() throws Exception {
        Path servers = Files.createDirectories(Kosa.HOME.resolveSibling("it-upstreams").resolve("claude"));
        upstream = new TestUpstream(servers, "api.anthropic.com");
        api = new FakeMessagesApi(upstream, KEY, "Bash",
                Map.of("command", "echo hi > hello.txt", "description", "Create hello.txt"));
        Files.writeString(Kosa.EGRESS_TEST_CONFIG, """
                {"loopback": {"api.anthropic.com:443": %d}, "trustedCa": "%s"}
                """.formatted(upstream.httpsPort(), upstream.caPem));
        // as AgentCommandIT: the build reaches the registry through an address exception; the daemon this
        // stops reads those settings and the test upstreams when the next call starts it
        Kosa.useNpmRegistrySettings(T);
        project = Kosa.HOME.resolveSibling("it-agent").resolve("claude-session");
        if (Files.exists(project)) {
            Kosa.deleteTree(project);
        }
        Files.createDirectories(project);
        project = project.toRealPath();
        Kosa.run(T, "agent", "rm", "--workspace", project.toString(), "claude");
        Kosa.Result set = Kosa.run(T, (KEY + "\n").getBytes(StandardCharsets.US_ASCII), "secret", "set",
                "ANTHROPIC_API_KEY", "--host", "api.anthropic.com", "--header", "x-api-key: {}");
        assertThat(set.exitCode()).as(set.toString()).isZero();
    }

    @AfterAll
    static void tearDown() throws Exception {
        if (project != null) {
            Kosa.run(T, "agent", "rm", "--workspace", project.toString(), "claude");
        }
        Kosa.run(T, "secret", "rm", "ANTHROPIC_API_KEY");
        Files.deleteIfExists(Kosa.EGRESS_TEST_CONFIG);
        Kosa.dropNetworkSettings(T);
        if (upstream != null) {
            upstream.close();
        }
    }

    @Test
    void aClaudeCodeTurnRunsItsToolInTheGuestWithTheKeyOutsideAndRewindingTheTurnUndoesIt() throws Exception {
        Kosa.Result r = Kosa.run(BUILD, "agent", "--workspace", project.toString(), "claude", "--", "-p",
                "create hello.txt containing hi", "--allowedTools", "Bash");
        assertThat(r.exitCode()).as(r + "\nthe API got: " + api.requests).isZero();

        // the tool call ran in the guest, on the folder
        assertThat(project.resolve("hello.txt")).hasContent("hi");
        // the API saw the real key on each of the agent's turns: the one that asked for the call, the one after it
        List<FakeMessagesApi.Request> turns = api.turns();
        assertThat(turns).as("the agent's requests: %s", api.requests).hasSizeGreaterThanOrEqualTo(2);
        assertThat(api.requests).allSatisfy(q -> assertThat(q.header("x-api-key")).as(q.path()).isEqualTo(KEY));

        String id = AgentCommandIT.sandbox(project);
        // the hook took a turn checkpoint before the Bash call
        String listed = Kosa.ok(T, "checkpoints", id).stdout();
        assertThat(listed).contains("turn 1: Bash");

        // inside, only the placeholder: in the environment, and nowhere in RAM, the root disk or the folder
        String placeholder = Kosa.ok(T, "exec", id, "--", "sh", "-c", "printf %s \"$ANTHROPIC_API_KEY\"").stdout();
        assertThat(placeholder).hasSameSizeAs(KEY).isNotEqualTo(KEY);
        Path dump = Kosa.HOME.resolveSibling("ClaudeCodeIT-" + id + ".core");
        Files.deleteIfExists(dump);
        try {
            Kosa.ok(Duration.ofMinutes(10), "dump-memory", id, dump.toString());
            List<Path> places = new ArrayList<>(List.of(dump,
                    Kosa.HOME.resolve("data/sandboxes").resolve(id).resolve("root.qcow2")));
            try (var files = Files.walk(project)) {
                places.addAll(files.filter(Files::isRegularFile).toList());
            }
            for (Path p : places) {
                for (byte[] form : SecretsIT.forms(KEY)) {
                    assertThat(SecretsIT.count(p, form)).as("the key (%s) in %s",
                            new String(form, StandardCharsets.US_ASCII), p).isZero();
                }
            }
            assertThat(SecretsIT.count(dump, placeholder.getBytes(StandardCharsets.US_ASCII)))
                    .as("the same scan finds the placeholder in RAM, so it can find a key").isPositive();
        } finally {
            Files.deleteIfExists(dump);
        }

        // back to just before turn 1: the file the Bash call wrote is gone
        Kosa.ok(T, "rewind", id, "--turn", "1");
        assertThat(project.resolve("hello.txt")).doesNotExist();
    }
}
