package dev.kosa8.egress;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.json.JsonMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.sun.net.httpserver.HttpExchange;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A stand-in for a model provider's Messages API (`POST /v1/messages`,
 * Anthropic's wire format, streamed as server-sent events or answered whole)
 * on a {@link TestUpstream}, for tests that run a real agent against it: the
 * model itself cannot run here. It is scripted, not clever: a request that
 * offers the tool {@code tool} and has no tool result yet is answered with one
 * call of that tool with {@code input}; every other request with a short
 * text and {@code end_turn}. It answers only requests that carry the real
 * key ({@code x-api-key}, or {@code Authorization: Bearer} for a token), as
 * the real API does, so an agent that reached it did so with what the broker
 * put on the wire, and it keeps every request's headers and body for the
 * test to read.
 */
public final class FakeMessagesApi {
    private static final JsonMapper JSON = JsonMapper.builder().build();

    /** One request as the API got it. */
    public record Request(String path, Map<String, List<String>> headers, JsonNode body) {
        public String header(String name) {
            return headers.entrySet().stream().filter(e -> e.getKey().equalsIgnoreCase(name))
                    .map(e -> e.getValue().getFirst()).findFirst().orElse(null);
        }
    }

    private final String key;
    private final String tool;
    private final JsonNode input;
    private final AtomicInteger ids = new AtomicInteger();
    /** Every request, in arrival order. */
    public final List<Request> requests = Collections.synchronizedList(new ArrayList<>());

    /**
     * Serves the API on {@code upstream}'s HTTPS port.
     *
     * @param key   the one key (or OAuth access token) it accepts
     * @param tool  the tool it asks for once, by name (e.g. {@code Bash})
     * @param input that call's input
     */
    public FakeMessagesApi(TestUpstream upstream, String key, String tool, Map<String, Object> input) {
        this.key = key;
        this.tool = tool;
        this.input = JSON.valueToTree(input);
        upstream.handle("/v1/messages", this::serve);
    }

    /** The requests that offered tools: the agent's own turns, not its side calls (titles, summaries). */
    public List<Request> turns() {
        synchronized (requests) {
            return requests.stream().filter(r -> r.body().path("tools").isArray()
                    && !r.body().path("tools").isEmpty()).toList();
        }
    }

    private void serve(HttpExchange x) throws IOException {
        byte[] raw = x.getRequestBody().readAllBytes();
        JsonNode body;
        try {
            body = raw.length == 0 ? JSON.createObjectNode() : JSON.readTree(raw);
        } catch (IOException e) {
            error(x, 400, "invalid_request_error", "the body is not JSON: " + e.getMessage());
            return;
        }
        Request r = new Request(x.getRequestURI().getPath(), Map.copyOf(x.getRequestHeaders()), body);
        requests.add(r);
        String apiKey = r.header("x-api-key");
        String auth = r.header("authorization");
        if (!key.equals(apiKey) && !("Bearer " + key).equals(auth)) {
            error(x, 401, "authentication_error", "invalid x-api-key");
            return;
        }
        if (r.path().endsWith("/count_tokens")) {
            reply(x, "application/json", "{\"input_tokens\":12}");
            return;
        }
        boolean callTool = offers(body, tool) && !hasToolResult(body);
        ObjectNode block = JSON.createObjectNode();
        if (callTool) {
            block.put("type", "tool_use").put("id", "toolu_fake" + ids.incrementAndGet()).put("name", tool);
        } else {
            block.put("type", "text");
        }
        String model = body.path("model").asText("claude-fake");
        String id = "msg_fake" + ids.incrementAndGet();
        String stop = callTool ? "tool_use" : "end_turn";
        if (!body.path("stream").asBoolean()) {
            ObjectNode whole = block.deepCopy();
            if (callTool) {
                whole.set("input", input);
            } else {
                whole.put("text", "Done.");
            }
            ObjectNode m = message(id, model, stop);
            m.putArray("content").add(whole);
            reply(x, "application/json", JSON.writeValueAsString(m));
            return;
        }
        x.getResponseHeaders().set("Content-Type", "text/event-stream");
        x.getResponseHeaders().set("Cache-Control", "no-cache");
        x.sendResponseHeaders(200, 0);
        try (OutputStream out = x.getResponseBody()) {
            ObjectNode start = message(id, model, null);
            start.putArray("content");
            event(out, "message_start", JSON.createObjectNode().put("type", "message_start").set("message", start));
            ObjectNode opened = block.deepCopy();
            if (callTool) {
                opened.putObject("input");
            } else {
                opened.put("text", "");
            }
            event(out, "content_block_start", JSON.createObjectNode().put("type", "content_block_start")
                    .put("index", 0).set("content_block", opened));
            ObjectNode delta = callTool
                    ? JSON.createObjectNode().put("type", "input_json_delta").put("partial_json",
                            JSON.writeValueAsString(input))
                    : JSON.createObjectNode().put("type", "text_delta").put("text", "Done.");
            event(out, "content_block_delta", JSON.createObjectNode().put("type", "content_block_delta")
                    .put("index", 0).set("delta", delta));
            event(out, "content_block_stop", JSON.createObjectNode().put("type", "content_block_stop").put("index", 0));
            ObjectNode md = JSON.createObjectNode().put("type", "message_delta");
            md.putObject("delta").put("stop_reason", stop).putNull("stop_sequence");
            md.putObject("usage").put("output_tokens", 9);
            event(out, "message_delta", md);
            event(out, "message_stop", JSON.createObjectNode().put("type", "message_stop"));
        }
    }

    private static ObjectNode message(String id, String model, String stop) {
        ObjectNode m = JSON.createObjectNode().put("id", id).put("type", "message").put("role", "assistant")
                .put("model", model);
        if (stop == null) {
            m.putNull("stop_reason");
        } else {
            m.put("stop_reason", stop);
        }
        m.putNull("stop_sequence");
        m.putObject("usage").put("input_tokens", 12).put("output_tokens", stop == null ? 1 : 9);
        return m;
    }

    private static boolean offers(JsonNode body, String tool) {
        for (JsonNode t : body.path("tools")) {
            if (tool.equals(t.path("name").asText())) {
                return true;
            }
        }
        return false;
    }

    private static boolean hasToolResult(JsonNode body) {
        for (JsonNode m : body.path("messages")) {
            for (JsonNode c : m.path("content")) {
                if ("tool_result".equals(c.path("type").asText())) {
                    return true;
                }
            }
        }
        return false;
    }

    private static void event(OutputStream out, String name, JsonNode data) throws IOException {
        out.write(("event: " + name + "\ndata: " + JSON.writeValueAsString(data) + "\n\n")
                .getBytes(StandardCharsets.UTF_8));
        out.flush();
    }

    private static void error(HttpExchange x, int status, String type, String message) throws IOException {
        ObjectNode e = JSON.createObjectNode().put("type", "error");
        e.putObject("error").put("type", type).put("message", message);
        byte[] b = JSON.writeValueAsBytes(e);
        x.getResponseHeaders().set("Content-Type", "application/json");
        x.sendResponseHeaders(status, b.length);
        try (OutputStream out = x.getResponseBody()) {
            out.write(b);
        }
    }

    private static void reply(HttpExchange x, String type, String body) throws IOException {
        byte[] b = body.getBytes(StandardCharsets.UTF_8);
        x.getResponseHeaders().set("Content-Type", type);
        x.sendResponseHeaders(200, b.length);
        try (OutputStream out = x.getResponseBody()) {
            out.write(b);
        }
    }
}
