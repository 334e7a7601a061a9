package dev.kosa8.image.debian;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;

/**
 * One paragraph of a Debian control file (RFC 822 style): fields in their
 * order, names compared without regard to case as Debian policy 5.1 says
 * (stored as written, looked up folded). A multi-line value keeps its
 * continuation lines, each after a {@code \n}, without their leading space.
 */
public record Stanza(Map<String, String> fields) {

    public Stanza {
        fields = java.util.Collections.unmodifiableMap(new LinkedHashMap<>(fields));
    }

    /** The value of field {@code name} (any case), if present. */
    public Optional<String> field(String name) {
        String v = fields.get(name);
        if (v != null) {
            return Optional.of(v);
        }
        for (Map.Entry<String, String> e : fields.entrySet()) {
            if (e.getKey().equalsIgnoreCase(name)) {
                return Optional.of(e.getValue());
            }
        }
        return Optional.empty();
    }

    /** The value of field {@code name}, or an error naming the stanza ({@code what}) and the missing field. */
    public String required(String name, String what) {
        return field(name).orElseThrow(() -> ArchiveErrors.malformed(what + " has no " + name + " field"));
    }
}
