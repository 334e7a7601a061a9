package dev.kosa8.mcp;

import static org.assertj.core.api.Assertions.assertThat;

import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** The header checks of {@code kosa8 mcp --http}: examples of each, and their parsers fuzzed with what clients send. */
class HttpGuardTest {
    @Test
    void theBearerTokenIsReadFromTheAuthorizationHeaderInAnyCaseOfItsScheme() {
        assertThat(HttpGuard.bearer("Bearer abc-DEF_123.~+/==")).isEqualTo("abc-DEF_123.~+/==");
        assertThat(HttpGuard.bearer("bearer   tok")).isEqualTo("tok");
        assertThat(HttpGuard.bearer("BEARER tok ")).isEqualTo("tok");
        assertThat(HttpGuard.bearer(null)).isNull();
        assertThat(HttpGuard.bearer("")).isNull();
        assertThat(HttpGuard.bearer("Bearer")).isNull();
        assertThat(HttpGuard.bearer("Bearer ")).isNull();
        assertThat(HttpGuard.bearer("Basic dXNlcjpwYXNz")).isNull();
        assertThat(HttpGuard.bearer("Bearertok")).isNull();
        assertThat(HttpGuard.bearer("Bearer two words")).isNull();
        assertThat(HttpGuard.bearer("Bearer =abc")).isNull();
        assertThat(HttpGuard.bearer("Bearer ab=c")).isNull();
        assertThat(HttpGuard.bearer("Bearer " + "a".repeat(HttpGuard.MAX_HEADER))).isNull();
    }

    @ParameterizedTest
    @ValueSource(strings = {"http://localhost", "http://localhost:3000", "https://localhost:8443/", "http://127.0.0.1",
        "http://127.0.0.1:7480", "http://127.1.2.3:80", "http://[::1]:5173", "HTTP://LOCALHOST:3000"})
    void aPageOnThisMachinesLoopbackMayCall(String origin) {
        assertThat(HttpGuard.originAllowed(origin)).isTrue();
    }

    @ParameterizedTest
    @ValueSource(strings = {"http://evil.example", "https://evil.example:7480", "null", "", "file://",
        "http://localhost.evil.example", "http://127.0.0.1.evil.example", "http://evil.example#localhost",
        "http://user@localhost", "http://localhost:abc", "http://localhost:3000/path", "http://127.0.0.256",
        "http://127.0.0", "http://127.00.0.1", "http://0.0.0.0", "http://192.168.1.2", "http://[::2]",
        "http://[::1", "ws://localhost", "chrome-extension://abcdef", "http://localhost:3000 http://evil.example"})
    void aPageOfAnyOtherOriginMayNot(String origin) {
        assertThat(HttpGuard.originAllowed(origin)).as(origin).isFalse();
    }

    @Test
    void aRequestWithNoOriginIsAProgramsAndMayCall() {
        assertThat(HttpGuard.originAllowed(null)).isTrue();
    }

    @Test
    void theHostMustNameTheLoopback() {
        assertThat(HttpGuard.hostAllowed("127.0.0.1:7480")).isTrue();
        assertThat(HttpGuard.hostAllowed("localhost:7480")).isTrue();
        assertThat(HttpGuard.hostAllowed("[::1]:7480")).isTrue();
        assertThat(HttpGuard.hostAllowed("127.0.0.1")).isTrue();
        assertThat(HttpGuard.hostAllowed("evil.example:7480")).isFalse();
        assertThat(HttpGuard.hostAllowed("127.0.0.1:99999999")).isFalse();
        assertThat(HttpGuard.hostAllowed(null)).isFalse();
        assertThat(HttpGuard.hostAllowed("")).isFalse();
    }

    @Property(tries = 2000)
    void theBearerParserNeverThrowsAndAnswersOnlyAToken68TheHeaderEndsWith(@ForAll("headers") String header) {
        String token = HttpGuard.bearer(header);
        if (token != null) {
            assertThat(HttpGuard.isToken68(token)).isTrue();
            assertThat(header.strip()).endsWith(token);
            assertThat(header.strip().substring(0, 6)).isEqualToIgnoringCase("bearer");
        }
    }

    @Property(tries = 1000)
    void everyToken68IsReadBack(@ForAll("tokens") String token) {
        assertThat(HttpGuard.bearer("Bearer " + token)).isEqualTo(token);
    }

    @Property(tries = 2000)
    void theOriginAndHostParsersNeverThrowAndLetInOnlyLoopbackNames(@ForAll("origins") String origin) {
        boolean allowed = HttpGuard.originAllowed(origin);
        if (allowed) {
            String o = origin.strip().toLowerCase(java.util.Locale.ROOT);
            assertThat(o).matches("https?://(localhost|127\\.[0-9.]+|\\[::1\\])(:[0-9]{1,5})?/?");
        }
        HttpGuard.hostAllowed(origin);
    }

    @Provide
    Arbitrary<String> headers() {
        Arbitrary<String> junk = Arbitraries.strings().all().ofMaxLength(80);
        Arbitrary<String> parts = Arbitraries.of("Bearer", "bearer", "BEARER", "Basic", " ", "  ", "\t", "=", "==",
                "abc", "A-Z_0.9~+/", "\u00e9", ",", "\"", "Bearer ", "x").list().ofMaxSize(8)
                .map(l -> String.join("", l));
        return Arbitraries.oneOf(junk, parts);
    }

    @Provide
    Arbitrary<String> tokens() {
        return Arbitraries.strings().withChars("abcXYZ0189-._~+/").ofMinLength(1).ofMaxLength(64)
                .flatMap(t -> Arbitraries.strings().withChars('=').ofMaxLength(3).map(pad -> t + pad));
    }

    @Provide
    Arbitrary<String> origins() {
        Arbitrary<String> junk = Arbitraries.strings().all().ofMaxLength(80);
        Arbitrary<String> parts = Arbitraries.of("http://", "https://", "ws://", "localhost", "127.0.0.1", "127",
                ".", "0", "1", "255", "256", "[", "]", "::1", ":", "7480", "@", "evil.example", "/", "#", "?", " ",
                "LOCALHOST", "null").list().ofMaxSize(10).map(l -> String.join("", l));
        return Arbitraries.oneOf(junk, parts);
    }
}
