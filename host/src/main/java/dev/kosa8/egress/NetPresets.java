package dev.kosa8.egress;

import com.fasterxml.jackson.core.type.TypeReference;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.kosa8.host.KosaException;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * Named groups of allow rules, written {@code @name} wherever a host is:
 * {@code --allow @pypi}. The built-in ones cover the package registries an
 * agent needs most; a JSON file ({@code presets.json} in kosa8's config
 * directory, {@code {"name": ["host", ...]}}) adds presets or replaces
 * built-in ones.
 */
public final class NetPresets {
    public static final Map<String, List<String>> BUILT_IN = builtIn();

    private final Map<String, List<String>> presets;

    private NetPresets(Map<String, List<String>> presets) {
        this.presets = presets;
    }

    private static Map<String, List<String>> builtIn() {
        Map<String, List<String>> m = new TreeMap<>();
        m.put("pypi", List.of("pypi.org", "files.pythonhosted.org"));
        m.put("npm", List.of("registry.npmjs.org", "registry.yarnpkg.com"));
        m.put("github", List.of("github.com", "api.github.com", "codeload.github.com", "objects.githubusercontent.com",
                "raw.githubusercontent.com", "release-assets.githubusercontent.com"));
        m.put("debian", List.of("deb.debian.org", "security.debian.org"));
        // each coding agent's API hosts (docs/agents.md): what `kosa8 agent NAME` allows
        m.put("anthropic", List.of("api.anthropic.com"));
        m.put("openai", List.of("api.openai.com"));
        m.put("google-ai", List.of("generativelanguage.googleapis.com"));
        return Map.copyOf(m);
    }

    public static NetPresets load(Path file) {
        Map<String, List<String>> m = new TreeMap<>(BUILT_IN);
        if (Files.isRegularFile(file)) {
            try {
                Map<String, List<String>> user = new ObjectMapper().readValue(file.toFile(), new TypeReference<>() { });
                user.forEach((k, v) -> m.put(k, List.copyOf(v)));
            } catch (IOException | RuntimeException e) {
                throw new KosaException(KosaException.Kind.USAGE, "cannot read the network presets " + file + ": "
                        + e.getMessage(), "fix it: a JSON object of preset names to lists of hosts");
            }
        }
        return new NetPresets(Map.copyOf(m));
    }

    public Map<String, List<String>> all() {
        return presets;
    }

    /** Expands presets and parses every rule; a bad one is a usage error naming it. */
    public List<AllowRule> expand(List<String> items) {
        List<AllowRule> out = new ArrayList<>();
        for (String item : items) {
            String s = item.strip();
            int word = s.indexOf(' ');
            if (word > 0 && s.substring(0, word).equalsIgnoreCase(AllowRule.PASSTHROUGH)
                    && s.substring(word + 1).strip().startsWith("@")) {
                for (AllowRule r : expand(List.of(s.substring(word + 1).strip()))) {
                    out.addAll(expand(List.of(AllowRule.PASSTHROUGH + " " + r)));
                }
                continue;
            }
            if (s.startsWith("@")) {
                List<String> hosts = presets.get(s.substring(1));
                if (hosts == null) {
                    throw new KosaException(KosaException.Kind.USAGE, "no network preset '" + s + "'",
                            "the presets are " + String.join(", ", presets.keySet().stream().map(k -> "@" + k).toList()));
                }
                out.addAll(expand(hosts));
            } else {
                try {
                    out.add(AllowRule.parse(s));
                } catch (IllegalArgumentException e) {
                    throw new KosaException(KosaException.Kind.USAGE, "bad allow rule '" + s + "': " + e.getMessage(),
                            "write HOST, *.DOMAIN, HOST:PORT, 'GET,HEAD HOST/path/prefix', 'passthrough HOST' or "
                                    + "@preset");
                }
            }
        }
        return out;
    }

}
