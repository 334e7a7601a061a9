package dev.kosa8.mcp;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.modelcontextprotocol.json.jackson2.JacksonMcpJsonMapper;
import io.modelcontextprotocol.server.McpServer;
import io.modelcontextprotocol.server.McpServerFeatures;
import io.modelcontextprotocol.server.McpSyncServer;
import io.modelcontextprotocol.server.McpSyncServerExchange;
import io.modelcontextprotocol.server.transport.StdioServerTransportProvider;
import io.modelcontextprotocol.spec.McpSchema;
import java.io.BufferedInputStream;
import java.io.InputStream;
import java.io.OutputStream;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Consumer;

/**
 * {@code kosa8 mcp}: kosa8's tools served over MCP on stdio with the official MCP Java SDK. Every tool goes to the
 * daemon through a {@link McpBackend}; the sandboxes the session made are removed when it ends (stdin closed, or
 * the process stopped) unless the client asked to keep them.
 */
public final class KosaMcpServer {
    static final String INSTRUCTIONS = """
            kosa8 runs commands in sealed microVM sandboxes on the user's machine: each has its own Linux kernel, \
            no network but the hosts allowed, and sees only the one host folder it was given. Start with \
            create_sandbox (keep its id), then run_command; start_process for servers and long jobs; write_file \
            and read_file for files; checkpoint before risky steps and rewind to undo them. Sandboxes this \
            session makes are removed when it ends unless created with keep: true.""";

    private final McpBackend backend;
    private final McpPolicy policy;
    private final McpSession session = new McpSession();
    private final AtomicBoolean ended = new AtomicBoolean();
    private final java.util.concurrent.CountDownLatch endDone = new java.util.concurrent.CountDownLatch(1);
    /** Tool calls under way: the session's end waits for them, so a sandbox being created is removed too. */
    private final java.util.concurrent.Phaser calls = new java.util.concurrent.Phaser(1);
    /** How long the end of a session waits for the calls under way (a create under TCG takes a minute). */
    static final java.time.Duration CALLS_AT_END = java.time.Duration.ofMinutes(3);

    public KosaMcpServer(McpBackend backend, McpPolicy policy) {
        this.backend = backend;
        this.policy = policy;
    }

    /** Every tool this server offers under its policy, in the order listed to clients. */
    List<ToolDef> tools() {
        List<ToolDef> all = new ArrayList<>();
        all.addAll(new SandboxTools(backend, session, policy).tools());
        all.addAll(new CommandTools(backend).tools());
        all.addAll(new FileTools(backend).tools());
        all.addAll(new CheckpointTools(backend, session).tools());
        all.addAll(new PolicyTools(backend, policy).tools());
        return all;
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
        List<McpServerFeatures.SyncToolSpecification> specs = tools().stream().map(this::spec).toList();
        McpSyncServer server = McpServer.sync(transport).serverInfo("kosa8", version).jsonMapper(mapper)
                .instructions(INSTRUCTIONS)
                .capabilities(McpSchema.ServerCapabilities.builder().tools(false).build())
                .tools(specs).build();
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
        if (!ended.compareAndSet(false, true)) {
            // the other of stdin's end and a stop signal is removing them: wait for it, so the process stays
            try {
                endDone.await(CALLS_AT_END.toSeconds() + 60, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            return;
        }
        try {
            int phase = calls.arriveAndDeregister();
            try {
                calls.awaitAdvanceInterruptibly(phase, CALLS_AT_END.toSeconds(), TimeUnit.SECONDS);
            } catch (InterruptedException | java.util.concurrent.TimeoutException e) {
                log.accept("tool calls still under way at the end of the session; removing its sandboxes anyway");
            }
            session.end(backend, log);
        } finally {
            endDone.countDown();
        }
    }

    McpSession session() {
        return session;
    }

    private McpServerFeatures.SyncToolSpecification spec(ToolDef t) {
        McpSchema.Tool tool = McpSchema.Tool.builder().name(t.name()).description(t.description())
                .inputSchema(t.schema().toMap()).build();
        return McpServerFeatures.SyncToolSpecification.builder().tool(tool)
                .callHandler((exchange, request) -> {
                    if (calls.register() < 0) {
                        return ToolResults.error("STATE", "the session is ending", "start a new one");
                    }
                    java.util.concurrent.ScheduledFuture<?> beat = heartbeat(t, request, exchange);
                    try {
                        return ToolResults.run(t, request.arguments(), clientName(exchange));
                    } finally {
                        if (beat != null) {
                            beat.cancel(false);
                        }
                        calls.arriveAndDeregister();
                    }
                })
                .build();
    }

    /**
     * For a call whose client asked for progress (a {@code progressToken}), a progress notification every
     * {@link #HEARTBEAT} while it runs: a create under TCG, a checkpoint or a long command take longer than the 60 s
     * many clients wait by default, and clients that reset their timeout on progress keep waiting.
     */
    private static java.util.concurrent.ScheduledFuture<?> heartbeat(ToolDef t, McpSchema.CallToolRequest request,
                                                                     McpSyncServerExchange exchange) {
        Object token = request.meta() == null ? null : request.meta().get("progressToken");
        if (token == null || exchange == null) {
            return null;
        }
        java.util.concurrent.atomic.AtomicInteger beats = new java.util.concurrent.atomic.AtomicInteger();
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

    static final java.time.Duration HEARTBEAT = java.time.Duration.ofSeconds(5);
    private static final java.util.concurrent.ScheduledExecutorService BEATS =
            java.util.concurrent.Executors.newSingleThreadScheduledExecutor(r -> {
                Thread th = new Thread(r, "mcp-progress");
                th.setDaemon(true);
                return th;
            });

    private static String clientName(McpSyncServerExchange exchange) {
        McpSchema.Implementation info = exchange == null ? null : exchange.getClientInfo();
        return info == null ? "" : info.name();
    }
}
