package dev.kosa8.cli;

import dev.kosa8.host.KosaException;
import dev.kosa8.mcp.KosaMcpServer;
import dev.kosa8.mcp.McpHttpEndpoint;
import dev.kosa8.mcp.McpHttpServer;
import dev.kosa8.mcp.McpHttpToken;
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
            "With --http it serves MCP's Streamable HTTP transport instead, on 127.0.0.1 only, for clients that "
                + "connect to a URL: every request needs the bearer token it prints (also written, with the URL, "
                + "to mcp-http.json in kosa8's runtime folder, readable only by you). It runs until stopped.",
            "  Claude Code:    claude mcp add --transport http kosa8 http://127.0.0.1:7480/mcp \\",
            "                    --header \"Authorization: Bearer TOKEN\"",
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

    @Option(names = "--http", description = {"Serve MCP's Streamable HTTP transport on 127.0.0.1 instead of stdio."})
    boolean http;

    @Option(names = "--port", paramLabel = "N", description = {"With --http: the port (default "
            + McpHttpServer.DEFAULT_PORT + "; 0 for any free one)."})
    Integer port;

    @Option(names = "--bind", paramLabel = "ADDR", description = {"With --http: the address to listen on; only "
            + McpHttpServer.HOST + " (or localhost) is accepted: the tools run commands on this machine, so no "
            + "other machine may reach them."})
    String bind;

    @Option(names = "--token-file", paramLabel = "FILE", description = {"With --http: the bearer token is the "
            + "first line of FILE (readable only by you, at least 32 characters) instead of a new random one "
            + "each start, so a client's configuration outlives a restart."})
    java.nio.file.Path tokenFile;

    @Override
    public Integer call() throws InterruptedException {
        // stdout carries the protocol alone: anything else printed goes to stderr, which clients log
        OutputStream protocol = new FileOutputStream(FileDescriptor.out);
        PrintStream err = System.err;
        System.setOut(err);
        // the MCP SDK logs through SLF4J, which kosa8 gives no backend: say nothing of that on every start
        System.setProperty("slf4j.internal.verbosity", "ERROR");
        if (!http && (port != null || bind != null || tokenFile != null)) {
            throw new KosaException(KosaException.Kind.USAGE, "--port, --bind and --token-file go with --http",
                    "add --http to serve over HTTP, or leave them out for stdio");
        }
        if (http) {
            checkBind(bind);
            if (port != null && (port < 0 || port > 65535)) {
                throw new KosaException(KosaException.Kind.USAGE, "--port " + port + " is not a TCP port",
                        "give 1 to 65535, or 0 for any free one");
            }
        }
        McpHttpToken token = http ? (tokenFile != null ? McpHttpToken.read(tokenFile) : McpHttpToken.generate())
                : null;
        DaemonClient daemon = main.daemon();
        ProjectConfig config = ProjectConfigFile.read(java.nio.file.Path.of("").toAbsolutePath());
        McpPolicy policy = new McpPolicy(allowPolicyChanges, config.allow(), config.secrets(),
                config.net() == null ? "closed" : config.net());
        java.util.function.Consumer<String> log = line -> err.println("kosa8 mcp: " + line);
        if (http) {
            serveHttp(new McpHttpServer(new DaemonMcpBackend(daemon, main.paths), policy, token, log), token, err);
            return 0;
        }
        new KosaMcpServer(new DaemonMcpBackend(daemon, main.paths), policy).serve(dev.kosa8.daemon.Daemon.VERSION,
                System.in, protocol, log);
        return 0;
    }

    /** Only the loopback: the tools run commands and read files on this machine. */
    static void checkBind(String bind) {
        if (bind != null && !bind.equals(McpHttpServer.HOST) && !bind.equals("localhost")) {
            throw new KosaException(KosaException.Kind.USAGE, "kosa8 mcp --http listens on " + McpHttpServer.HOST
                    + " only, not " + bind + ": its tools create sandboxes and run commands on this machine, and a "
                    + "token is all that would guard them from the network",
                    "leave --bind out; to reach it from elsewhere, use an SSH tunnel (ssh -L)");
        }
    }

    private void serveHttp(McpHttpServer server, McpHttpToken token, PrintStream err) throws InterruptedException {
        server.start(dev.kosa8.daemon.Daemon.VERSION, port == null ? McpHttpServer.DEFAULT_PORT : port);
        McpHttpEndpoint endpoint = McpHttpEndpoint.of(main.paths, server.url(), token);
        Thread hook = new Thread(() -> {
            server.stop();
            endpoint.removeIfOurs();
        }, "mcp-http-stop");
        Runtime.getRuntime().addShutdownHook(hook);
        try {
            endpoint.write();
        } catch (java.io.IOException e) {
            err.println("kosa8 mcp: could not write " + endpoint.file() + ": " + e.getMessage());
        }
        err.println("kosa8 mcp: serving MCP over Streamable HTTP at " + server.url());
        err.println("kosa8 mcp: token " + token.value());
        err.println("kosa8 mcp: both are in " + endpoint.file() + " (readable only by you)");
        err.println("kosa8 mcp: Claude Code: claude mcp add --transport http kosa8 " + server.url()
                + " --header \"Authorization: Bearer " + token.value() + "\"");
        err.println("kosa8 mcp: stop with Ctrl-C; sandboxes the sessions made are removed then unless kept");
        server.awaitStop();
    }
}
