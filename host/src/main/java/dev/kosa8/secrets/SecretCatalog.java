package dev.kosa8.secrets;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.kosa8.host.KosaException;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Instant;
import java.util.Collection;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;

/**
 * {@code secrets.json}: the specs of all secrets, whichever backend holds
 * their values, and never a value. Mode 0600 all the same, because which APIs
 * a user has keys for is nobody else's business. Fields are written by name
 * rather than by reflection, so the file's format changes only when this
 * class does.
 */
final class SecretCatalog {
    static final String FILE = "secrets.json";
    private static final String FORMAT = "kosa8-secrets";
    private static final int VERSION = 1;
    private static final ObjectMapper JSON = new ObjectMapper();

    private final Path file;

    SecretCatalog(Path directory) {
        this.file = directory.resolve(FILE);
    }

    Path file() {
        return file;
    }

    /** The specs by name; empty when there is no catalog yet. */
    Map<String, SecretSpec> read() {
        Map<String, SecretSpec> specs = new TreeMap<>();
        Optional<byte[]> bytes = PrivateFile.read(file, false);
        if (bytes.isEmpty()) {
            return specs;
        }
        try {
            JsonNode root = JSON.readTree(bytes.get());
            if (root == null || !FORMAT.equals(root.path("format").asText()) || root.path("version").asInt() != VERSION
                    || !root.path("secrets").isArray()) {
                throw new IOException("not a version " + VERSION + " " + FORMAT + " file");
            }
            for (JsonNode s : root.path("secrets")) {
                SecretSpec spec = new SecretSpec(text(s, "name"), text(s, "host"), s.path("port").asInt(-1),
                        text(s, "header"), text(s, "env"), Instant.parse(text(s, "setAt")), text(s, "store"));
                specs.put(spec.name(), spec);
            }
            return specs;
        } catch (IOException | RuntimeException e) {
            throw new KosaException(KosaException.Kind.HOST, "cannot read the list of secrets " + file + ": "
                    + e.getMessage(), "fix it, or move it away and set the secrets again with `kosa8 secret set`");
        }
    }

    void write(Collection<SecretSpec> specs) {
        ObjectNode root = JSON.createObjectNode().put("format", FORMAT).put("version", VERSION);
        ArrayNode list = root.putArray("secrets");
        for (SecretSpec s : specs) {
            list.addObject().put("name", s.name()).put("host", s.host()).put("port", s.port())
                    .put("header", s.header()).put("env", s.env()).put("setAt", s.setAt().toString())
                    .put("store", s.store());
        }
        try {
            PrivateFile.write(file, JSON.writerWithDefaultPrettyPrinter().writeValueAsBytes(root));
        } catch (IOException e) {
            throw new KosaException(KosaException.Kind.INTERNAL, "cannot encode the list of secrets", "", e);
        }
    }

    private static String text(JsonNode n, String field) throws IOException {
        JsonNode v = n.get(field);
        if (v == null || !v.isTextual()) {
            throw new IOException("a secret without '" + field + "'");
        }
        return v.asText();
    }
}
