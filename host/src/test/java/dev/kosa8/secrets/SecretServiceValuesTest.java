package dev.kosa8.secrets;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class SecretServiceValuesTest {
    @TempDir
    Path tmp;

    @Test
    void theValueIsNeverAnArgument() {
        // put(name, value) builds its command from the name alone; the value goes to standard input.
        assertThat(SecretServiceValues.storeCommand("OPENAI_API_KEY")).containsExactly("secret-tool", "store",
                "--label=kosa8 OPENAI_API_KEY", "application", "kosa8", "name", "OPENAI_API_KEY");
        assertThat(SecretServiceValues.lookupCommand("K"))
                .containsExactly("secret-tool", "lookup", "application", "kosa8", "name", "K");
        assertThat(SecretServiceValues.clearCommand("K"))
                .containsExactly("secret-tool", "clear", "application", "kosa8", "name", "K");
    }

    @Test
    void withoutASessionBusItSaysSoWithoutStartingAnything() {
        assertThat(SecretServiceValues.problem(Map.of(), Duration.ofSeconds(3)))
                .matches(p -> p.contains("DBUS_SESSION_BUS_ADDRESS is not set") || p.contains("not installed"));
    }

    @Test
    void roundTripsValuesThroughARealSecretService() throws Exception {
        assumeTrue(SecretServiceSession.available(),
                "needs " + SecretServiceSession.TOOLS + " (Debian: dbus gnome-keyring libsecret-tools)");
        try (SecretServiceSession session = SecretServiceSession.start(tmp.resolve("home"))) {
            Map<String, String> env = Map.of("DBUS_SESSION_BUS_ADDRESS", session.address());
            assertThat(SecretServiceValues.problem(env, Duration.ofSeconds(10))).isNull();

            SecretServiceValues v = new SecretServiceValues(env);
            String value = "sk-ant-api03-\"quoted\"\\back'slash`$(date)`~!";
            assertThat(v.get("K")).isEmpty();
            v.put("K", value);
            assertThat(v.get("K")).contains(value);
            v.put("K", "a-second-value");
            assertThat(v.get("K")).contains("a-second-value");
            v.remove("K");
            v.remove("K");
            assertThat(v.get("K")).isEmpty();

            // The store chooses it by itself ("auto") and keeps only the catalog on disk.
            Path config = tmp.resolve("config");
            SecretStore store = new SecretStore(config, env);
            assertThat(store.defaultStore()).isEqualTo("secret-service");
            assertThat(store.backendDescription()).startsWith("Secret Service");
            store.set(SecretSpec.of("GH_TOKEN", "api.github.com", null, null, Instant.now(), store.defaultStore()),
                    "ghp_0123456789abcdef");
            assertThat(new SecretStore(config, env).value("GH_TOKEN")).isEqualTo("ghp_0123456789abcdef");
            assertThat(Files.exists(config.resolve(FileSecretValues.FILE))).isFalse();
            assertThat(Files.readString(config.resolve(SecretCatalog.FILE))).doesNotContain("ghp_0123456789abcdef");
            store.remove("GH_TOKEN");
            assertThat(v.get("GH_TOKEN")).isEmpty();
        }
    }
}
