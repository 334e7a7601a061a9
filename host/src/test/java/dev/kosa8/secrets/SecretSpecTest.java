package dev.kosa8.secrets;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Instant;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class SecretSpecTest {
    private static final Instant T = Instant.parse("2026-01-02T03:04:05Z");

    private static SecretSpec spec(String name, String host, String header, String env) {
        return SecretSpec.of(name, host, header, env, T, "file");
    }

    @Test
    void defaultsToBearerOnPort443WithTheNameAsEnv() {
        SecretSpec s = spec("OPENAI_API_KEY", "API.OpenAI.com", null, null);
        assertThat(s.host()).isEqualTo("api.openai.com");
        assertThat(s.port()).isEqualTo(443);
        assertThat(s.header()).isEqualTo("Authorization: Bearer {}");
        assertThat(s.env()).isEqualTo("OPENAI_API_KEY");
        assertThat(s.authority()).isEqualTo("api.openai.com");
        assertThat(s.headerName()).isEqualTo("Authorization");
        assertThat(s.headerValue("sk-abc")).isEqualTo("Bearer sk-abc");
    }

    @Test
    void takesAPortACustomHeaderAndAnotherEnv() {
        SecretSpec s = spec("anthropic", "api.anthropic.com:8443", "x-api-key: {}", "ANTHROPIC_API_KEY");
        assertThat(s.port()).isEqualTo(8443);
        assertThat(s.authority()).isEqualTo("api.anthropic.com:8443");
        assertThat(s.headerName()).isEqualTo("x-api-key");
        assertThat(s.headerValue("k")).isEqualTo("k");
        assertThat(s.env()).isEqualTo("ANTHROPIC_API_KEY");
        assertThat(spec("T", "h.example", "Authorization: token {}!", null).headerValue("v")).isEqualTo("token v!");
    }

    @ParameterizedTest
    @ValueSource(strings = {"_", "a", "GH_TOKEN", "_x9", "A123456789012345678901234567890123456789012345678901234567890123"})
    void acceptsNames(String name) {
        assertThat(spec(name, "h.example", null, null).name()).isEqualTo(name);
    }

    @ParameterizedTest
    @ValueSource(strings = {"", "9LIVES", "MY-KEY", "A B", "ключ", "a.b", "$X",
        "A1234567890123456789012345678901234567890123456789012345678901234"})
    void refusesNames(String name) {
        assertThatThrownBy(() -> spec(name, "h.example", null, null)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("bad secret name");
    }

    @Test
    void refusesBadEnvNames() {
        assertThatThrownBy(() -> spec("K", "h.example", null, "1X")).hasMessageContaining("environment variable");
        assertThatThrownBy(() -> spec("K", "h.example", null, "A=B")).hasMessageContaining("environment variable");
    }

    @ParameterizedTest
    @ValueSource(strings = {"localhost", "api.github.com", "API.GITHUB.COM.", "my_svc.internal", "a-b.example:1"})
    void acceptsHosts(String host) {
        assertThat(spec("K", host, null, null).host()).isEqualTo(host.toLowerCase().replaceAll("\\.?(:\\d+)?$", ""));
    }

    @Test
    void refusesWildcardsAddressesAndNonNames() {
        assertThatThrownBy(() -> spec("K", "*.openai.com", null, null)).hasMessageContaining("wildcard");
        assertThatThrownBy(() -> spec("K", "10.0.0.1", null, null)).hasMessageContaining("IP address");
        assertThatThrownBy(() -> spec("K", "10.0.0.1:443", null, null)).hasMessageContaining("IP address");
        assertThatThrownBy(() -> spec("K", "[::1]:443", null, null)).hasMessageContaining("IP address");
        assertThatThrownBy(() -> spec("K", "::1", null, null)).hasMessageContaining("IP address");
        assertThatThrownBy(() -> spec("K", "api openai.com", null, null)).hasMessageContaining("not a DNS name");
        assertThatThrownBy(() -> spec("K", "https://api.openai.com", null, null))
                .isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> spec("K", "api.openai.com/v1", null, null)).hasMessageContaining("not a DNS name");
        assertThatThrownBy(() -> spec("K", "", null, null)).hasMessageContaining("needs the host");
        assertThatThrownBy(() -> spec("K", "h.example:0", null, null)).hasMessageContaining("bad port");
        assertThatThrownBy(() -> spec("K", "h.example:65536", null, null)).hasMessageContaining("bad port");
        assertThatThrownBy(() -> spec("K", "h.example:x", null, null)).hasMessageContaining("bad port");
        assertThatThrownBy(() -> spec("K", "h.example:", null, null)).hasMessageContaining("bad port");
    }

    @ParameterizedTest
    @ValueSource(strings = {"Authorization: Bearer {}", "x-api-key: {}", "X-Goog-Api-Key: {}",
        "Authorization: Basic {}", "PRIVATE-TOKEN: {}"})
    void acceptsHeaders(String header) {
        assertThat(spec("K", "h.example", header, null).header()).isEqualTo(header);
    }

    @Test
    void refusesHeadersThatCouldSplitOrReframeARequest() {
        assertThatThrownBy(() -> spec("K", "h.example", "Authorization: Bearer {}\r\nX-Evil: 1", null))
                .hasMessageContaining("no line breaks");
        assertThatThrownBy(() -> spec("K", "h.example", "Authorization: Bearer {}\n", null))
                .hasMessageContaining("no line breaks");
        assertThatThrownBy(() -> spec("K", "h.example", "Authorization: Bearer\0{}", null))
                .hasMessageContaining("no line breaks");
        assertThatThrownBy(() -> spec("K", "h.example", "Authorization: Bearer", null)).hasMessageContaining("{}");
        assertThatThrownBy(() -> spec("K", "h.example", "Authorization: {} {}", null))
                .hasMessageContaining("exactly once");
        assertThatThrownBy(() -> spec("K", "h.example", "Authorization:Bearer {}", null))
                .hasMessageContaining("Name: value");
        assertThatThrownBy(() -> spec("K", "h.example", "Bad Name: {}", null)).hasMessageContaining("Name: value");
        assertThatThrownBy(() -> spec("K", "h.example", ": {}", null)).hasMessageContaining("Name: value");
        assertThatThrownBy(() -> spec("K", "h.example", "Host: {}", null)).hasMessageContaining("frames or routes");
        assertThatThrownBy(() -> spec("K", "h.example", "content-length: {}", null))
                .hasMessageContaining("frames or routes");
        assertThatThrownBy(() -> spec("K", "h.example", "Authorization:  Bearer {}", null))
                .hasMessageContaining("one space");
    }

    @Test
    void refusesUnknownStoresAndMissingTimes() {
        assertThatThrownBy(() -> SecretSpec.of("K", "h.example", null, null, T, "vault"))
                .hasMessageContaining("unknown secret store 'vault'");
        assertThatThrownBy(() -> SecretSpec.of("K", "h.example", null, null, null, "file"))
                .hasMessageContaining("time");
    }

    @Test
    void storedInKeepsEverythingButTheStoreAndTime() {
        SecretSpec s = spec("K", "h.example:8443", "x-key: {}", "E");
        Instant later = T.plusSeconds(60);
        assertThat(s.storedIn("keychain", later))
                .isEqualTo(new SecretSpec("K", "h.example", 8443, "x-key: {}", "E", later, "keychain"));
    }
}
