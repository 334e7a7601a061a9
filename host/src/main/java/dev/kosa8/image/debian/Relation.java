package dev.kosa8.image.debian;

import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * One package relation, as in {@code Depends: libc6 (>= 2.34)}: a name, an
 * optional architecture qualifier ({@code :any}, {@code :native}) and an
 * optional version constraint.
 *
 * @param op      one of {@code << <= = >= >>}, or empty for any version
 * @param version the constraint's version; null when {@code op} is empty
 */
public record Relation(String name, String op, DebianVersion version) {
    private static final Pattern ONE = Pattern.compile(
            "([a-z0-9][a-z0-9+.-]*)(?::([a-z0-9-]+))?\\s*(?:\\(\\s*(<<|<=|=|>=|>>|<|>)\\s*([^\\s)]+)\\s*\\))?"
                    + "\\s*(?:\\[[^]]*])?\\s*(?:<[^>]*>\\s*)*");

    /**
     * Parses a relation field ({@code Depends}, {@code Pre-Depends},
     * {@code Provides}): the comma-separated list of groups, each a list of
     * {@code |}-separated alternatives. Architecture and build-profile
     * restrictions ({@code [..]}, {@code <..>}), which only source packages
     * carry, are accepted and ignored.
     */
    public static List<List<Relation>> parseField(String field, String what) {
        List<List<Relation>> groups = new ArrayList<>();
        String text = field.replace('\n', ' ');
        if (text.isBlank()) {
            return groups;
        }
        for (String group : text.split(",", -1)) {
            if (group.isBlank()) {
                throw ArchiveErrors.malformed(what + " has an empty relation in '" + shorten(field) + "'");
            }
            List<Relation> alternatives = new ArrayList<>();
            for (String alt : group.split("\\|", -1)) {
                Matcher m = ONE.matcher(alt.strip());
                if (!m.matches()) {
                    throw ArchiveErrors.malformed(what + " has a bad relation '" + shorten(alt.strip()) + "'");
                }
                String op = m.group(3) == null ? "" : m.group(3);
                // "<" and ">" are obsolete spellings of "<=" and ">=" (policy 7.1)
                op = op.equals("<") ? "<=" : op.equals(">") ? ">=" : op;
                alternatives.add(new Relation(m.group(1), op, m.group(4) == null ? null : DebianVersion.parse(m.group(4))));
            }
            groups.add(List.copyOf(alternatives));
        }
        return List.copyOf(groups);
    }

    /** Whether a package (or a Provides) of this name at {@code v} (null: an unversioned Provides) satisfies this. */
    public boolean satisfiedBy(String otherName, DebianVersion v) {
        if (!name.equals(otherName)) {
            return false;
        }
        if (op.isEmpty()) {
            return true;
        }
        if (v == null) {
            return false; // an unversioned Provides never satisfies a versioned relation (policy 7.5)
        }
        int c = v.compareTo(version);
        return switch (op) {
            case "<<" -> c < 0;
            case "<=" -> c <= 0;
            case "=" -> c == 0;
            case ">=" -> c >= 0;
            case ">>" -> c > 0;
            default -> false;
        };
    }

    @Override
    public String toString() {
        return op.isEmpty() ? name : name + " (" + op + " " + version + ")";
    }

    private static String shorten(String s) {
        return s.length() <= 80 ? s : s.substring(0, 80) + "…";
    }
}
