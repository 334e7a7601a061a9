package dev.kosa8.egress;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.kosa8.host.KosaException;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;
import java.util.Optional;

/**
 * For tests only: lets the broker reach servers on the host's loopback, which
 * the shipped defaults refuse. Read, when a sandbox's broker starts, from the
 * JSON file named by the daemon's environment variable {@value #ENVIRONMENT};
 * unset (the default) or a missing file means none of this exists. The guest
 * cannot reach the daemon's environment, and nothing it sends is read as a
 * setting (the file must not be inside a sandbox's workspace, which a test
 * controls).
 *
 * <pre>{"loopback": {"api.test:443": 38443},   // dial 127.0.0.1:38443 for api.test:443, past the address check
 *  "resolve":  {"rebind.test": "127.0.0.1"}, // what the name resolves to; the address check still applies
 *  "trustedCa": "/path/test-ca.pem"}         // also trusted when verifying upstream TLS</pre>
 */
public record EgressTestSettings(Map<String, Integer> loopback, Map<String, String> resolve,
                                 Optional<Path> trustedCa) {
    public static final String ENVIRONMENT = "KOSA8_EGRESS_TEST_CONFIG";
    public static final EgressTestSettings NONE = new EgressTestSettings(Map.of(), Map.of(), Optional.empty());

    public EgressTestSettings {
        loopback = Map.copyOf(loopback);
        resolve = Map.copyOf(resolve);
    }

    public boolean enabled() {
        return !loopback.isEmpty() || !resolve.isEmpty() || trustedCa.isPresent();
    }

    /** The settings named by the environment, or {@link #NONE}. */
    public static EgressTestSettings fromEnvironment(Map<String, String> env) {
        String file = env.get(ENVIRONMENT);
        if (file == null || file.isBlank()) {
            return NONE;
        }
        Path path = Path.of(file);
        if (!Files.exists(path)) {
            return NONE;
        }
        try {
            JsonNode root = new ObjectMapper().readTree(Files.readAllBytes(path));
            Map<String, Integer> loopback = new HashMap<>();
            root.path("loopback").properties().forEach(e -> loopback.put(e.getKey().toLowerCase(java.util.Locale.ROOT),
                    e.getValue().asInt()));
            Map<String, String> resolve = new HashMap<>();
            root.path("resolve").properties().forEach(e -> resolve.put(e.getKey().toLowerCase(java.util.Locale.ROOT),
                    e.getValue().asText()));
            String ca = root.path("trustedCa").asText("");
            return new EgressTestSettings(loopback, resolve, ca.isEmpty() ? Optional.empty() : Optional.of(Path.of(ca)));
        } catch (IOException | RuntimeException e) {
            throw new KosaException(KosaException.Kind.USAGE, "cannot read the egress test settings " + path + ": "
                    + e.getMessage(), "unset " + ENVIRONMENT + " outside tests");
        }
    }
}
