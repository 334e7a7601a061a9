package dev.kosa8.egress;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.kosa8.host.KosaException;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * For tests only: lets the broker reach servers on the host's loopback, which
 * the shipped defaults refuse. Read, when a sandbox's broker starts, from the
 * JSON file named by the daemon's environment variable {@value #ENVIRONMENT};
 * unset (the default) or a missing file means none of this exists. The guest
 * cannot reach the daemon's environment, and nothing it sends is read as a
 * setting. A guest can write its workspace, so a broker refuses to start while
 * the settings file or the CA it names lies inside any sandbox's workspace
 * ({@link #refuseInside}): a guest could otherwise turn test settings on for
 * itself, or map an allowed name to a service on the host's loopback.
 *
 * <pre>{"loopback": {"api.test:443": 38443},   // dial 127.0.0.1:38443 for api.test:443, past the address check
 *  "resolve":  {"rebind.test": "127.0.0.1"}, // what the name resolves to; the address check still applies
 *  "trustedCa": "/path/test-ca.pem"}         // also trusted when verifying upstream TLS</pre>
 */
public record EgressTestSettings(Map<String, Integer> loopback, Map<String, String> resolve,
                                 Optional<Path> trustedCa, List<Path> files) {
    public static final String ENVIRONMENT = "KOSA8_EGRESS_TEST_CONFIG";
    public static final EgressTestSettings NONE = new EgressTestSettings(Map.of(), Map.of(), Optional.empty());

    /**
     * @param files what the settings were read from (the settings file, the trusted CA): none may lie in a guest's
     *              reach
     */
    public EgressTestSettings {
        loopback = Map.copyOf(loopback);
        resolve = Map.copyOf(resolve);
        files = List.copyOf(files);
    }

    public EgressTestSettings(Map<String, Integer> loopback, Map<String, String> resolve, Optional<Path> trustedCa) {
        this(loopback, resolve, trustedCa, trustedCa.map(List::of).orElse(List.of()));
    }

    /**
     * Refuses when a file these settings come from lies inside {@code workspace}, a folder a guest can write
     * (through symbolic links too: both sides are compared as real paths).
     */
    public void refuseInside(Path workspace, String sandboxId) {
        refuse(workspace, "the workspace of sandbox " + sandboxId);
    }

    /** As {@link #refuseInside(Path, String)}, for the folder a sandbox about to be made would share. */
    public void refuseInNew(Path workspace) {
        refuse(workspace, "the folder the new sandbox would share");
    }

    private void refuse(Path workspace, String whose) {
        if (!enabled() || workspace == null || workspace.toString().isEmpty()) {
            return;
        }
        RealPaths.firstInside(files, workspace).ifPresent(f -> {
            throw new KosaException(KosaException.Kind.USAGE, "the egress test settings (" + ENVIRONMENT
                    + ") read " + f + ", which is inside " + whose + " (" + workspace
                    + "): its guest could write them and open its own network",
                    "keep test settings and their CA outside every workspace, or unset " + ENVIRONMENT);
        });
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
            Optional<Path> trusted = ca.isEmpty() ? Optional.empty() : Optional.of(Path.of(ca));
            List<Path> files = new java.util.ArrayList<>(List.of(path));
            trusted.ifPresent(files::add);
            return new EgressTestSettings(loopback, resolve, trusted, files);
        } catch (IOException | RuntimeException e) {
            throw new KosaException(KosaException.Kind.USAGE, "cannot read the egress test settings " + path + ": "
                    + e.getMessage(), "unset " + ENVIRONMENT + " outside tests");
        }
    }
}
