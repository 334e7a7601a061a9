package dev.kosa8.mcp;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kosa8.host.KosaException;
import io.modelcontextprotocol.spec.McpSchema;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The tools over a recording backend: what they refuse, what they send, how failures come back. */
class ToolsTest {
    private final RecordingBackend backend = new RecordingBackend();
    private final McpPolicy policy = new McpPolicy(false, List.of("pypi.org"), List.of(), "closed");
    private final KosaMcpServer server = new KosaMcpServer(backend, policy);

    private McpSchema.CallToolResult call(KosaMcpServer s, String name, Object... kv) {
        Map<String, Object> args = new HashMap<>();
        for (int i = 0; i < kv.length; i += 2) {
            args.put((String) kv[i], kv[i + 1]);
        }
        ToolDef tool = s.tools().stream().filter(t -> t.name().equals(name)).findFirst().orElseThrow();
        return ToolResults.run(tool, args, new Caller("Claude Code", s.session()));
    }

    private McpSchema.CallToolResult call(String name, Object... kv) {
        return call(server, name, kv);
    }

    private static String text(McpSchema.CallToolResult r) {
        return ((McpSchema.TextContent) r.content().getFirst()).text();
    }

    @SuppressWarnings("unchecked")
    private static Map<String, Object> structured(McpSchema.CallToolResult r) {
        return (Map<String, Object>) r.structuredContent();
    }

    @Test
    void everyToolHasAnObjectSchemaAndADescriptionAnAgentCanActOn() {
        for (ToolDef t : server.tools()) {
            assertThat(t.name()).matches("[a-z_]{3,32}");
            assertThat(t.description()).as(t.name()).hasSizeGreaterThan(40);
            assertThat(t.schema().toMap()).containsEntry("type", "object").containsEntry("additionalProperties", false);
        }
    }

    @Test
    void policyChangingToolsAreListedOnlyWhenTheUserAllowsPolicyChanges() {
        List<String> without = server.tools().stream().map(ToolDef::name).toList();
        List<String> with = new KosaMcpServer(backend, new McpPolicy(true, List.of(), List.of(), "closed")).tools()
                .stream().map(ToolDef::name).toList();
        assertThat(without).contains("network_policy").doesNotContain("allow_host", "deny_host", "grant_secret");
        assertThat(with).contains("allow_host", "deny_host", "grant_secret");
    }

    @Test
    void createMarksTheSandboxAsTheClientsAndTheSessionRemovesItAtTheEndUnlessKept() {
        McpSchema.CallToolResult made = call("create_sandbox", "workspace", "none");
        McpSchema.CallToolResult kept = call("create_sandbox", "workspace", "none", "keep", true);
        assertThat(made.isError()).isFalse();
        assertThat(backend.creates).extracting(McpBackend.CreateSpec::createdBy).containsOnly("mcp:Claude-Code");
        String madeId = (String) structured(made).get("id");
        String keptId = (String) structured(kept).get("id");

        server.end(line -> { });

        assertThat(backend.calls).contains("remove " + madeId).doesNotContain("remove " + keptId);
    }

    @Test
    void theEndOfASessionGoesOnPastARemovalThatFails() {
        call("create_sandbox", "workspace", "none");
        call("create_sandbox", "workspace", "none");
        backend.failRemove = new KosaException(KosaException.Kind.STATE, "busy", "");
        List<String> log = new ArrayList<>();
        server.end(log::add);
        assertThat(log).hasSize(2).allMatch(l -> l.contains("could not remove") && l.contains("kosa8 rm -f"));
    }

    @Test
    void aForkIsTheSessionsToo() {
        call("fork", "sandbox", "abc", "checkpoint", "c1");
        assertThat(backend.calls.getLast()).endsWith(" mcp:Claude-Code");
        server.end(line -> { });
        assertThat(backend.calls.getLast()).startsWith("remove ");
    }

