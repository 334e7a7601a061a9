package dev.kosa8.it;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;

/**
 * {@code kosa8 agent claude}: the real Claude Code from the real npm registry, installed with Node from the registry
 * in a build sandbox in QEMU's jail (which reaches the registry through an address exception, as {@link ImageBuildIT}
 * does), run in the real guest on a folder, and the folder's sandbox resumed with the agent's home as it was.
 */
@Tag("long") // builds Claude Code's image (about 4 minutes cold under TCG; the two classes share it): ./run-tests long
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class AgentCommandIT {
    static final Duration BUILD = Duration.ofMinutes(40);
    static final Duration T = Duration.ofMinutes(5);
    static final Pattern VERSION = Pattern.compile("(?m)^(\\d+\\.\\d+\\.\\d+) \\(Claude Code\\)$");
    static Path project;
    static String version;

    @BeforeAll
    static void setUp() throws Exception {
        Kosa.useNpmRegistrySettings(T);
        project = Kosa.HOME.resolveSibling("it-agent").resolve("project");
        if (Files.exists(project)) {
            Kosa.deleteTree(project);
        }
        Files.createDirectories(project);
        Kosa.run(T, "agent", "rm", "--workspace", project.toString(), "claude"); // what a failed run left
        Files.writeString(project.resolve("README"), "an agent's project\n");
    }

    @AfterAll
    static void tearDown() throws Exception {
        Kosa.run(T, "agent", "rm", "--workspace", project.toString(), "claude");
        Kosa.dropNetworkSettings(T);
    }

    static Kosa.Result claudeVersion(Duration timeout) {
        return Kosa.run(timeout, "agent", "--workspace", project.toString(), "claude", "--", "--version");
    }

    /** This folder's claude sandbox, as `kosa8 agent ls` shows it. */
    static String sandbox() {
        return sandbox(project);
    }

    /** The claude sandbox of {@code project}, as `kosa8 agent ls` shows it. */
    static String sandbox(Path project) {
        String ls = Kosa.ok(T, "agent", "ls").stdout();
        Matcher m = Pattern.compile("(?m)^claude-[0-9a-f]{12}\\s+claude\\s+([0-9a-f]{12})\\s+\\S+\\s+"
                + Pattern.quote(project.toString()) + "$").matcher(ls);
        assertThat(m.find()).as(ls).isTrue();
        return m.group(1);
    }

    @Test
    @Order(1)
    void theFirstRunBuildsTheImageMakesTheFoldersSandboxAndPrintsClaudeCodesVersionFromTheGuest() {
        long t0 = System.nanoTime();
        Kosa.Result r = claudeVersion(BUILD);
        long millis = (System.nanoTime() - t0) / 1_000_000;
        assertThat(r.exitCode()).as(r.toString()).isZero();
        Matcher m = VERSION.matcher(r.stdout());
        assertThat(m.find()).as(r.toString()).isTrue();
        version = m.group(1);
        assertThat(r.stderr()).contains("is claude's for " + project);
        String id = sandbox();
        // the hook that takes a turn checkpoint before each tool call, in the agent's own settings
        assertThat(Kosa.ok(T, "exec", id, "--", "sh", "-c", "cat $HOME/.claude/settings.json").stdout())
                .contains("\"PreToolUse\"", "/run/kosa8/kosa8-guest checkpoint --hook");
        // something of the agent's own in its home, which the next session must find
        Kosa.ok(T, "exec", id, "--", "sh", "-c", "echo kept > $HOME/.kosa8-it-marker");
        System.out.printf("AgentCommandIT: first `kosa8 agent claude -- --version` (image %s) %d ms, Claude Code %s%n",
                r.stderr().contains("building the claude agent's image") ? "built" : "found", millis, version);
    }

    @Test
    @Order(2)
    void aLaterRunResumesTheSameSandboxWithTheAgentsHomeAsItWas() {
        String id = sandbox();
        Kosa.ok(T, "stop", id); // paused to disk between sessions: the next run starts it again
        long t0 = System.nanoTime();
        Kosa.Result r = claudeVersion(T);
        long millis = (System.nanoTime() - t0) / 1_000_000;
        assertThat(r.exitCode()).as(r.toString()).isZero();
        Matcher m = VERSION.matcher(r.stdout());
        assertThat(m.find()).as(r.toString()).isTrue();
        assertThat(m.group(1)).isEqualTo(version);
        assertThat(r.stderr()).doesNotContain("building", "is claude's for");
        assertThat(sandbox()).isEqualTo(id);
        assertThat(Kosa.ok(T, "exec", id, "--", "sh", "-c", "cat $HOME/.kosa8-it-marker").stdout())
                .isEqualTo("kept\n");
        System.out.printf("AgentCommandIT: resumed `kosa8 agent claude -- --version` (from stopped) %d ms%n", millis);
    }

    @Test
    @Order(3)
    void agentRmRemovesTheFoldersSandboxAndItsSession() {
        String id = sandbox();
        Kosa.Result rm = Kosa.ok(T, "agent", "rm", "--workspace", project.toString(), "claude");
        assertThat(rm.stdout()).contains("removed claude-", "(sandbox " + id + ")");
        assertThat(Kosa.ok(T, "agent", "ls").stdout()).doesNotContain(id);
        assertThat(Kosa.ok(T, "ls", "-q").stdout()).doesNotContain(id);
        Kosa.Result again = Kosa.run(T, "agent", "rm", "--workspace", project.toString(), "claude");
        assertThat(again.exitCode()).isEqualTo(2);
        assertThat(again.stderr()).contains("no agent sandbox 'claude' for this folder", "kosa8 agent ls");
    }
}
