package dev.kosa8.secrets;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.kosa8.host.KosaException;
import java.io.IOException;
import java.nio.file.Path;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;

/**
 * Secret values in one JSON file, {@code secret-values.json}, mode 0600 in a
 * directory of the user's: the backend that works everywhere, on a server
 * without a desktop keyring too. It protects values from other users of the
 * machine, not from the user's own processes; the sandbox is what keeps the
 * agent away from it. See {@link PrivateFile} for how it is read and written.
 */
final class FileSecretValues implements SecretValues {
    static final String ID = "file";
    static final String FILE = "secret-values.json";
    private static final String FORMAT = "kosa8-secret-values";
    private static final int VERSION = 1;
    private static final ObjectMapper JSON = new ObjectMapper();

    private final Path file;

    FileSecretValues(Path directory) {
        this.file = directory.resolve(FILE);
    }

    Path file() {
        return file;
    }

    @Override
    public String id() {
        return ID;
    }

    @Override
    public String description() {
        String home = System.getProperty("user.home");
        String shown = home != null && file.startsWith(home) ? "~/" + Path.of(home).relativize(file) : file.toString();
        return "file " + shown + " (0600)";
    }

    @Override
    public void put(String name, String value) {
        Map<String, String> values = read();
        values.put(name, value);
        write(values);
    }

    @Override
    public Optional<String> get(String name) {
        return Optional.ofNullable(read().get(name));
    }

    @Override
    public void remove(String name) {
        Map<String, String> values = read();
        if (values.remove(name) != null) {
            write(values);
        }
    }

    private Map<String, String> read() {
        Map<String, String> values = new TreeMap<>();
        Optional<byte[]> bytes = PrivateFile.read(file, true);
        if (bytes.isEmpty()) {
            return values;
        }
        try {
            JsonNode root = JSON.readTree(bytes.get());
            if (root == null || !FORMAT.equals(root.path("format").asText()) || root.path("version").asInt() != VERSION
                    || !root.path("values").isObject()) {
                throw new IOException("not a version " + VERSION + " " + FORMAT + " file");
            }
            for (var e : root.path("values").properties()) {
                if (!e.getValue().isTextual()) {
                    throw new IOException("the value of " + e.getKey() + " is not a string");
                }
                values.put(e.getKey(), e.getValue().asText());
            }
            return values;
        } catch (IOException e) {
            // Jackson's messages quote the input they choke on: never pass them on, they may hold a key.
            throw new KosaException(KosaException.Kind.HOST, "cannot read the secret values in " + file
                    + (e.getClass() == IOException.class ? ": " + e.getMessage() : ": it is not valid JSON"),
                    "fix or remove it, then set the secrets again with `kosa8 secret set`");
        }
    }

    private void write(Map<String, String> values) {
        ObjectNode root = JSON.createObjectNode().put("format", FORMAT).put("version", VERSION);
        ObjectNode v = root.putObject("values");
        values.forEach(v::put);
        try {
            PrivateFile.write(file, JSON.writerWithDefaultPrettyPrinter().writeValueAsBytes(root));
        } catch (IOException e) {
            throw new KosaException(KosaException.Kind.INTERNAL, "cannot encode the secret values", "", e);
        }
    }
}
