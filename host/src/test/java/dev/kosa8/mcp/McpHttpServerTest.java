package dev.kosa8.mcp;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * {@code kosa8 mcp --http}'s server for real on a loopback port (Jetty, the SDK's servlet, the guard), over a
 * recording backend: each refusal and bound hit with a real HTTP request, and the sessions' sandboxes removed
 * when a session is deleted or the server stops. McpHttpIT drives it with the official TypeScript client and
 * real microVMs.
 */
class McpHttpServerTest {
    private static final ObjectMapper JSON = new ObjectMapper();
    private final RecordingBackend backend = new RecordingBackend();
    private final McpHttpToken token = McpHttpToken.generate();
    private final List<String> log = new CopyOnWriteArrayList<>();
    private final HttpClient http = HttpClient.newHttpClient();
    private McpHttpServer server;
    private URI url;

    @BeforeEach
    void start() {
        server = new McpHttpServer(backend, new McpPolicy(false, List.of(), List.of(), "closed"), token, log::add);
        int port = server.start("test", 0);
        url = URI.create(server.url());
        assertThat(server.url()).isEqualTo("http://127.0.0.1:" + port + "/mcp");
    }

    @AfterEach
    void stop() {
        server.stop();
    }

    private HttpRequest.Builder request(String... headers) {
        HttpRequest.Builder b = HttpRequest.newBuilder(url).header("Content-Type", "application/json")
                .header("Accept", "application/json, text/event-stream");
        for (int i = 0; i < headers.length; i += 2) {
            b.header(headers[i], headers[i + 1]);
        }
        return b;
    }

    private HttpResponse<String> post(String body, String... headers) throws Exception {
        return http.send(request(headers).POST(HttpRequest.BodyPublishers.ofString(body)).build(),
                HttpResponse.BodyHandlers.ofString());
    }

    private String bearer() {
        return "Bearer " + token.value();
    }

    private static String initialize() {
        return "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{\"protocolVersion\":"
                + "\"2025-06-18\",\"capabilities\":{},\"clientInfo\":{\"name\":\"test-client\",\"version\":\"1\"}}}";
    }

    /** A new session's id, initialized. */
    private String session() throws Exception {
        HttpResponse<String> r = post(initialize(), "Authorization", bearer());
        assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
        String id = r.headers().firstValue("Mcp-Session-Id").orElseThrow();
        HttpResponse<String> n = post("{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}",
                "Authorization", bearer(), "Mcp-Session-Id", id);
        assertThat(n.statusCode()).isEqualTo(202);
        return id;
    }

    /** A tool's structured answer, from the SSE stream the SDK answers a call with. */
    private JsonNode call(String session, String tool, String args) throws Exception {
        HttpResponse<String> r = post("{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\",\"params\":{\"name\":\""
                + tool + "\",\"arguments\":" + args + "}}", "Authorization", bearer(), "Mcp-Session-Id", session);
        assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
        String data = r.body().lines().filter(l -> l.startsWith("data:")).reduce((a, b) -> b).orElseThrow();
        return JSON.readTree(data.substring(5)).path("result").path("structuredContent");
    }

    private HttpResponse<String> delete(String session) throws Exception {
        return http.send(request("Authorization", bearer(), "Mcp-Session-Id", session).DELETE().build(),
                HttpResponse.BodyHandlers.ofString());
    }

    private static JsonNode error(HttpResponse<String> r) throws Exception {
        return JSON.readTree(r.body()).path("error");
    }

    private List<String> calls() {
        synchronized (backend) {
            return new ArrayList<>(backend.calls);
        }
    }

    @Test
    void aPortInUseIsRefusedWithWhatToDo() {
        McpHttpServer second = new McpHttpServer(backend, new McpPolicy(false, List.of(), List.of(), "closed"),
                token, log::add);
        org.assertj.core.api.Assertions.assertThatThrownBy(() -> second.start("test", url.getPort()))
                .isInstanceOf(dev.kosa8.host.KosaException.class)
                .hasMessageContaining("cannot listen on 127.0.0.1:" + url.getPort())
                .satisfies(e -> assertThat(((dev.kosa8.host.KosaException) e).suggestion()).contains("--port 0"));
    }

    @Test
    void aRequestWithoutTheTokenOrWithAWrongOneIsUnauthorized() throws Exception {
        HttpResponse<String> none = post(initialize());
        assertThat(none.statusCode()).isEqualTo(401);
        assertThat(none.headers().firstValue("WWW-Authenticate")).hasValue("Bearer realm=\"kosa8\"");
        assertThat(none.headers().firstValue("Connection")).as("the connection ends: the body was not read")
                .hasValue("close");
        assertThat(error(none).path("message").asText()).contains("no bearer token");
        assertThat(error(none).path("data").path("suggestion").asText()).contains("mcp-http.json");

        HttpResponse<String> wrong = post(initialize(), "Authorization", "Bearer " + McpHttpToken.generate().value());
        assertThat(wrong.statusCode()).isEqualTo(401);
        assertThat(error(wrong).path("message").asText()).isEqualTo("wrong bearer token");
        assertThat(post(initialize(), "Authorization", "Basic " + token.value()).statusCode()).isEqualTo(401);
        assertThat(server.openSessions()).isZero();
        session();
    }

