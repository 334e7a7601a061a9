package dev.kosa8.mcp;

import io.modelcontextprotocol.json.McpJsonMapper;
import io.modelcontextprotocol.server.McpServer;
import io.modelcontextprotocol.server.McpServerFeatures;
import io.modelcontextprotocol.server.McpSyncServer;
import io.modelcontextprotocol.server.McpSyncServerExchange;
import io.modelcontextprotocol.spec.McpSchema;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;

/**
 * kosa8's MCP server as both doors build it: the same tools, instructions and capabilities on the SDK's
 * {@code McpServer}, whatever the transport (stdio in {@link KosaMcpServer}, Streamable HTTP in
 * {@link McpHttpServer}). Each call runs in the caller's {@link McpSession}, found from the SDK's exchange.
 */
public final class McpTools {
    static final String INSTRUCTIONS = """
            kosa8 runs commands in sealed microVM sandboxes on the user's machine: each has its own Linux kernel, \
            no network but the hosts allowed, and sees only the one host folder it was given. Start with \
            create_sandbox (keep its id), then run_command; start_process for servers and long jobs; write_file \
            and read_file for files; checkpoint before risky steps and rewind to undo them. Sandboxes this \
            session makes are removed when it ends unless created with keep: true.""";
    /** How often a call whose client asked for progress is told it is still running. */
    static final Duration HEARTBEAT = Duration.ofSeconds(5);
    private static final ScheduledExecutorService BEATS = Executors.newSingleThreadScheduledExecutor(r -> {
        Thread th = new Thread(r, "mcp-progress");
        th.setDaemon(true);
        return th;
    });

    private final McpBackend backend;
    private final McpPolicy policy;

    public McpTools(McpBackend backend, McpPolicy policy) {
        this.backend = backend;
        this.policy = policy;
    }

    McpBackend backend() {
        return backend;
    }

    /** Every tool this server offers under its policy, in the order listed to clients. */
    List<ToolDef> tools() {
        List<ToolDef> all = new ArrayList<>();
        all.addAll(new SandboxTools(backend, policy).tools());
        all.addAll(new CommandTools(backend).tools());
        all.addAll(new FileTools(backend).tools());
        all.addAll(new CheckpointTools(backend).tools());
        all.addAll(new PolicyTools(backend, policy).tools());
        return all;
    }

    /**
     * The server on {@code spec}'s transport: kosa8's name and version, the instructions, tools only, and each
     * tool's calls run in the session {@code sessionOf} finds for the SDK's exchange.
     */
    McpSyncServer build(McpServer.SyncSpecification<?> spec,
            String version, McpJsonMapper mapper, Function<McpSyncServerExchange, McpSession> sessionOf) {
        List<McpServerFeatures.SyncToolSpecification> specs = tools().stream().map(t -> spec(t, sessionOf)).toList();
        return spec.serverInfo("kosa8", version).jsonMapper(mapper).instructions(INSTRUCTIONS)
                .capabilities(McpSchema.ServerCapabilities.builder().tools(false).build())
                .tools(specs).build();
    }

    private static McpServerFeatures.SyncToolSpecification spec(ToolDef t,
            Function<McpSyncServerExchange, McpSession> sessionOf) {
        McpSchema.Tool tool = McpSchema.Tool.builder().name(t.name()).description(t.description())
                .inputSchema(t.schema().toMap()).build();
        return McpServerFeatures.SyncToolSpecification.builder().tool(tool)
                .callHandler((exchange, request) -> {
                    McpSession session = sessionOf.apply(exchange);
                    if (session == null || !session.enter()) {
                        return ToolResults.error("STATE", "this MCP session is ending or was deleted",
                                "start a new session");
                    }
                    ScheduledFuture<?> beat = heartbeat(t, request, exchange);
                    try {
                        return ToolResults.run(t, request.arguments(), new Caller(clientName(exchange), session));
                    } finally {
                        if (beat != null) {
                            beat.cancel(false);
                        }
                        session.leave();
                    }
                })
                .build();
    }

    /**
     * For a call whose client asked for progress (a {@code progressToken}), a progress notification every
     * {@link #HEARTBEAT} while it runs: a create under TCG, a checkpoint or a long command take longer than the 60 s
     * many clients wait by default, and clients that reset their timeout on progress keep waiting.
     */
    private static ScheduledFuture<?> heartbeat(ToolDef t, McpSchema.CallToolRequest request,
                                                McpSyncServerExchange exchange) {
        Object token = request.meta() == null ? null : request.meta().get("progressToken");
        if (token == null || exchange == null) {
            return null;
        }
        AtomicInteger beats = new AtomicInteger();
        return BEATS.scheduleAtFixedRate(() -> {
            int n = beats.incrementAndGet();
            try {
                exchange.progressNotification(new McpSchema.ProgressNotification(token, n, null,
                        t.name() + " still running after " + n * HEARTBEAT.toSeconds() + " s"));
            } catch (RuntimeException e) {
                // the client went away; the call's end says so
            }
        }, HEARTBEAT.toSeconds(), HEARTBEAT.toSeconds(), TimeUnit.SECONDS);
    }

    private static String clientName(McpSyncServerExchange exchange) {
        McpSchema.Implementation info = exchange == null ? null : exchange.getClientInfo();
        return info == null ? "" : info.name();
    }
}
