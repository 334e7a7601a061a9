package dev.kosa8.host;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * What {@code /etc/os-release} says about this Linux distribution (see
 * os-release(5)): {@code ID}, {@code ID_LIKE}, the name to show. Values may
 * be quoted in double or single quotes; a missing file reads as an unknown
 * distribution.
 */
public record OsRelease(String id, List<String> idLike, String prettyName) {

    public OsRelease {
        idLike = List.copyOf(idLike);
    }

    /** This host's, from {@code /etc/os-release}, else {@code /usr/lib/os-release}. */
    public static OsRelease host() {
        for (String p : List.of("/etc/os-release", "/usr/lib/os-release")) {
            try {
                return parse(Files.readString(Path.of(p)));
            } catch (IOException e) {
                // try the next, then unknown
            }
        }
        return new OsRelease("", List.of(), "an unknown system");
    }

    public static OsRelease parse(String text) {
        Map<String, String> v = new LinkedHashMap<>();
        for (String line : text.lines().toList()) {
            int eq = line.indexOf('=');
            if (line.isBlank() || line.startsWith("#") || eq <= 0) {
                continue;
            }
            String value = line.substring(eq + 1).strip();
            if (value.length() >= 2 && (value.charAt(0) == '"' || value.charAt(0) == '\'')
                    && value.charAt(value.length() - 1) == value.charAt(0)) {
                value = value.substring(1, value.length() - 1).replace("\\\"", "\"");
            }
            v.put(line.substring(0, eq).strip(), value);
        }
        String id = v.getOrDefault("ID", "linux").toLowerCase(Locale.ROOT);
        List<String> like = new ArrayList<>();
        for (String w : v.getOrDefault("ID_LIKE", "").toLowerCase(Locale.ROOT).split("\\s+")) {
            if (!w.isBlank()) {
                like.add(w);
            }
        }
        return new OsRelease(id, like, v.getOrDefault("PRETTY_NAME", v.getOrDefault("NAME", id)));
    }
}