    @Test
    void aForeignOriginIsForbiddenAndALoopbackOneIsNot() throws Exception {
        HttpResponse<String> foreign = post(initialize(), "Authorization", bearer(), "Origin", "http://evil.example");
        assertThat(foreign.statusCode()).isEqualTo(403);
        assertThat(error(foreign).path("message").asText()).contains("DNS rebinding");
        assertThat(post(initialize(), "Authorization", bearer(), "Origin", "http://localhost:5173").statusCode())
                .isEqualTo(200);
    }

    @Test
    void aHostHeaderNamingAnotherMachineIsForbidden() throws Exception {
        try (Socket s = new Socket("127.0.0.1", url.getPort())) {
            OutputStream out = s.getOutputStream();
            out.write(("GET /mcp HTTP/1.1\r\nHost: rebound.evil.example:" + url.getPort() + "\r\nAuthorization: "
                    + bearer() + "\r\nConnection: close\r\n\r\n").getBytes(StandardCharsets.US_ASCII));
            out.flush();
            InputStream in = s.getInputStream();
            String answer = new String(in.readAllBytes(), StandardCharsets.UTF_8);
            assertThat(answer).startsWith("HTTP/1.1 403").contains("DNS rebinding");
        }
    }

    /**
     * A refused request's body that arrives after its head (as Java's HttpClient sends a POST) is read before the
     * answer, so the kept-alive connection carries the next request: left unread, Jetty closed the connection, and
     * a client that reused it lost its next request (McpHttpServerTest once failed so: "received no bytes").
     */
    @Test
    void aRefusedRequestsLateBodyIsReadSoTheConnectionCarriesTheNextRequest() throws Exception {
        byte[] body = initialize().getBytes(StandardCharsets.UTF_8);
        try (Socket s = new Socket("127.0.0.1", url.getPort())) {
            s.setSoTimeout(20_000);
            OutputStream out = s.getOutputStream();
            InputStream in = s.getInputStream();
            for (String sessionId : List.of("made-up-1", "made-up-2")) {
                out.write(("POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:" + url.getPort() + "\r\nAuthorization: " + bearer()
                        + "\r\nMcp-Session-Id: " + sessionId + "\r\nContent-Type: application/json\r\n"
                        + "Accept: application/json, text/event-stream\r\nContent-Length: " + body.length
                        + "\r\n\r\n").getBytes(StandardCharsets.US_ASCII));
                out.flush();
                Thread.sleep(300); // the head is answered only once the body is in
                out.write(body);
                out.flush();
                String head = readHead(in);
                assertThat(head).as(sessionId).startsWith("HTTP/1.1 404").doesNotContainIgnoringCase("connection: close");
                int length = Integer.parseInt(head.replaceAll("(?is).*content-length: *([0-9]+).*", "$1"));
                assertThat(new String(in.readNBytes(length), StandardCharsets.UTF_8)).contains("no MCP session");
            }
        }
    }

    private static String readHead(InputStream in) throws java.io.IOException {
        StringBuilder b = new StringBuilder();
        while (!b.toString().endsWith("\r\n\r\n")) {
            int c = in.read();
            assertThat(c).as("the connection closed after: %s", b).isNotNegative();
            b.append((char) c);
        }
        return b.toString();
    }

    @Test
    void aBodyPastTheBoundIsRefusedAndTheServerGoesOn() throws Exception {
        byte[] big = new byte[HttpGuard.MAX_BODY + 1];
        java.util.Arrays.fill(big, (byte) 'x');
        HttpResponse<String> r = http.send(request("Authorization", bearer())
                .POST(HttpRequest.BodyPublishers.ofByteArray(big)).build(), HttpResponse.BodyHandlers.ofString());
        assertThat(r.statusCode()).isEqualTo(413);
        assertThat(error(r).path("message").asText()).contains("more than " + HttpGuard.MAX_BODY);

        // a body without a length (chunked) is cut off at the bound by the SDK's reader
        HttpResponse<String> chunked = http.send(request("Authorization", bearer())
                .POST(HttpRequest.BodyPublishers.ofInputStream(() -> new java.io.ByteArrayInputStream(big))).build(),
                HttpResponse.BodyHandlers.ofString());
        assertThat(chunked.statusCode()).isEqualTo(413);
        session();
    }

