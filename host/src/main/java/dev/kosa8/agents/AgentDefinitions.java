package dev.kosa8.agents;

import com.fasterxml.jackson.core.JacksonException;
import com.fasterxml.jackson.core.JsonLocation;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.dataformat.toml.TomlMapper;
import dev.kosa8.host.KosaException;
import dev.kosa8.secrets.SecretSpec;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;
import java.util.regex.Pattern;

/**
 * The agents {@code kosa8 agent} knows: kosa8's own definitions ({@code claude}, {@code codex}, {@code gemini}, as
 * TOML files in this package's resources, named in {@code agents.list}) and the user's, {@code NAME.toml} in
 * {@code agents/} of kosa8's config directory, which add agents or replace kosa8's. Each file is TOML read with
 * Jackson's TOML module; every mistake is an error naming the file and the line (docs/agents.md, "Agent
 * definitions").
 */
public final class AgentDefinitions {
    /** The settings a definition may hold. */
    static final List<String> KEYS = List.of("description", "command", "resume", "dockerfile", "build_allow", "allow",
            "env", "secrets", "files");
    private static final String RESOURCES = "/dev/kosa8/agents/";
    private static final int MAX_BYTES = 64 * 1024;

    private final Path userDirectory;

    /** @param userDirectory where the user's own definitions are ({@code agents/} of kosa8's config directory) */
    public AgentDefinitions(Path userDirectory) {
        this.userDirectory = userDirectory;
    }

    /** Every agent's name, sorted: kosa8's and the user's. */
    public List<String> names() {
        TreeSet<String> names = new TreeSet<>(builtIn());
        if (Files.isDirectory(userDirectory)) {
            try (var s = Files.list(userDirectory)) {
                s.map(p -> p.getFileName().toString()).filter(f -> f.endsWith(".toml"))
                        .map(f -> f.substring(0, f.length() - ".toml".length()))
                        .filter(n -> AgentDefinition.NAME.matcher(n).matches()).forEach(names::add);
            } catch (IOException e) {
                // listed as unreadable when one is loaded
            }
        }
        return List.copyOf(names);
    }

    /** The agent's definition: the user's file when there is one, else kosa8's; an unknown name lists the known. */
    public AgentDefinition load(String name) {
        if (name == null || !AgentDefinition.NAME.matcher(name).matches() || !names().contains(name)) {
            throw new KosaException(KosaException.Kind.USAGE, "no agent '" + name + "'",
                    "the agents are " + String.join(", ", names()) + "; add your own as NAME.toml in "
                            + userDirectory + " (docs/agents.md, \"Agent definitions\")");
        }
        Path own = userDirectory.resolve(name + ".toml");
        if (Files.exists(own, LinkOption.NOFOLLOW_LINKS)) {
            if (!Files.isRegularFile(own, LinkOption.NOFOLLOW_LINKS)) {
                throw error(own.toString(), 0, "is not a regular file", "make it one, or remove it");
            }
            try {
                if (Files.size(own) > MAX_BYTES) {
                    throw error(own.toString(), 0, "is larger than " + MAX_BYTES / 1024 + " KiB",
                            "an agent's definition fits in a few dozen lines");
                }
                return parse(name, own.toString(), Files.readString(own, StandardCharsets.UTF_8));
            } catch (IOException e) {
                throw error(own.toString(), 0, "cannot be read: " + e.getMessage(), "check its permissions");
            }
        }
        try (InputStream in = AgentDefinitions.class.getResourceAsStream(RESOURCES + name + ".toml")) {
            if (in == null) {
                throw new KosaException(KosaException.Kind.INTERNAL, "kosa8's definition of agent " + name
                        + " is missing from its jar", "rebuild kosa8");
            }
            return parse(name, "kosa8's " + name + ".toml", new String(in.readAllBytes(), StandardCharsets.UTF_8));
        } catch (IOException e) {
            throw new KosaException(KosaException.Kind.INTERNAL, "cannot read kosa8's definition of agent " + name
                    + ": " + e.getMessage(), "rebuild kosa8", e);
        }
    }

