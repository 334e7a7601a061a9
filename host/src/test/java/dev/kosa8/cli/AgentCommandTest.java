package dev.kosa8.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.kosa8.agents.AgentDefinition;
import dev.kosa8.host.KosaException;
import dev.kosa8.image.NamedImage;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** What `kosa8 agent` decides without a daemon: names, sessions, the folder, its help. */
class AgentCommandTest {
    @TempDir
    Path dir;

    static AgentDefinition agent(String name, String dockerfile) {
        return new AgentDefinition(name, "", dockerfile, null, null, null, null, null, List.of(name), null);
    }

    @Test
    void anAgentsImageIsNamedForItsDockerfilesContent() {
        String a = AgentImage.name(agent("claude", "FROM kosa8/debian\nRUN true\n"));
        assertThat(a).matches("kosa8/agent-claude:[0-9a-f]{12}");
        assertThat(NamedImage.isValidName(a)).isTrue();
        assertThat(AgentImage.name(agent("claude", "FROM kosa8/debian\nRUN true\n"))).isEqualTo(a);
        assertThat(AgentImage.name(agent("claude", "FROM kosa8/debian\nRUN false\n"))).isNotEqualTo(a);
    }

    @Test
    void aFolderReachedThroughALinkFindsTheSameSession() throws Exception {
        Path project = Files.createDirectories(dir.resolve("project"));
        Path link = Files.createSymbolicLink(dir.resolve("link"), project);
        SandboxOptions viaLink = new SandboxOptions();
        viaLink.workspace = link.toString();
        SandboxOptions direct = new SandboxOptions();
        direct.workspace = project.toString();
        Path real = AgentCommand.folder(viaLink);
        assertThat(real).isEqualTo(AgentCommand.folder(direct)).isEqualTo(project.toRealPath());
        String name = AgentSessions.name("claude", real);
        assertThat(name).matches("claude-[0-9a-f]{12}");
        assertThat(AgentSessions.name("codex", real)).isNotEqualTo(name).startsWith("codex-")
                .endsWith(name.substring("claude-".length()));
        assertThat(AgentSessions.name("claude", dir.toRealPath())).isNotEqualTo(name);
    }

    @Test
    void sessionsAreKeptByNameAndRemoved() {
        AgentSessions s = new AgentSessions(dir);
        assertThat(s.all()).isEmpty();
        var one = new AgentSessions.Session("claude-0123456789ab", "claude", "/p", "0a1b2c3d4e5f", "kosa8/agent-claude:1",
                "2026-12-04T00:00:00Z");
        var two = new AgentSessions.Session("codex-0123456789ab", "codex", "/p", "aaaaaaaaaaaa", "kosa8/agent-codex:1",
                "2026-12-04T00:00:00Z");
        s.locked(() -> {
            s.put(one);
            s.put(two);
            return null;
        });
        assertThat(new AgentSessions(dir).all()).containsOnlyKeys("claude-0123456789ab", "codex-0123456789ab");
        assertThat(new AgentSessions(dir).list("codex")).containsExactly(two);
        s.remove("claude-0123456789ab");
        assertThat(new AgentSessions(dir).list(null)).containsExactly(two);
    }

    @Test
    void anAgentNeedsAFolderThatExists() {
        SandboxOptions none = new SandboxOptions();
        none.workspace = "none";
        assertThatThrownBy(() -> AgentCommand.folder(none)).isInstanceOf(KosaException.class)
                .hasMessage("an agent needs a folder to work on")
                .satisfies(e -> assertThat(((KosaException) e).suggestion()).contains("--workspace DIR"));
        SandboxOptions missing = new SandboxOptions();
        missing.workspace = dir.resolve("nowhere").toString();
        assertThatThrownBy(() -> AgentCommand.folder(missing)).isInstanceOf(KosaException.class)
                .hasMessage("there is no folder " + dir.resolve("nowhere"));
    }

    @Test
    void helpTeachesHowToSetAKeyRunAnAgentAndRemoveIt() {
        var sw = new java.io.StringWriter();
        var cl = Main.commandLine();
        cl.setOut(new java.io.PrintWriter(sw));
        cl.execute("agent", "--help");
        assertThat(sw.toString()).contains("kosa8 secret set ANTHROPIC_API_KEY --host api.anthropic.com",
                "kosa8 agent claude -- -p", "kosa8 agent ls", "kosa8 agent rm claude", "--memory", "AGENT");
    }

    @Test
    void agentWithoutANameAsksForOneAndItsSubcommandsNeedNone() {
        var err = new java.io.StringWriter();
        var cl = Main.commandLine();
        cl.setErr(new java.io.PrintWriter(err));
        assertThat(cl.execute("agent")).isEqualTo(2);
        assertThat(err.toString()).contains("kosa8: name the agent to run", "kosa8 agent claude|codex|gemini");
        var parsed = Main.commandLine().parseArgs("agent", "rm", "--workspace", dir.toString(), "claude");
        assertThat(parsed.subcommand().subcommand().commandSpec().name()).isEqualTo("rm");
        assertThat(Main.commandLine().parseArgs("agent", "ls").subcommand().subcommand().commandSpec().name())
                .isEqualTo("ls");
        var run = Main.commandLine().parseArgs("agent", "--memory", "2G", "claude", "--", "--version");
        assertThat(run.subcommand().matchedPositionals()).extracting(p -> p.getValue().toString())
                .containsExactly("claude", "[--version]");
    }

    @Test
    void anUnknownAgentIsAUsageErrorListingTheKnownOnes() {
        var err = new java.io.StringWriter();
        var cl = Main.commandLine();
        cl.setErr(new java.io.PrintWriter(err));
        assertThat(cl.execute("agent", "cursor")).isEqualTo(2);
        assertThat(err.toString()).contains("kosa8: no agent 'cursor'", "the agents are claude, codex, gemini");
    }
}