    @Test
    void atMostTheBoundOfSessionsAreOpenAtOnce() throws Exception {
        List<String> ids = new ArrayList<>();
        for (int i = 0; i < HttpGuard.MAX_SESSIONS; i++) {
            ids.add(session());
        }
        HttpResponse<String> over = post(initialize(), "Authorization", bearer());
        assertThat(over.statusCode()).isEqualTo(503);
        assertThat(error(over).path("message").asText()).contains("too many MCP sessions: " + HttpGuard.MAX_SESSIONS);
        // the sessions open still serve, and deleting one makes room
        assertThat(call(ids.getFirst(), "list_sandboxes", "{}").has("sandboxes")).isTrue();
        assertThat(delete(ids.getFirst()).statusCode()).isEqualTo(200);
        session();
    }

    @Test
    void deletingASessionRemovesTheSandboxesItMadeAndDidNotKeep() throws Exception {
        String a = session();
        String b = session();
        String made = call(a, "create_sandbox", "{\"workspace\":\"none\"}").path("id").asText();
        String kept = call(a, "create_sandbox", "{\"workspace\":\"none\",\"keep\":true}").path("id").asText();
        String others = call(b, "create_sandbox", "{\"workspace\":\"none\"}").path("id").asText();
        assertThat(backend.creates).extracting(McpBackend.CreateSpec::createdBy).containsOnly("mcp:test-client");
        // one session cannot remove another's sandbox
        assertThat(call(b, "remove_sandbox", "{\"sandbox\":\"" + made + "\"}").path("error").asText())
                .contains("not made by this MCP session");

        assertThat(delete(a).statusCode()).isEqualTo(200);
        long deadline = System.nanoTime() + 10_000_000_000L;
        while (!calls().contains("remove " + made) && System.nanoTime() < deadline) {
            Thread.sleep(20);
        }
        assertThat(calls()).contains("remove " + made).doesNotContain("remove " + kept, "remove " + others);
        assertThat(server.openSessions()).isEqualTo(1);
        // the deleted session is gone for the SDK too
        HttpResponse<String> after = post("{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tools/list\"}",
                "Authorization", bearer(), "Mcp-Session-Id", a);
        assertThat(after.statusCode()).isEqualTo(404);

        server.stop();
        assertThat(calls()).contains("remove " + others).doesNotContain("remove " + kept);
        assertThat(log).anyMatch(l -> l.contains("ended (the server stopped)"));
    }

    /**
     * The SDK starts a session for any initialize, whatever Mcp-Session-Id it carries: such a request must not get
     * past the bound of sessions (it is counted only without the header), so an id this server does not hold is a
     * 404 before the SDK sees it, as the spec answers a session that ended.
     */
    @Test
    void anInitializeCarryingAnUnknownSessionIdIsANotFoundAndOpensNoSession() throws Exception {
        for (int i = 0; i < HttpGuard.MAX_SESSIONS + 4; i++) {
            HttpResponse<String> r = post(initialize(), "Authorization", bearer(), "Mcp-Session-Id", "made-up-" + i);
            assertThat(r.statusCode()).as(r.body()).isEqualTo(404);
            assertThat(error(r).path("message").asText()).contains("no MCP session made-up-…", "ended");
        }
        assertThat(server.openSessions()).isZero();
        session(); // and a proper one still opens
    }

    /**
     * A client that went away without deleting its session (killed, restarted) would hold a slot and its sandboxes
     * until the server stops: a session with no request for the idle bound is ended, its sandboxes not kept
     * removed, and its id is then a 404. One that was just used is not.
     */
    @Test
    void aSessionIdleForTheBoundIsEndedWithItsSandboxesAndOneJustUsedIsNot() throws Exception {
        String idle = session();
        String made = call(idle, "create_sandbox", "{\"workspace\":\"none\"}").path("id").asText();
        assertThat(server.sweepIdle(java.time.Duration.ofHours(1))).as("used a moment ago").isZero();
        Thread.sleep(50);
        assertThat(server.sweepIdle(java.time.Duration.ofMillis(10))).isEqualTo(1);
        long deadline = System.nanoTime() + 10_000_000_000L;
        while (!calls().contains("remove " + made) && System.nanoTime() < deadline) {
            Thread.sleep(20);
        }
        assertThat(calls()).contains("remove " + made);
        assertThat(log).anyMatch(l -> l.contains("ended (idle for 0 minutes)"));
        HttpResponse<String> after = post("{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tools/list\"}",
                "Authorization", bearer(), "Mcp-Session-Id", idle);
        assertThat(after.statusCode()).isEqualTo(404);
        assertThat(server.openSessions()).isZero();
    }
}
