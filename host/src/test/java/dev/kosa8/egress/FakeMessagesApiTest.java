package dev.kosa8.egress;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.json.JsonMapper;
import java.io.ByteArrayOutputStream;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyStore;
import java.security.cert.CertificateFactory;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import javax.net.ssl.SNIHostName;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLParameters;
import javax.net.ssl.SSLSocket;
import javax.net.ssl.TrustManagerFactory;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The scripted Messages API speaks the wire format an agent's client reads:
 * over TLS, with the key checked, a tool call streamed as server-sent events
 * in the order the API sends them, the turn after the tool's result ended
 * with text, and whole answers when not streamed.
 */
class FakeMessagesApiTest {
    private static final JsonMapper JSON = JsonMapper.builder().build();
    private static final String NAME = "api.anthropic.test";
    @TempDir
    Path dir;
    private TestUpstream upstream;
    private FakeMessagesApi api;

    @BeforeEach
    void serve() throws Exception {
        upstream = new TestUpstream(dir, NAME);
        api = new FakeMessagesApi(upstream, "sk-real-key", "Bash", Map.of("command", "echo hi > hello.txt"));
    }

    @AfterEach
    void stop() {
        upstream.close();
    }

    @Test
    void aRequestWithoutTheKeyIsRefusedAsTheRealApiRefusesIt() throws Exception {
        Response r = post("x-api-key: sk-placeholder", turn(false, false));
        assertThat(r.status()).isEqualTo(401);
        assertThat(JSON.readTree(r.body()).path("error").path("type").asText()).isEqualTo("authentication_error");
        assertThat(api.requests).singleElement().satisfies(q -> assertThat(q.header("x-api-key"))
                .isEqualTo("sk-placeholder"));
    }

    @Test
    void aTurnOfferingTheToolIsAnsweredWithOneStreamedCallOfIt() throws Exception {
        Response r = post("x-api-key: sk-real-key", turn(true, false));
        assertThat(r.status()).isEqualTo(200);
        List<String> names = new ArrayList<>();
        List<JsonNode> data = new ArrayList<>();
        for (String event : r.body().split("\n\n")) {
            if (event.isBlank()) {
                continue;
            }
            String[] lines = event.split("\n");
            assertThat(lines[0]).startsWith("event: ");
            assertThat(lines[1]).startsWith("data: ");
            names.add(lines[0].substring(7));
            data.add(JSON.readTree(lines[1].substring(6)));
        }
        assertThat(names).containsExactly("message_start", "content_block_start", "content_block_delta",
                "content_block_stop", "message_delta", "message_stop");
        for (int i = 0; i < names.size(); i++) {
            assertThat(data.get(i).path("type").asText()).as("each event's type is its name").isEqualTo(names.get(i));
        }
        JsonNode block = data.get(1).path("content_block");
        assertThat(block.path("type").asText()).isEqualTo("tool_use");
        assertThat(block.path("name").asText()).isEqualTo("Bash");
        assertThat(block.path("id").asText()).startsWith("toolu_");
        JsonNode delta = data.get(2).path("delta");
        assertThat(delta.path("type").asText()).isEqualTo("input_json_delta");
        assertThat(JSON.readTree(delta.path("partial_json").asText()).path("command").asText())
                .isEqualTo("echo hi > hello.txt");
        assertThat(data.get(4).path("delta").path("stop_reason").asText()).isEqualTo("tool_use");
        assertThat(api.turns()).hasSize(1);
    }

    @Test
    void theTurnAfterTheToolsResultEndsWithTextAndABearerTokenIsAKeyToo() throws Exception {
        Response r = post("authorization: Bearer sk-real-key", turn(true, true));
        assertThat(r.status()).isEqualTo(200);
        assertThat(r.body()).contains("\"text_delta\"", "\"end_turn\"").doesNotContain("tool_use\",\"id\"");
    }

