package dev.kosa8.mcp;

import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.ObjectReader;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.modelcontextprotocol.json.McpJsonMapper;
import io.modelcontextprotocol.spec.McpSchema;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.CountDownLatch;

/**
 * Stands between the client's stdin and the MCP SDK's stdio transport, which stops reading for good at the first
 * line it cannot read as a JSON-RPC message (the server would go deaf). Each line the client sends is read here,
 * within a bound, and checked as the SDK will read it; a good line is passed on, a bad one answered here with a
 * JSON-RPC error (parse error, invalid request, or too large) and dropped, and the session goes on. Blank lines
 * are skipped. The end of stdin is the end of the session: {@link #awaitEnd} returns.
 *
 * <p>Errors are written to the same stream as the SDK's answers, under the same lock the SDK takes for each
 * message it writes (the stream itself), so no two messages interleave.
 */
public final class StdioGuard extends InputStream {
    /** The longest line read: more than 4 MiB of content in base64 inside JSON, with room for escapes. */
    public static final int MAX_LINE = 32 * 1024 * 1024;

    private static final ObjectMapper JSON = new ObjectMapper();
    private static final ObjectReader STRICT = JSON.readerFor(JsonNode.class)
            .with(DeserializationFeature.FAIL_ON_TRAILING_TOKENS);

    private final InputStream in;
    private final OutputStream out;
    private final McpJsonMapper mapper;
    private final int maxLine;
    private final CountDownLatch ended = new CountDownLatch(1);
    private byte[] line = new byte[0];
    private int pos;

    public StdioGuard(InputStream in, OutputStream out, McpJsonMapper mapper, int maxLine) {
        this.in = in;
        this.out = out;
        this.mapper = mapper;
        this.maxLine = maxLine;
    }

    @Override
    public int read() throws IOException {
        if (!fill()) {
            return -1;
        }
        return line[pos++] & 0xff;
    }

    @Override
    public int read(byte[] b, int off, int len) throws IOException {
        if (len == 0) {
            return 0;
        }
        if (!fill()) {
            return -1;
        }
        int n = Math.min(len, line.length - pos);
        System.arraycopy(line, pos, b, off, n);
        pos += n;
        return n;
    }

    /** Makes sure a good line is at hand; false at the end of stdin. */
    private boolean fill() throws IOException {
        while (pos >= line.length) {
            byte[] raw = readLine();
            if (raw == null) {
                ended.countDown();
                return false;
            }
            String checked = check(raw);
            if (checked != null) {
                line = (checked + "\n").getBytes(StandardCharsets.UTF_8);
                pos = 0;
            }
        }
        return true;
    }

    /** Waits for the end of stdin. */
    public void awaitEnd() throws InterruptedException {
        ended.await();
    }

    /** One line without its newline, within the bound (a longer one is answered and skipped); null at the end. */
    private byte[] readLine() throws IOException {
        while (true) {
            ByteArrayOutputStream buf = new ByteArrayOutputStream();
            boolean tooLong = false;
            int b;
            while ((b = in.read()) >= 0 && b != '\n') {
                if (buf.size() < maxLine) {
                    buf.write(b);
                } else {
                    tooLong = true;
                }
            }
            if (b < 0 && buf.size() == 0 && !tooLong) {
                return null;
            }
            if (!tooLong) {
                return buf.toByteArray();
            }
            answer(null, McpSchema.ErrorCodes.INVALID_REQUEST, "message too large: more than " + maxLine
                    + " bytes on one line; it was dropped (a file tool takes at most 4 MiB of content a call)");
            if (b < 0) {
                return null;
            }
        }
    }

    /**
     * The line as the SDK may read it, or null when it is blank or was answered with an error here. A carriage
     * return is whitespace to JSON but a line end to the SDK's reader, so it goes.
     */
    String check(byte[] raw) {
        String text = new String(raw, StandardCharsets.UTF_8).replace('\r', ' ').strip();
        if (text.isEmpty()) {
            return null;
        }
        JsonNode node;
        try {
            node = STRICT.readValue(text);
        } catch (IOException | RuntimeException e) {
            answer(null, McpSchema.ErrorCodes.PARSE_ERROR, "not JSON: " + firstLine(e.getMessage()));
            return null;
        }
        if (!(node instanceof ObjectNode)) {
            answer(null, McpSchema.ErrorCodes.INVALID_REQUEST, "a JSON-RPC message is a JSON object");
            return null;
        }
        JsonNode id = node.get("id");
        Object replyId = id != null && (id.isTextual() || id.isIntegralNumber()) ? (id.isTextual() ? id.asText()
                : id.numberValue()) : null;
        try {
            McpSchema.deserializeJsonRpcMessage(mapper, text);
        } catch (IOException | RuntimeException e) {
            answer(replyId, McpSchema.ErrorCodes.INVALID_REQUEST, "not a JSON-RPC 2.0 request, notification or"
                    + " response: " + firstLine(e.getMessage()));
            return null;
        }
        return text;
    }

    private static String firstLine(String s) {
        if (s == null) {
            return "";
        }
        String l = s.lines().findFirst().orElse("");
        return l.length() > 200 ? l.substring(0, 200) + "…" : l;
    }

    /** Writes a JSON-RPC error response (id null when the request's is unknown). */
    private void answer(Object id, int code, String message) {
        ObjectNode r = JSON.createObjectNode();
        r.put("jsonrpc", "2.0");
        r.set("id", JSON.valueToTree(id));
        ObjectNode e = r.putObject("error");
        e.put("code", code);
        e.put("message", message);
        try {
            byte[] bytes = (JSON.writeValueAsString(r) + "\n").getBytes(StandardCharsets.UTF_8);
            synchronized (out) {
                out.write(bytes);
                out.flush();
            }
        } catch (IOException ignored) {
            // the client is gone; the end of its stdin ends the session
        }
    }
}
