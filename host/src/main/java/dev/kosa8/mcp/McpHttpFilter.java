package dev.kosa8.mcp;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import jakarta.servlet.Filter;
import jakarta.servlet.FilterChain;
import jakarta.servlet.ServletException;
import jakarta.servlet.ServletRequest;
import jakarta.servlet.ServletResponse;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.function.BooleanSupplier;

/**
 * What every request to {@code kosa8 mcp --http} passes before the MCP SDK's servlet sees it, in this order: a
 * loopback {@code Host} and, from a browser, a loopback {@code Origin} (else 403); the bearer token (else 401, with
 * {@code WWW-Authenticate}); the server not stopping (else 503); a body of at most {@link HttpGuard#MAX_BODY}
 * bytes by its {@code Content-Length} (else 413; a chunked body past it is cut off by the SDK's own reader, also
 * 413); and, for a request without {@code Mcp-Session-Id} (an initialize), a free session slot (else 503). Each
 * refusal is a JSON-RPC error object saying what happened and what to do. After the SDK: a session it deleted (a
 * {@code DELETE} answered 200) or no longer knows (404 for an id still open here) is ended here.
 */
final class McpHttpFilter implements Filter {
    static final String SESSION_HEADER = "Mcp-Session-Id";
    private static final ObjectMapper JSON = new ObjectMapper();

    private final McpHttpToken token;
    private final HttpSessions sessions;
    private final BooleanSupplier stopping;

    McpHttpFilter(McpHttpToken token, HttpSessions sessions, BooleanSupplier stopping) {
        this.token = token;
        this.sessions = sessions;
        this.stopping = stopping;
    }

    @Override
    public void doFilter(ServletRequest request, ServletResponse response, FilterChain chain)
            throws IOException, ServletException {
        HttpServletRequest req = (HttpServletRequest) request;
        HttpServletResponse res = (HttpServletResponse) response;
        if (!HttpGuard.hostAllowed(req.getHeader("Host"))) {
            refuse(res, 403, "the Host header names no loopback address: kosa8 mcp answers only requests to "
                    + "127.0.0.1 or localhost (a guard against DNS rebinding)", "connect to http://127.0.0.1:PORT/mcp");
            return;
        }
        if (!HttpGuard.originAllowed(req.getHeader("Origin"))) {
            refuse(res, 403, "requests from web pages of other origins are refused (the Origin header is not "
                    + "http://localhost or http://127.0.0.1): a guard against DNS rebinding",
                    "use an MCP client program, or a page served from this machine's loopback");
            return;
        }
        if (!token.matches(HttpGuard.bearer(req.getHeader("Authorization")))) {
            res.setHeader("WWW-Authenticate", "Bearer realm=\"kosa8\"");
            // its body is not read, so Jetty ends the connection after the answer: said, so that a client does not
            // send its next request on it (Java's HttpClient did, now and then, and lost it: "received no bytes")
            res.setHeader("Connection", "close");
            refuse(res, 401, req.getHeader("Authorization") == null ? "no bearer token: every request needs "
                    + "the header Authorization: Bearer TOKEN" : "wrong bearer token",
                    "the token is printed when `kosa8 mcp --http` starts, and is in mcp-http.json in kosa8's "
                            + "runtime folder (docs/mcp.md, \"Over HTTP\")");
            return;
        }
        if (stopping.getAsBoolean()) {
            discard(req, SETTLE);
            refuse(res, 503, "kosa8 mcp is stopping", "start it again");
            return;
        }
        if (req.getContentLengthLong() > HttpGuard.MAX_BODY) {
            discard(req, HttpGuard.MAX_DRAIN);
            refuse(res, 413, "request body of " + req.getContentLengthLong() + " bytes: more than "
                    + HttpGuard.MAX_BODY + " are refused", "a file tool takes at most 4 MiB of content a call");
            return;
        }
        String id = req.getHeader(SESSION_HEADER);
        boolean initialize = id == null && "POST".equals(req.getMethod());
        if (initialize && !sessions.reserve()) {
            discard(req, SETTLE);
            refuse(res, 503, "too many MCP sessions: " + sessions.open() + " are open, at most "
                    + HttpGuard.MAX_SESSIONS + " at once", "end one (its client's DELETE), or restart kosa8 mcp");
            return;
        }
        // a session this server does not hold (ended: deleted, idle, the server restarted; or never started) is a
        // 404, as the spec says, whatever the request: the client then starts a new one
        if (id != null && !sessions.enter(id)) {
            discard(req, SETTLE);
            refuse(res, 404, "no MCP session " + HttpSessions.shortId(id) + "… here: it ended"
                    + " (deleted, idle for " + HttpSessions.IDLE.toHours() + " hours, or the server restarted)"
                    + " or never was", "start a new session (initialize without Mcp-Session-Id)");
            return;
        }
        try {
            chain.doFilter(request, response);
        } finally {
            if (initialize) {
                sessions.release();
            }
            if (id != null) {
                sessions.leave(id);
            }
        }
        if (id != null && "DELETE".equals(req.getMethod()) && res.getStatus() == 200) {
            sessions.end(id, "deleted by the client");
        } else if (id != null && res.getStatus() == 404 && McpHttpServer.PATH.equals(req.getRequestURI())
                && sessions.of(id) != null) {
            sessions.end(id, "the SDK no longer knows it");
        }
    }

    /**
     * Reads and drops a refused request's body, when it is announced and no longer than {@code limit} bytes, and
     * at most {@code limit} bytes of it: a body left unread makes Jetty close the connection after the answer. A
     * client still writing it then gets a broken pipe instead of the answer (Node's fetch does, for the 413's
     * body of up to {@link HttpGuard#MAX_DRAIN}); and a client that has already sent its next request on that
     * kept-alive connection (as Java's HttpClient may) loses it, "received no bytes" (for an authenticated
     * request refused for what its head says, whose body, up to {@link #SETTLE}, holds any JSON-RPC message an
     * MCP client sends). No body of a request without the token is read.
     */
    private static void discard(HttpServletRequest req, long limit) {
        long length = req.getContentLengthLong();
        if (length == 0 || length > limit) {
            return;
        }
        byte[] buf = new byte[64 * 1024];
        long left = limit;
        try (var in = req.getInputStream()) {
            int n;
            while (left > 0 && (n = in.read(buf, 0, (int) Math.min(buf.length, left))) >= 0) {
                left -= n;
            }
        } catch (IOException e) {
            // the client gave up; the refusal is all it gets
        }
    }

    /** The most of a body {@link #discard} reads for a refusal other than the 413. */
    static final long SETTLE = 64 * 1024;

    /** A refusal: the status and a JSON-RPC error (id null) whose message says what happened and what to do. */
    static void refuse(HttpServletResponse res, int status, String message, String suggestion) throws IOException {
        ObjectNode body = JSON.createObjectNode();
        body.put("jsonrpc", "2.0");
        body.putNull("id");
        ObjectNode error = body.putObject("error");
        error.put("code", -32000);
        error.put("message", message);
        ObjectNode data = error.putObject("data");
        data.put("status", status);
        data.put("suggestion", suggestion);
        byte[] bytes = JSON.writeValueAsBytes(body);
        res.setStatus(status);
        res.setContentType("application/json");
        res.setCharacterEncoding(StandardCharsets.UTF_8.name());
        res.setContentLength(bytes.length);
        res.getOutputStream().write(bytes);
    }
}
