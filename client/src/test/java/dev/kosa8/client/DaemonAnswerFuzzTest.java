package dev.kosa8.client;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;

/**
 * Whatever bytes come back on the daemon's socket, the SDK answers with a value or a {@link Kosa8Exception},
 * never another exception and never a hang: the answer's head and JSON are read within their bounds.
 */
class DaemonAnswerFuzzTest {

    @Property(tries = 300)
    void anyAnswerIsAValueOrAKosa8Exception(@ForAll("answers") byte[] answer) throws Exception {
        Path dir = Files.createTempDirectory("fuzz");
        try (OneShotServer s = new OneShotServer(dir, answer)) {
            try {
                Object v = new DaemonConnection(s.socket(), "").call("GET", "/v1/x");
                assertThat(v).isNotNull();
            } catch (Kosa8Exception expected) {
                assertThat(expected.getMessage()).isNotBlank();
            }
        } finally {
            Files.deleteIfExists(dir);
        }
    }

    @Provide
    Arbitrary<byte[]> answers() {
        Arbitrary<String> status = Arbitraries.of("HTTP/1.1 200 OK", "HTTP/1.1 404 X", "HTTP/1.0 999 Y", "HTTP/2 200",
                "HTTP/1.1 abc", "HTTP/1.1", "", "\u0000\u00ff");
        Arbitrary<String> header = Arbitraries.of("Content-Length: 2", "Content-Length: 99999999999",
                "Content-Length: -1", "content-length:0", "Content-Length: x", "Kosa8-Sandbox: abc", ":", "a");
        Arbitrary<String> body = Arbitraries.of("{}", "[]", "{\"kind\":\"LIMIT\",\"error\":\"e\"}", "{", "[[[[[",
                "\"s\"", "nul", "{\"a\":" + "[".repeat(100) + "}", "");
        Arbitrary<byte[]> structured = net.jqwik.api.Combinators.combine(status, header.list().ofMaxSize(4), body)
                .as((s, h, b) -> (s + "\r\n" + String.join("\r\n", h) + "\r\n\r\n" + b).getBytes(StandardCharsets.UTF_8));
        Arbitrary<byte[]> raw = Arbitraries.bytes().array(byte[].class).ofMaxSize(300);
        return Arbitraries.oneOf(structured, raw);
    }
}
