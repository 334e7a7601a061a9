package dev.kosa8.image;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;

/**
 * The fields of one package record as {@code apt-cache show --no-all-versions}
 * prints it (RFC 822 style, continuation lines start with a space).
 */
record AptRecord(Map<String, String> fields) {

    AptRecord {
        fields = Map.copyOf(fields);
    }

    /** Parses the first record of {@code text}. */
    static AptRecord parse(String text) {
        Map<String, String> fields = new LinkedHashMap<>();
        String last = null;
        for (String line : text.lines().toList()) {
            if (line.isBlank()) {
                if (!fields.isEmpty()) {
                    break;
                }
            } else if (Character.isWhitespace(line.charAt(0)) && last != null) {
                fields.merge(last, "\n" + line.strip(), String::concat);
            } else if (line.indexOf(':') > 0) {
                int colon = line.indexOf(':');
                last = line.substring(0, colon);
                fields.put(last, line.substring(colon + 1).strip());
            }
        }
        return new AptRecord(fields);
    }

    Optional<String> field(String name) {
        return Optional.ofNullable(fields.get(name));
    }

    DebPackage toPackage() {
        return new DebPackage(required("Package"), required("Version"), required("Architecture"));
    }

    /**
     * The package a metapackage points at: the first alternative of its first
     * dependency, with the exact version when it is pinned with {@code (= V)}.
     * For {@code linux-image-amd64} that is {@code linux-image-6.1.0-NN-amd64}.
     */
    DebPackage firstDependency() {
        String depends = required("Depends");
        String first = depends.split(",")[0].split("\\|")[0].strip();
        String name = first.split("[\\s(:]")[0];
        int eq = first.indexOf("(=");
        if (eq < 0) {
            throw new IllegalArgumentException("the dependency " + first + " of " + required("Package")
                    + " has no exact version");
        }
        String version = first.substring(eq + 2, first.indexOf(')', eq)).strip();
        return new DebPackage(name, version, required("Architecture"));
    }

    private String required(String name) {
        return field(name).orElseThrow(() -> new IllegalArgumentException("apt record has no " + name + " field"));
    }
}