    @Test
    void onlyTheSessionsOwnSandboxesAreRemovedByTheTool() {
        McpSchema.CallToolResult r = call("remove_sandbox", "sandbox", "abcdef");
        assertThat(r.isError()).isTrue();
        assertThat(text(r)).contains("not made by this MCP session").contains("kosa8 rm -f abcdef");
        String id = (String) structured(call("create_sandbox", "workspace", "none")).get("id");
        assertThat(call("remove_sandbox", "sandbox", id).isError()).isFalse();
        assertThat(backend.calls).contains("remove " + id);
    }

    @Test
    void createRefusesPolicyChangesAndBadValuesBeforeTheDaemonHearsOfThem() {
        assertThat(text(call("create_sandbox", "allow", List.of("evil.example")))).contains("--allow-policy-changes");
        assertThat(text(call("create_sandbox", "net", "open"))).contains("more open");
        assertThat(text(call("create_sandbox", "net", "wide"))).contains("closed, none or open");
        assertThat(text(call("create_sandbox", "memory", "lots"))).contains("like 512M");
        assertThat(text(call("create_sandbox", "workspace", "relative/dir"))).contains("absolute host folder");
        assertThat(text(call("create_sandbox", "cpus", 0))).contains("outside 1..64");
        assertThat(backend.creates).isEmpty();
        assertThat(call("create_sandbox", "allow", List.of("pypi.org")).isError()).isFalse();
    }

    @Test
    void runTakesExactlyOneOfACommandLineAndAnArgv() {
        assertThat(text(call("run_command", "sandbox", "abc"))).contains("exactly one of 'command'");
        assertThat(text(call("run_command", "sandbox", "abc", "command", "ls", "argv", List.of("ls"))))
                .contains("exactly one of");
        McpSchema.CallToolResult r = call("run_command", "sandbox", "abc", "command", "python3 -c 'print(6*7)'");
        assertThat(structured(r)).containsEntry("stdout", "42\n").containsEntry("exit_code", 0);
        assertThat(backend.calls.getLast()).isEqualTo("exec abc [sh, -c, python3 -c 'print(6*7)']");
    }

    @Test
    void theDaemonsErrorComesBackAsAToolErrorWithItsKindAndSuggestion() {
        McpSchema.CallToolResult r = call("run_command", "sandbox", "abc", "argv", List.of("missing-program"));
        assertThat(r.isError()).isTrue();
        assertThat(text(r)).isEqualTo("error: missing-program: not found\nto do: check the name");
        assertThat(structured(r)).containsEntry("kind", "USAGE").containsEntry("suggestion", "check the name");
    }

    @Test
    void anUnexpectedFailureIsAnInternalToolErrorNotACrash() {
        ToolDef broken = new ToolDef("broken", "x", Schema.object(), (a, c) -> {
            throw new IllegalStateException("boom");
        });
        McpSchema.CallToolResult r = ToolResults.run(broken, Map.of(), new Caller("", new McpSession()));
        assertThat(r.isError()).isTrue();
        assertThat(structured(r)).containsEntry("kind", "INTERNAL");
        assertThat(text(r)).contains("boom");
    }

    @Test
    void anAnswerThatIsNotAnObjectIsPutUnderResult() {
        assertThat(ToolResults.success(List.of(1)).structuredContent()).isEqualTo(Map.of("result", List.of(1)));
    }

    @Test
    void writeFileChecksItsModeAndPath() {
        assertThat(text(call("write_file", "sandbox", "abc", "path", "/root/x", "content", "y", "mode", "999")))
                .contains("octal");
        assertThat(text(call("write_file", "sandbox", "abc", "path", "/root/../x", "content", "y"))).contains("'..'");
        assertThat(call("write_file", "sandbox", "abc", "path", "/root/x", "content", "yz", "mode", "755").isError())
                .isFalse();
        assertThat(backend.calls.getLast()).isEqualTo("write /root/x 2 755");
    }

