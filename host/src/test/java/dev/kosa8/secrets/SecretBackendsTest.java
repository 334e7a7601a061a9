package dev.kosa8.secrets;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.kosa8.host.KosaException;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.Test;

class SecretBackendsTest {
    private static final Path DIR = Path.of("/nonexistent/kosa8");

    private static SecretBackends on(String os, Map<String, String> env, String secretServiceProblem) {
        return new SecretBackends(DIR, env, os, e -> secretServiceProblem);
    }

    @Test
    void autoTakesTheSecretServiceWhenItAnswers() {
        var c = on("Linux", Map.of(), null).forNewSecrets();
        assertThat(c.values().id()).isEqualTo("secret-service");
        assertThat(c.why()).isEqualTo("one answers on this D-Bus session");
    }

    @Test
    void autoFallsBackToTheFileAndSaysWhy() {
        var c = on("Linux", Map.of("KOSA8_SECRET_STORE", "auto"), "no D-Bus session").forNewSecrets();
        assertThat(c.values().id()).isEqualTo("file");
        assertThat(c.why()).isEqualTo("no Secret Service: no D-Bus session");
        assertThat(c.values().description()).startsWith("file ").endsWith("secret-values.json (0600)");
    }

    @Test
    void autoOnAMacWithoutTheSecurityToolTakesTheFile() {
        // This test runs on Linux, where /usr/bin/security is missing: macOS without it falls back.
        var c = on("Mac OS X", Map.of(), null).forNewSecrets();
        assertThat(c.values().id()).isEqualTo("file");
        assertThat(c.why()).contains("/usr/bin/security is missing");
    }

    @Test
    void anExplicitChoiceIsTakenOrRefusedWithTheReason() {
        assertThat(on("Linux", Map.of("KOSA8_SECRET_STORE", "FILE"), null).forNewSecrets().values().id())
                .isEqualTo("file");
        assertThat(on("Linux", Map.of("KOSA8_SECRET_STORE", "secret-service"), null).forNewSecrets().why())
                .isEqualTo("KOSA8_SECRET_STORE=secret-service");
        assertThatThrownBy(() -> on("Linux", Map.of("KOSA8_SECRET_STORE", "secret-service"), "no D-Bus session")
                .forNewSecrets()).isInstanceOf(KosaException.class).hasMessageContaining("no D-Bus session");
        assertThatThrownBy(() -> on("Linux", Map.of("KOSA8_SECRET_STORE", "keychain"), null).forNewSecrets())
                .hasMessageContaining("macOS only");
        assertThatThrownBy(() -> on("Linux", Map.of("KOSA8_SECRET_STORE", "vault"), null).forNewSecrets())
                .isInstanceOf(KosaException.class).hasMessageContaining("unknown KOSA8_SECRET_STORE=vault")
                .satisfies(e -> assertThat(((KosaException) e).kind()).isEqualTo(KosaException.Kind.USAGE));
    }

    @Test
    void readingTheSecretServiceNeedsASessionBus() {
        assertThatThrownBy(() -> on("Linux", Map.of(), null).forReading("secret-service"))
                .hasMessageContaining("cannot be reached");
        assertThat(on("Linux", Map.of(), null).forReading("file").id()).isEqualTo("file");
    }
}
