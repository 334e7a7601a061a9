package dev.kosa8.cli;

import com.fasterxml.jackson.core.JacksonException;
import com.fasterxml.jackson.core.JsonLocation;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.dataformat.toml.TomlMapper;
import dev.kosa8.host.KosaException;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.regex.Pattern;

/**
 * Reads {@code .kosa8/config.toml} from a project folder (docs/cli.md,
 * "Per-project settings"): TOML through Jackson's TOML module, then each
 * setting checked by name and type, every mistake an error naming the file
 * and the line. The file is read from the host's own view of the folder: a
 * sandbox's writes to {@code .kosa8/} are held for review (the {@code agents}
 * class of held paths), so a guest cannot widen its own next policy through it.
 */
final class ProjectConfigFile {
    static final String PATH = ".kosa8/config.toml";
    private static final int MAX_BYTES = 64 * 1024;
    private static final Pattern KEY_LINE = Pattern.compile("^\\s*[\"']?([A-Za-z0-9_-]+)[\"']?\\s*=");

    private ProjectConfigFile() {
    }

    /** Made on first use: a folder without the file costs a `run` no Jackson at all. */
    private static final class Toml {
        static final TomlMapper MAPPER = new TomlMapper();
    }

    /** The folder's settings, or {@link ProjectConfig#NONE} when it has no file. */
    static ProjectConfig read(Path folder) {
        Path file = folder.resolve(PATH);
        if (!Files.exists(file, LinkOption.NOFOLLOW_LINKS)) {
            return ProjectConfig.NONE;
        }
        if (!Files.isRegularFile(file, LinkOption.NOFOLLOW_LINKS)) {
            throw error(file, 0, "is not a regular file", "make it one, or remove it");
        }
        String text;
        try {
            if (Files.size(file) > MAX_BYTES) {
                throw error(file, 0, "is larger than " + MAX_BYTES / 1024 + " KiB", "a project's settings fit in a few lines");
            }
            text = Files.readString(file, StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw error(file, 0, "cannot be read: " + e.getMessage(), "check its permissions");
        }
        return parse(file, text);
    }

    static ProjectConfig parse(Path file, String text) {
        // TOML refuses a key set twice, but Jackson places the error after the line: said here, at the second
        Map<String, Integer> seen = new java.util.HashMap<>();
        String[] lines = text.split("\n", -1);
        for (int i = 0; i < lines.length; i++) {
            var m = KEY_LINE.matcher(lines[i]);
            if (m.find() && seen.putIfAbsent(m.group(1), i + 1) != null) {
                throw error(file, i + 1, "sets " + m.group(1) + " again (first on line " + seen.get(m.group(1)) + ")",
                        "keep one of the two");
            }
        }
        JsonNode root;
        try {
            root = Toml.MAPPER.readTree(text);
        } catch (JacksonException e) {
            JsonLocation at = e.getLocation();
            throw error(file, at == null ? 0 : at.getLineNr(), "is not valid TOML: " + e.getOriginalMessage(),
                    "fix the line named; docs/cli.md shows an example");
        }
        if (root == null || root.isMissingNode()) {
            return new ProjectConfig(file, null, null, null, null, List.of(), List.of(), List.of());
        }
        for (Iterator<Map.Entry<String, JsonNode>> it = root.fields(); it.hasNext(); ) {
            String key = it.next().getKey();
            if (!ProjectConfig.KEYS.contains(key)) {
                throw error(file, lineOf(text, key), "has no setting '" + key + "'",
                        "the settings are: " + String.join(", ", ProjectConfig.KEYS));
            }
        }
        String memory = text(file, text, root, "memory");
        if (memory != null) {
            try {
                Sizes.mebibytes(memory);
            } catch (RuntimeException e) {
                throw error(file, lineOf(text, "memory"), "memory '" + memory + "' is not a size", "write it like 512M or 2G");
            }
        }
        String net = text(file, text, root, "net");
        if (net != null) {
            try {
                dev.kosa8.egress.NetMode.parse(net);
            } catch (RuntimeException e) {
                throw error(file, lineOf(text, "net"), "net '" + net + "' is not closed, open or none", "use one of those");
            }
        }
        return new ProjectConfig(file, text(file, text, root, "image"), cpus(file, text, root), memory, net,
                list(file, text, root, "allow"), list(file, text, root, "passthrough"), list(file, text, root, "secrets"));
    }

    private static String text(Path file, String text, JsonNode root, String key) {
        JsonNode n = root.get(key);
        if (n == null) {
            return null;
        }
        if (!n.isTextual()) {
            throw error(file, lineOf(text, key), key + " must be a string in quotes", "write " + key + " = \"...\"");
        }
        return n.asText();
    }

    private static Integer cpus(Path file, String text, JsonNode root) {
        JsonNode n = root.get("cpus");
        if (n == null) {
            return null;
        }
        if (!n.isIntegralNumber() || n.asInt() < 1 || n.asInt() > 64) {
            throw error(file, lineOf(text, "cpus"), "cpus must be a whole number from 1 to 64", "write cpus = 2");
        }
        return n.asInt();
    }

    private static List<String> list(Path file, String text, JsonNode root, String key) {
        JsonNode n = root.get(key);
        if (n == null) {
            return List.of();
        }
        if (!n.isArray()) {
            throw error(file, lineOf(text, key), key + " must be a list of strings", "write " + key + " = [\"...\"]");
        }
        List<String> out = new ArrayList<>();
        for (JsonNode e : n) {
            if (!e.isTextual() || e.asText().isBlank()) {
                throw error(file, lineOf(text, key), key + " must be a list of non-empty strings",
                        "write " + key + " = [\"...\"]");
            }
            out.add(e.asText());
        }
        return out;
    }

    /** The line where {@code key} is set (1-based), or 0 when it cannot be found (a key written in an odd form). */
    static int lineOf(String text, String key) {
        Pattern p = Pattern.compile("^\\s*[\"']?" + Pattern.quote(key) + "[\"']?\\s*=");
        String[] lines = text.split("\n", -1);
        for (int i = 0; i < lines.length; i++) {
            if (p.matcher(lines[i]).find()) {
                return i + 1;
            }
        }
        return 0;
    }

    private static KosaException error(Path file, int line, String what, String remedy) {
        return new KosaException(KosaException.Kind.USAGE, file + (line > 0 ? " line " + line : "") + ": " + what,
                remedy);
    }
}