    private static List<String> builtIn() {
        try (InputStream in = AgentDefinitions.class.getResourceAsStream(RESOURCES + "agents.list")) {
            if (in == null) {
                return List.of();
            }
            return new String(in.readAllBytes(), StandardCharsets.UTF_8).lines().map(String::strip)
                    .filter(l -> !l.isEmpty() && !l.startsWith("#")).toList();
        } catch (IOException e) {
            return List.of();
        }
    }

    /** Made on first use: only {@code kosa8 agent} pays for the TOML module. */
    private static final class Toml {
        static final TomlMapper MAPPER = new TomlMapper();
    }

    /**
     * A definition from its text.
     *
     * @param source what to call the file in messages
     */
    static AgentDefinition parse(String name, String source, String text) {
        JsonNode root;
        try {
            root = Toml.MAPPER.readTree(text);
        } catch (JacksonException e) {
            JsonLocation at = e.getLocation();
            throw error(source, at == null ? 0 : at.getLineNr(), "is not valid TOML: " + e.getOriginalMessage(),
                    "fix the line named; docs/agents.md shows a definition");
        }
        if (root == null || root.isMissingNode() || root.isEmpty()) {
            throw error(source, 0, "is empty", "an agent needs at least command and dockerfile (docs/agents.md)");
        }
        for (Iterator<String> it = root.fieldNames(); it.hasNext(); ) {
            String key = it.next();
            if (!KEYS.contains(key)) {
                throw error(source, lineOf(text, key), "has no setting '" + key + "'",
                        "the settings are: " + String.join(", ", KEYS));
            }
        }
        if (!root.has("command")) {
            throw error(source, 0, "has no command", "every agent needs command (docs/agents.md)");
        }
        Fields f = new Fields(source, text);
        String dockerfile = f.text(root, "dockerfile", true);
        List<String> command = f.list(root, "command");
        if (command.isEmpty()) {
            throw error(source, lineOf(text, "command"), "needs a command",
                    "write command = [\"program\", \"arg\"...]");
        }
        try {
            return new AgentDefinition(name, f.text(root, "description", false), dockerfile,
                    f.list(root, "build_allow"), f.list(root, "allow"), f.secrets(root), f.env(root), f.files(root),
                    command, f.list(root, "resume"));
        } catch (IllegalArgumentException e) {
            throw error(source, 0, e.getMessage(), "fix it; docs/agents.md shows a definition");
        }
    }

    /** Reads a definition's fields by type, naming the line of a wrong one. */
    private record Fields(String source, String text) {
        String text(JsonNode n, String key, boolean required) {
            JsonNode v = n.get(key);
            if (v == null) {
                if (required) {
                    throw error(source, 0, "has no " + key, "every agent needs " + key + " (docs/agents.md)");
                }
                return null;
            }
            if (!v.isTextual() || v.asText().isBlank()) {
                throw error(source, lineOf(text, key), key + " must be a non-empty string", "write " + key + " = \"...\"");
            }
            return v.asText();
        }

        List<String> list(JsonNode n, String key) {
            JsonNode v = n.get(key);
            if (v == null) {
                return List.of();
            }
            if (!v.isArray()) {
                throw error(source, lineOf(text, key), key + " must be a list of strings", "write " + key + " = [\"...\"]");
            }
            List<String> out = new ArrayList<>();
            for (JsonNode e : v) {
                if (!e.isTextual() || e.asText().isBlank()) {
                    throw error(source, lineOf(text, key), key + " must be a list of non-empty strings",
                            "write " + key + " = [\"...\"]");
                }
                out.add(e.asText());
            }
            return out;
        }

        Map<String, String> env(JsonNode root) {
            JsonNode v = root.get("env");
            if (v == null) {
                return Map.of();
            }
            if (!v.isObject()) {
                throw error(source, lineOf(text, "env"), "env must be a table of NAME = \"value\"", "write [env]");
            }
            Map<String, String> out = new LinkedHashMap<>();
            for (var it = v.fields(); it.hasNext(); ) {
                var e = it.next();
                if (!e.getKey().matches("[A-Za-z_][A-Za-z0-9_]*") || !e.getValue().isTextual()) {
                    throw error(source, lineOf(text, e.getKey()), "env " + e.getKey()
                            + " must be a variable name set to a string", "write " + "NAME = \"value\" under [env]");
                }
                out.put(e.getKey(), e.getValue().asText());
            }
            return out;
        }

