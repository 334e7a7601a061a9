package dev.kosa8.mcp;

import com.fasterxml.jackson.databind.ObjectMapper;
import dev.kosa8.host.KosaException;
import io.modelcontextprotocol.json.jackson2.JacksonMcpJsonMapper;
import io.modelcontextprotocol.server.McpServer;
import io.modelcontextprotocol.server.McpSyncServer;
import io.modelcontextprotocol.server.transport.HttpServletStreamableServerTransportProvider;
import io.modelcontextprotocol.spec.McpStreamableServerSession;
import io.modelcontextprotocol.spec.McpStreamableServerTransportProvider;
import jakarta.servlet.DispatcherType;
import java.io.IOException;
import java.net.BindException;
import java.util.EnumSet;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Consumer;
import org.eclipse.jetty.ee11.servlet.FilterHolder;
import org.eclipse.jetty.ee11.servlet.ServletContextHandler;
import org.eclipse.jetty.ee11.servlet.ServletHolder;
import org.eclipse.jetty.server.HttpConfiguration;
import org.eclipse.jetty.server.HttpConnectionFactory;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;
import reactor.core.publisher.Mono;

/**
 * {@code kosa8 mcp --http}: the same tools as {@link KosaMcpServer}, built the same way ({@link McpTools}), over
 * MCP's Streamable HTTP transport: the official SDK's servlet ({@link HttpServletStreamableServerTransportProvider},
 * so the protocol is the SDK's) in an embedded Jetty, on 127.0.0.1 alone, behind {@link McpHttpFilter} (token,
 * origin, body and session bounds). Each MCP session ({@code Mcp-Session-Id}) has its own sandboxes, removed when
 * the client deletes the session or the server stops, unless kept.
 */
public final class McpHttpServer {
    /** The one address served: the loopback, so only programs on this machine can connect at all. */
    public static final String HOST = "127.0.0.1";
    /** The endpoint's path. */
    public static final String PATH = "/mcp";
    /** The port when none is given: fixed, so a client configured once finds the server again. */
    public static final int DEFAULT_PORT = 7480;

    private final McpTools tools;
    private final McpHttpToken token;
    private final Consumer<String> log;
    private final HttpSessions sessions;
    private final AtomicBoolean stopping = new AtomicBoolean();
    private final CountDownLatch stopped = new CountDownLatch(1);
    private Server jetty;
    private McpSyncServer server;
    private int port;

    public McpHttpServer(McpBackend backend, McpPolicy policy, McpHttpToken token, Consumer<String> log) {
        this.tools = new McpTools(backend, policy);
        this.token = token;
        this.log = log;
        this.sessions = new HttpSessions(HttpGuard.MAX_SESSIONS, backend, log);
    }

    /** Starts serving on 127.0.0.1:{@code port} (0: a free port the system picks); answers the port. */
    public int start(String version, int port) {
        JacksonMcpJsonMapper mapper = new JacksonMcpJsonMapper(new ObjectMapper());
        HttpServletStreamableServerTransportProvider servlet = HttpServletStreamableServerTransportProvider.builder()
                .jsonMapper(mapper).mcpEndpoint(PATH).maxRequestSize(HttpGuard.MAX_BODY).build();
        server = tools.build(McpServer.sync(new SessionTracking(servlet, sessions)), version, mapper,
                exchange -> exchange == null ? null : sessions.of(exchange.sessionId()));
        jetty = new Server();
        HttpConfiguration http = new HttpConfiguration();
        http.setSendServerVersion(false);
        http.setSendXPoweredBy(false);
        ServerConnector connector = new ServerConnector(jetty, new HttpConnectionFactory(http));
        connector.setHost(HOST);
        connector.setPort(port);
        jetty.addConnector(connector);
        ServletContextHandler context = new ServletContextHandler();
        context.setContextPath("/");
        ServletHolder holder = new ServletHolder(servlet);
        holder.setAsyncSupported(true);
        context.addServlet(holder, PATH);
        FilterHolder guard = new FilterHolder(new McpHttpFilter(token, sessions, stopping::get));
        guard.setAsyncSupported(true);
        context.addFilter(guard, "/*", EnumSet.of(DispatcherType.REQUEST));
        jetty.setHandler(context);
        try {
            jetty.start();
        } catch (Exception e) {
            stopQuietly();
            if (e instanceof IOException && e.getCause() instanceof BindException || e instanceof BindException) {
                throw new KosaException(KosaException.Kind.STATE, "cannot listen on " + HOST + ":" + port + ": "
                        + e.getMessage(), "another program (another `kosa8 mcp --http`?) has that port; give "
                        + "--port N for another, or --port 0 for any free one");
            }
            throw new KosaException(KosaException.Kind.INTERNAL, "cannot start the MCP HTTP server: " + e, "", e);
        }
        this.port = connector.getLocalPort();
        Thread.ofVirtual().name("mcp-idle-sweep").start(() -> {
            while (!stopping.get()) {
                try {
                    Thread.sleep(java.time.Duration.ofMinutes(1));
                } catch (InterruptedException e) {
                    return;
                }
                sessions.sweep(System.nanoTime(), HttpSessions.IDLE);
            }
        });
        return this.port;
    }

    /** The URL clients connect to. */
    public String url() {
        return "http://" + HOST + ":" + port + PATH;
    }

    /** The sessions open now. */
    int openSessions() {
        return sessions.open();
    }

    /** Ends the sessions idle for {@code idle} now, as the minutely sweep does for {@link HttpSessions#IDLE}. */
    int sweepIdle(java.time.Duration idle) {
        return sessions.sweep(System.nanoTime(), idle);
    }

    /** Waits until {@link #stop} has finished. */
    public void awaitStop() throws InterruptedException {
        stopped.await();
    }

    /**
     * Stops, once: new requests are refused (503), every session is ended (its calls under way waited for, its
     * sandboxes not kept removed, all sessions at once), then the server closes.
     */
    public void stop() {
        if (!stopping.compareAndSet(false, true)) {
            try {
                stopped.await();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            return;
        }
        try {
            sessions.endAll("the server stopped");
            if (server != null) {
                server.close();
            }
            stopQuietly();
        } finally {
            stopped.countDown();
        }
    }

    private void stopQuietly() {
        try {
            if (jetty != null) {
                jetty.stop();
            }
        } catch (Exception e) {
            log.accept("stopping the HTTP server: " + e.getMessage());
        }
    }

    /** The SDK's servlet as the SDK's server sees it, with each session it starts recorded in {@code sessions}. */
    private record SessionTracking(McpStreamableServerTransportProvider sdk, HttpSessions sessions)
            implements McpStreamableServerTransportProvider {
        @Override
        public void setSessionFactory(McpStreamableServerSession.Factory factory) {
            sdk.setSessionFactory(sessions.wrap(factory));
        }

        @Override
        public Mono<Void> notifyClients(String method, Object params) {
            return sdk.notifyClients(method, params);
        }

        @Override
        public Mono<Void> notifyClient(String sessionId, String method, Object params) {
            return sdk.notifyClient(sessionId, method, params);
        }

        @Override
        public Mono<Void> closeGracefully() {
            return sdk.closeGracefully();
        }

        @Override
        public java.util.List<String> protocolVersions() {
            return sdk.protocolVersions();
        }
    }
}
