package dev.kosa8.it;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.InputStream;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * {@code kosa8 agent} reopening the agent's session after {@code kosa8 rewind --turn N} from another terminal
 * (docs/agents.md, "Undo per turn"). The agent is a definition of the user's own (adding one is data): a shell
 * script that asks for a turn checkpoint before each of two writes, as an agent's pre-tool hook does, and has a
 * resume option. It runs on a real terminal ({@code script} gives the CLI a pty), in a real guest. The rewind to
 * turn 2 ends the session on screen; the CLI reopens the agent with its resume option in the machine put back, and
 * what the user types next reaches the reopened session, not the one that ended.
 */
class AgentReattachIT {
    static final Duration T = Duration.ofMinutes(5);
    static final Path DEFINITION = Kosa.HOME.resolve("config").resolve("agents").resolve("turns.toml");
    static Path project;

    @BeforeAll
    static void setUp() throws Exception {
        Files.createDirectories(DEFINITION.getParent());
        Files.writeString(DEFINITION, """
                description = "a shell script standing in for an agent, with a pre-tool hook and a resume option"
                command = ["sh", "agent.sh"]
                resume = ["--continue"]
                dockerfile = "FROM kosa8/debian"
                """);
        project = Kosa.HOME.resolveSibling("it-agent").resolve("reattach");
        if (Files.exists(project)) {
            Kosa.deleteTree(project);
        }
        Files.createDirectories(project);
        Kosa.run(T, "agent", "rm", "--workspace", project.toString(), "turns"); // what a failed run left
        Files.writeString(project.resolve("agent.sh"), """
                if [ "$1" = --continue ]; then
                    echo "reopened: a=$(cat a.txt) b=$(cat b.txt 2>/dev/null || echo none)"
                    IFS= read -r line
                    echo "reopened session read: $line"
                    exit 5
                fi
                for f in a b; do
                    printf '{"session_id":"s","tool_name":"Write","tool_input":{"file_path":"%s"}}' "$PWD/$f.txt" \\
                        | /run/kosa8/kosa8-guest checkpoint --hook || exit 9
                    echo "$f" > "$f.txt"
                done
                echo ready
                IFS= read -r line
                echo "first session read: $line"
                exit 3
                """);
    }

    @AfterAll
    static void tearDown() throws Exception {
        Kosa.run(T, "agent", "rm", "--workspace", project.toString(), "turns");
        Files.deleteIfExists(DEFINITION);
    }

    @Test
    void rewindingToATurnReopensTheAgentsSessionWhereTheUserTypesOn() throws Exception {
        // the CLI on a terminal of its own: `script` runs it on a pty and relays this test's pipes to it
        String cli = Kosa.command("agent", "--memory", "256M", "--image", "kosa8/debian", "turns").stream()
                .map(a -> "'" + a.replace("'", "'\\''") + "'").collect(Collectors.joining(" "));
        ProcessBuilder pb = Kosa.builder();
        pb.command(List.of("script", "-qfec", cli, "/dev/null")).directory(project.toFile())
                .redirectErrorStream(true);
        Process p = pb.start();
        StringBuffer screen = new StringBuffer();
        Thread.ofVirtual().start(() -> {
            try (InputStream in = p.getInputStream()) {
                byte[] buf = new byte[8192];
                for (int n; (n = in.read(buf)) >= 0; ) {
                    screen.append(new String(buf, 0, n, StandardCharsets.UTF_8));
                }
            } catch (java.io.IOException ended) {
                // the terminal closed
            }
        });
        try (OutputStream keys = p.getOutputStream()) {
            await(screen, p, "ready");
            Matcher m = Pattern.compile("sandbox ([0-9a-f]{12}) is turns's").matcher(screen);
            assertThat(m.find()).as(screen.toString()).isTrue();
            String id = m.group(1);
            assertThat(project.resolve("b.txt")).hasContent("b");

            // from another terminal: back to just before turn 2, the write of b.txt
            Kosa.ok(T, "rewind", id, "--turn", "2");
            assertThat(project.resolve("b.txt")).doesNotExist();
            await(screen, p, "reopened:");
            assertThat(screen.toString()).contains("the sandbox was rewound to checkpoint",
                    "reopening turns's latest session there (sh agent.sh --continue)", "reopened: a=a b=none");

            // what the user types now reaches the reopened session
            keys.write("hello\n".getBytes(StandardCharsets.UTF_8));
            keys.flush();
            assertThat(p.waitFor(T.toSeconds(), TimeUnit.SECONDS)).as(screen.toString()).isTrue();
            assertThat(p.exitValue()).as(screen.toString()).isEqualTo(5);
            assertThat(screen.toString()).contains("reopened session read: hello")
                    .doesNotContain("first session read");
        } finally {
            p.destroyForcibly();
        }
    }

    private static void await(StringBuffer screen, Process p, String text) throws InterruptedException {
        long deadline = System.nanoTime() + T.toNanos();
        while (screen.indexOf(text) < 0) {
            if (System.nanoTime() > deadline || !p.isAlive() && screen.indexOf(text) < 0) {
                Thread.sleep(200); // the last of the output
                throw new AssertionError("'" + text + "' did not appear on the agent's terminal; it shows:\n"
                        + screen + "\n" + Kosa.consoles());
            }
            Thread.sleep(100);
        }
    }
}
