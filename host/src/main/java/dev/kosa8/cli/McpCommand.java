package dev.kosa8.cli;

import dev.kosa8.mcp.KosaMcpServer;
import dev.kosa8.mcp.McpPolicy;
import java.io.FileDescriptor;
import java.io.FileOutputStream;
import java.io.OutputStream;
import java.io.PrintStream;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParentCommand;

@Command(name = "mcp", mixinStandardHelpOptions = true,
        description = {"Serve kosa8 to an AI agent over MCP (the Model Context Protocol) on stdin and stdout: tools to "
                + "create sandboxes, run commands and background processes, write and read files, checkpoint, "
                + "rewind, fork and diff. The agent's client starts this command; you do not run it by hand.",
            "",
            "Set-up, one line:",
            "  Claude Code:    claude mcp add kosa8 -- kosa8 mcp",
            "  Codex:          codex mcp add kosa8 -- kosa8 mcp",
            "  Gemini CLI:     gemini mcp add kosa8 kosa8 mcp",
            "  Claude Desktop: in claude_desktop_config.json,",
            "    {\"mcpServers\": {\"kosa8\": {\"command\": \"kosa8\", \"args\": [\"mcp\"]}}}",
            "docs/mcp.md has each in full, with the clients' timeouts.",
            "",
            "Sandboxes a session creates are listed by `kosa8 ls` as made by mcp:CLIENT and removed when the session "
                + "ends (the client closes stdin, or stops the server), unless the client created them with keep. "
                + "No tool shows a secret's value. The hosts, secrets and network a client may ask for are those of "
                + "your project's settings (`kosa8 config show`); anything beyond, and the tools allow_host, "
                + "deny_host and grant_secret, only with --allow-policy-changes.",
            ""},
        footer = {"", "Try it by hand: npx @modelcontextprotocol/inspector kosa8 mcp"})
final class McpCommand implements Callable<Integer> {
    @ParentCommand
    Main main;

    @Option(names = "--allow-policy-changes",
            description = {"Let the client open the network beyond your configuration: allow hosts and grant secrets "
                    + "(by name) at create, and the allow_host, deny_host and grant_secret tools."})
    boolean allowPolicyChanges;

    @Override
    public Integer call() throws InterruptedException {
        // stdout carries the protocol alone: anything else printed goes to stderr, which clients log
        OutputStream protocol = new FileOutputStream(FileDescriptor.out);
        PrintStream err = System.err;
        System.setOut(err);
        // the MCP SDK logs through SLF4J, which kosa8 gives no backend: say nothing of that on every start
        System.setProperty("slf4j.internal.verbosity", "ERROR");
        DaemonClient daemon = main.daemon();
        ProjectConfig config = ProjectConfigFile.read(java.nio.file.Path.of("").toAbsolutePath());
        McpPolicy policy = new McpPolicy(allowPolicyChanges, config.allow(), config.secrets(),
                config.net() == null ? "closed" : config.net());
        new KosaMcpServer(new DaemonMcpBackend(daemon, main.paths), policy).serve(dev.kosa8.daemon.Daemon.VERSION,
                System.in, protocol, line -> err.println("kosa8 mcp: " + line));
        return 0;
    }
}