        List<AgentDefinition.AgentSecret> secrets(JsonNode root) {
            List<AgentDefinition.AgentSecret> out = new ArrayList<>();
            for (JsonNode s : tables(root, "secrets")) {
                Fields.only(this, s, "secrets", List.of("name", "host", "header"));
                String name = text(s, "name", true);
                String host = text(s, "host", true);
                String header = s.has("header") ? text(s, "header", true) : SecretSpec.DEFAULT_HEADER;
                try {
                    SecretSpec.of(name, host, header, null, Instant.EPOCH, "file"); // the rules `secret set` applies
                } catch (IllegalArgumentException e) {
                    // the line of the field the rule refused
                    String m = e.getMessage();
                    String field = m.contains("header") ? "header = \"" + header + "\""
                            : m.contains("secret name") ? "name = \"" + name + "\"" : "host = \"" + host + "\"";
                    throw error(source, lineOf(text, field), "secret " + name + ": " + m,
                            "fix it as for `kosa8 secret set` (docs/secrets.md)");
                }
                out.add(new AgentDefinition.AgentSecret(name, host, header));
            }
            return out;
        }

        List<AgentDefinition.HomeFile> files(JsonNode root) {
            List<AgentDefinition.HomeFile> out = new ArrayList<>();
            for (JsonNode f : tables(root, "files")) {
                Fields.only(this, f, "files", List.of("path", "content"));
                String path = text(f, "path", true);
                if (!path.startsWith("~/")) {
                    throw error(source, lineOf(text, "path = \"" + path + "\""), "file " + path
                            + " must be in the home directory", "write path = \"~/...\"");
                }
                JsonNode content = f.get("content");
                if (content == null || !content.isTextual()) {
                    throw error(source, lineOf(text, "path = \"" + path + "\""), "file " + path
                            + " needs content, a string", "write content = '''...'''");
                }
                try {
                    out.add(new AgentDefinition.HomeFile(path.substring(2), content.asText()));
                } catch (IllegalArgumentException e) {
                    throw error(source, lineOf(text, "path = \"" + path + "\""), e.getMessage(), "fix the path");
                }
            }
            return out;
        }

        private List<JsonNode> tables(JsonNode root, String key) {
            JsonNode v = root.get(key);
            if (v == null) {
                return List.of();
            }
            if (!v.isArray() || !java.util.stream.StreamSupport.stream(v.spliterator(), false).allMatch(JsonNode::isObject)) {
                throw error(source, lineOf(text, key), key + " must be tables, each written [[" + key + "]]",
                        "see docs/agents.md");
            }
            return java.util.stream.StreamSupport.stream(v.spliterator(), false).toList();
        }

        private static void only(Fields f, JsonNode table, String key, List<String> keys) {
            for (Iterator<String> it = table.fieldNames(); it.hasNext(); ) {
                String k = it.next();
                if (!keys.contains(k)) {
                    throw error(f.source, lineOf(f.text, k), "[[" + key + "]] has no setting '" + k + "'",
                            "its settings are: " + String.join(", ", keys));
                }
            }
        }
    }

    /** The first line (1-based) that sets {@code key}, or that holds one of {@code exact}; 0 when none does. */
    static int lineOf(String text, String key, String... exact) {
        Pattern p = Pattern.compile("^\\s*(\\[\\[)?[\"']?" + Pattern.quote(key) + "[\"']?\\s*(=|]])");
        String[] lines = text.split("\n", -1);
        for (int i = 0; i < lines.length; i++) {
            if (p.matcher(lines[i]).find() || lines[i].contains(key) && key.contains("=")) {
                return i + 1;
            }
        }
        for (String e : exact) {
            for (int i = 0; i < lines.length; i++) {
                if (lines[i].contains(e)) {
                    return i + 1;
                }
            }
        }
        return 0;
    }

    private static KosaException error(String source, int line, String what, String remedy) {
        return new KosaException(KosaException.Kind.USAGE, "agent definition " + source
                + (line > 0 ? " line " + line : "") + ": " + what, remedy);
    }
}
