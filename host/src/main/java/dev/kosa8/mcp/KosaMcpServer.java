package dev.kosa8.mcp;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.modelcontextprotocol.json.jackson2.JacksonMcpJsonMapper;
import io.modelcontextprotocol.server.McpServer;
import io.modelcontextprotocol.server.McpSyncServer;
import io.modelcontextprotocol.server.transport.StdioServerTransportProvider;
import java.io.BufferedInputStream;
import java.io.InputStream;
import java.io.OutputStream;
import java.util.List;
import java.util.function.Consumer;

/**
 * {@code kosa8 mcp}: kosa8's tools served over MCP on stdio with the official MCP Java SDK. Every tool goes to the
 * daemon through a {@link McpBackend}; the sandboxes the session made are removed when it ends (stdin closed, or
 * the process stopped) unless the client asked to keep them. {@link McpHttpServer} serves the same tools over
 * Streamable HTTP.
 */
public final class KosaMcpServer {
    private final McpTools tools;
    private final McpSession session = new McpSession();

    public KosaMcpServer(McpBackend backend, McpPolicy policy) {
        this.tools = new McpTools(backend, policy);
    }

    /** Every tool this server offers under its policy, in the order listed to clients. */
    List<ToolDef> tools() {
        return tools.tools();
    }

    /**
     * Serves the session on {@code in} and {@code out} until {@code in} ends, then removes the sandboxes it made
     * that were not kept. Nothing else may write to {@code out}.
     */
    public void serve(String version, InputStream in, OutputStream out, Consumer<String> log)
            throws InterruptedException {
        JacksonMcpJsonMapper mapper = new JacksonMcpJsonMapper(new ObjectMapper());
        StdioGuard guard = new StdioGuard(new BufferedInputStream(in, 1 << 16), out, mapper, StdioGuard.MAX_LINE);
        StdioServerTransportProvider transport = new StdioServerTransportProvider(mapper, guard, out);
        McpSyncServer server = tools.build(McpServer.sync(transport), version, mapper, exchange -> session);
        Thread hook = new Thread(() -> end(log), "mcp-session-end");
        Runtime.getRuntime().addShutdownHook(hook);
        try {
            guard.awaitEnd();
        } finally {
            end(log);
            try {
                Runtime.getRuntime().removeShutdownHook(hook);
            } catch (IllegalStateException shuttingDown) {
                // the hook runs or ran
            }
            server.close();
        }
    }

    /** Removes the session's sandboxes not kept; once, whether stdin ended or the process was stopped. */
    void end(Consumer<String> log) {
        session.end(tools.backend(), log);
    }

    McpSession session() {
        return session;
    }
}