    @Test
    void stdinNeedsDataOrClose() {
        assertThat(text(call("send_process_stdin", "sandbox", "abc", "process", "p1"))).contains("'data', or close");
        call("send_process_stdin", "sandbox", "abc", "process", "p1", "data", "hi", "close", true);
        assertThat(backend.calls).containsSequence("stdin 2", "close-stdin");
    }

    @Test
    void aSignalIsANameOrANumber() {
        assertThat(text(call("kill_process", "sandbox", "abc", "process", "p1", "signal", "TERM; rm"))).contains("not a signal");
        call("kill_process", "sandbox", "abc", "process", "p1", "signal", "KILL");
        assertThat(backend.calls.getLast()).isEqualTo("signal KILL");
    }

    @Test
    void theClientsNameBecomesAShortLabelOfSafeCharacters() {
        assertThat(SandboxTools.createdBy("Claude Code")).isEqualTo("mcp:Claude-Code");
        assertThat(SandboxTools.createdBy("")).isEqualTo("mcp:client");
        assertThat(SandboxTools.createdBy("x".repeat(100))).hasSize(52);
        assertThat(SandboxTools.createdBy("a\nb;c")).isEqualTo("mcp:a-b-c");
    }

    @Test
    void aDiffPastItsBoundOfTextKeepsItsSummariesAndLeavesTheRestOfTheTextOut() {
        List<Map<String, Object>> changes = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            Map<String, Object> c = new HashMap<>();
            c.put("path", "f" + i);
            c.put("text", "x".repeat(CheckpointTools.MAX_DIFF_TEXT / 2));
            changes.add(c);
        }
        CheckpointTools.trimmed(Map.of("changes", changes));
        assertThat(changes.get(0).get("text")).isNotNull();
        assertThat(changes.get(1).get("text")).isNotNull();
        assertThat(changes.get(2).get("text")).isNull();
        assertThat(changes.get(2)).containsKey("textLeftOut").containsEntry("path", "f2");
    }

    @Test
    void processOutputIsDecodedIntoTextByStream() {
        Map<String, Object> answer = Map.of("from", 0, "next", 6, "complete", true,
                "chunks", List.of(Map.of("stream", "stdout", "data", "b3V0Cg=="),
                        Map.of("stream", "stderr", "data", "ZXJyCg==")),
                "process", Map.of("state", "exited", "exitCode", 0));
        Map<String, Object> v = CommandTools.outputView(answer);
        assertThat(v).containsEntry("output", "out\nerr\n").containsEntry("stdout", "out\n")
                .containsEntry("stderr", "err\n").containsEntry("exit_code", 0).containsEntry("next", 6);
    }

    @Test
    void fileOperationsCheckTheirPathsAndBoundsAndPassTheRest() {
        assertThat(text(call("list_files", "sandbox", "abc", "path", "/root/../.."))).contains("'..'");
        assertThat(text(call("list_files", "sandbox", "abc", "path", "/root", "depth", 65))).contains("outside 1..64");
        assertThat(text(call("list_files", "sandbox", "abc", "path", "/root", "max_entries", 10_001)))
                .contains("outside 1..10000");
        assertThat(text(call("rename_path", "sandbox", "abc", "from", "/a", "to", "b"))).contains("absolute");
        call("list_files", "sandbox", "abc", "path", "/root", "depth", 64, "max_entries", 10_000);
        call("stat_file", "sandbox", "abc", "path", "/root/x", "follow", true);
        call("make_directory", "sandbox", "abc", "path", "/root/d/e", "exist_ok", true);
        call("remove_path", "sandbox", "abc", "path", "/root/d", "recursive", true);
        call("rename_path", "sandbox", "abc", "from", "/a", "to", "/b");
        assertThat(backend.calls).containsSequence("list /root 64 10000", "stat /root/x true", "mkdir /root/d/e true",
                "rm /root/d true", "rename /a /b false");
    }
}