    @Test
    void aSideCallOfferingNoToolsNotStreamedGetsTheWholeTextMessage() throws Exception {
        var body = (com.fasterxml.jackson.databind.node.ObjectNode) JSON.readTree(turn(false, false));
        body.remove("tools"); // as an agent's side calls (a title for the session) are
        Response r = post("x-api-key: sk-real-key", JSON.writeValueAsString(body));
        JsonNode m = JSON.readTree(r.body());
        assertThat(m.path("type").asText()).isEqualTo("message");
        assertThat(m.path("content").get(0).path("text").asText()).isEqualTo("Done.");
        assertThat(m.path("stop_reason").asText()).isEqualTo("end_turn");
        assertThat(api.turns()).as("not one of the agent's turns").isEmpty();
    }

    @Test
    void aTurnNotStreamedGetsTheWholeToolCall() throws Exception {
        JsonNode m = JSON.readTree(post("x-api-key: sk-real-key", turn(false, false)).body());
        JsonNode call = m.path("content").get(0);
        assertThat(call.path("type").asText()).isEqualTo("tool_use");
        assertThat(call.path("input").path("command").asText()).isEqualTo("echo hi > hello.txt");
        assertThat(m.path("stop_reason").asText()).isEqualTo("tool_use");
    }

    private static String turn(boolean stream, boolean afterTool) throws Exception {
        var body = JSON.createObjectNode().put("model", "claude-test").put("max_tokens", 100).put("stream", stream);
        body.putArray("tools").addObject().put("name", "Bash").putObject("input_schema").put("type", "object");
        var messages = body.putArray("messages");
        messages.addObject().put("role", "user").put("content", "create hello.txt containing hi");
        if (afterTool) {
            messages.addObject().put("role", "assistant").putArray("content").addObject().put("type", "tool_use")
                    .put("id", "toolu_1").put("name", "Bash").putObject("input");
            messages.addObject().put("role", "user").putArray("content").addObject().put("type", "tool_result")
                    .put("tool_use_id", "toolu_1").put("content", "");
        }
        return JSON.writeValueAsString(body);
    }

    record Response(int status, String body) {
    }

    /** One HTTP/1.1 POST over TLS, as a client that trusts the test CA and names the API's host. */
    private Response post(String authHeader, String body) throws Exception {
        KeyStore trust = KeyStore.getInstance("PKCS12");
        trust.load(null, null);
        try (InputStream pem = Files.newInputStream(upstream.caPem)) {
            trust.setCertificateEntry("ca", CertificateFactory.getInstance("X.509").generateCertificate(pem));
        }
        TrustManagerFactory tmf = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
        tmf.init(trust);
        SSLContext ssl = SSLContext.getInstance("TLS");
        ssl.init(null, tmf.getTrustManagers(), null);
        try (SSLSocket s = (SSLSocket) ssl.getSocketFactory().createSocket(InetAddress.getLoopbackAddress(),
                upstream.httpsPort())) {
            SSLParameters p = s.getSSLParameters();
            p.setServerNames(List.of(new SNIHostName(NAME)));
            p.setEndpointIdentificationAlgorithm("HTTPS");
            s.setSSLParameters(p);
            byte[] b = body.getBytes(StandardCharsets.UTF_8);
            OutputStream out = s.getOutputStream();
            out.write(("POST /v1/messages HTTP/1.1\r\nHost: " + NAME + "\r\n" + authHeader
                    + "\r\nanthropic-version: 2023-06-01\r\ncontent-type: application/json\r\nContent-Length: "
                    + b.length + "\r\nConnection: close\r\n\r\n").getBytes(StandardCharsets.US_ASCII));
            out.write(b);
            out.flush();
            ByteArrayOutputStream all = new ByteArrayOutputStream();
            s.getInputStream().transferTo(all);
            String text = all.toString(StandardCharsets.UTF_8);
            int end = text.indexOf("\r\n\r\n");
            int status = Integer.parseInt(text.substring(9, 12));
            String head = text.substring(0, end).toLowerCase();
            String rest = text.substring(end + 4);
            return new Response(status, head.contains("transfer-encoding: chunked") ? unchunk(rest) : rest);
        }
    }

    private static String unchunk(String s) {
        StringBuilder b = new StringBuilder();
        int i = 0;
        while (true) {
            int eol = s.indexOf("\r\n", i);
            int n = Integer.parseInt(s.substring(i, eol).strip(), 16);
            if (n == 0) {
                return b.toString();
            }
            b.append(s, eol + 2, eol + 2 + n);
            i = eol + 2 + n + 2;
        }
    }
}
