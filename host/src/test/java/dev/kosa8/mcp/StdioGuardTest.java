package dev.kosa8.mcp;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.modelcontextprotocol.json.jackson2.JacksonMcpJsonMapper;
import io.modelcontextprotocol.spec.McpSchema;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.List;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import org.junit.jupiter.api.Test;

class StdioGuardTest {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final JacksonMcpJsonMapper MAPPER = new JacksonMcpJsonMapper(JSON);
    private static final String LIST = "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/list\"}";

    /** What the SDK's reader gets from {@code input}, and the answers the guard wrote. */
    record Run(String passed, List<JsonNode> answers) {
    }

    private static Run run(byte[] input, int maxLine) throws IOException {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        StdioGuard g = new StdioGuard(new ByteArrayInputStream(input), out, MAPPER, maxLine);
        String passed = new String(g.readAllBytes(), StandardCharsets.UTF_8);
        List<JsonNode> answers = out.toString(StandardCharsets.UTF_8).lines().map(l -> {
            try {
                return JSON.readTree(l);
            } catch (IOException e) {
                throw new AssertionError("the guard wrote a line that is not JSON: " + l, e);
            }
        }).toList();
        return new Run(passed, answers);
    }

    private static Run run(String input) throws IOException {
        return run(input.getBytes(StandardCharsets.UTF_8), StdioGuard.MAX_LINE);
    }

    @Test
    void goodLinesPassAndBadOnesAreAnsweredAndDropped() throws IOException {
        Run r = run("{not json\n" + LIST + "\n[1,2]\n{\"jsonrpc\":\"2.0\",\"id\":\"x\",\"params\":{}}\n\n  \n"
                + LIST + " {}\n" + LIST + "\r\n");
        assertThat(r.passed()).isEqualTo(LIST + "\n" + LIST + "\n");
        assertThat(r.answers()).extracting(a -> a.path("error").path("code").asInt())
                .containsExactly(McpSchema.ErrorCodes.PARSE_ERROR, McpSchema.ErrorCodes.INVALID_REQUEST,
                        McpSchema.ErrorCodes.INVALID_REQUEST, McpSchema.ErrorCodes.PARSE_ERROR);
        assertThat(r.answers().get(0).get("id").isNull()).isTrue();
        assertThat(r.answers().get(2).get("id").asText()).isEqualTo("x");
        assertThat(r.answers()).allMatch(a -> a.path("jsonrpc").asText().equals("2.0"));
    }

    @Test
    void aLineAtTheBoundPassesAndOneByteLongerIsAnsweredAndSkippedWhole() throws IOException {
        String padded = LIST.substring(0, LIST.length() - 1) + ",\"pad\":\"" + "x".repeat(50) + "\"}";
        Run atBound = run((padded + "\n").getBytes(StandardCharsets.UTF_8), padded.length());
        assertThat(atBound.passed()).isEqualTo(padded + "\n");
        assertThat(atBound.answers()).isEmpty();

        Run past = run((padded + "\n" + LIST + "\n").getBytes(StandardCharsets.UTF_8), padded.length() - 1);
        assertThat(past.passed()).isEqualTo(LIST + "\n");
        assertThat(past.answers()).singleElement().satisfies(a -> assertThat(a.path("error").path("message").asText())
                .contains("too large"));
    }

    @Test
    void theEndOfStdinEndsTheSessionEvenAfterAnUnfinishedLongLine() throws Exception {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        StdioGuard g = new StdioGuard(new ByteArrayInputStream("x".repeat(100).getBytes()), out, MAPPER, 10);
        assertThat(g.read()).isEqualTo(-1);
        g.awaitEnd();
        assertThat(out.toString()).contains("too large");
    }

    @Provide
    Arbitrary<List<String>> lines() {
        Arbitrary<String> junk = Arbitraries.strings().all().ofMaxLength(200);
        Arbitrary<String> jsonish = Arbitraries.of("{", "}", "[", "]", "\"jsonrpc\":\"2.0\"", "\"id\":", "1", "\"a\"",
                "\"method\":", "\"tools/call\"", "\"params\":", ",", ":", "null", "true", "\\", "\r", " ", "\u2028")
                .list().ofMaxSize(30).map(l -> String.join("", l));
        return Arbitraries.oneOf(junk, jsonish).list().ofMaxSize(20);
    }

    /**
     * Whatever a client sends, the guard never throws; every line it passes is a message the SDK reads, with no
     * line break inside; it answers each line it drops at most once, with a JSON-RPC error.
     */
    @Property(tries = 500)
    void anyInputIsPassedAsMessagesTheSdkReadsOrAnsweredWithErrors(@ForAll("lines") List<String> lines)
            throws IOException {
        String input = String.join("\n", lines) + "\n";
        Run r = run(input.getBytes(StandardCharsets.UTF_8), 4096);
        List<String> passed = r.passed().lines().toList();
        for (String p : passed) {
            assertThat(p).doesNotContain("\r");
            McpSchema.deserializeJsonRpcMessage(MAPPER, p);
        }
        long nonBlank = java.util.Arrays.stream(input.split("\n")).filter(l -> !l.replace('\r', ' ').isBlank())
                .count();
        assertThat(passed.size() + r.answers().size()).isLessThanOrEqualTo((int) nonBlank);
        assertThat(r.answers()).allSatisfy(a -> assertThat(a.path("error").path("code").asInt()).isNegative());
    }

    @Property(tries = 200)
    void arbitraryBytesNeverBreakTheGuard(@ForAll byte[] bytes) throws IOException {
        Run r = run(bytes, 64);
        for (String p : r.passed().lines().toList()) {
            McpSchema.deserializeJsonRpcMessage(MAPPER, p);
        }
    }
}
