package dev.kosa8.workspace;

import dev.kosa8.host.KosaException;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

/**
 * Which paths of the folder are held: a pure function from a path (and whether it is a directory)
 * to the held unit it falls in and that unit's class, or none. The classes and their patterns are
 * data ({@code held-paths.txt} beside this class, described at its top), never code paths, and
 * nothing the guest sends changes them: the policy is made when the sandbox's server starts, from
 * the defaults, the user's own file and the sandbox's {@code --hold}/{@code --no-hold}.
 *
 * <p>A unit is what a pattern names: a file ({@code .git/config}) or a directory with everything
 * under it ({@code .git/hooks}). Of the units a path is in, the one nearest the root is its unit.
 * Beside the patterns one class is code, for it is about a symlink's target and not its name:
 * {@value #SYMLINKS}, a symlink whose target is absolute or may climb out of the folder, or leads
 * into an unless-under directory from outside one ({@link #holdsLink}).
 *
 * <p>Paths are the server's byte strings (one char per byte), {@code ""} the root. Names compare
 * without regard to ASCII case.
 */
public final class HeldPolicy {
    /** The class of symlinks whose target may leave the folder. */
    public static final String SYMLINKS = "symlinks";
    static final String SYMLINKS_PROTECTS = "any host program that follows a symlink in the folder: a target"
            + " that is absolute or climbs out of the folder reads or writes the user's files outside it, and one"
            + " that leads into node_modules shows a package's files, some of which are not held there, as a"
            + " project's own";

    /**
     * A class of held paths: its name, the host tool it protects against, its patterns.
     *
     * @param unlessUnder the class-level unless-under names (each pattern has them too): whole classes free below
     *                    them, so a symlink from outside into one is held ({@link #holdsLink})
     */
    public record HeldClass(String name, String protects, List<String> unlessUnder, List<Pattern> patterns) {
        public HeldClass {
            unlessUnder = List.copyOf(unlessUnder);
            patterns = List.copyOf(patterns);
        }
    }

    /**
     * One pattern: its components ("**" for any number of directories), and its qualifiers.
     *
     * @param unlessUnder names (ASCII lower case) of which a directory above the unit means it is not held
     */
    public record Pattern(String text, List<String> parts, List<String> unlessUnder, boolean notDirectory) {
        public Pattern {
            parts = List.copyOf(parts);
            unlessUnder = List.copyOf(unlessUnder);
        }
    }

    /**
     * A path's held unit and the class that holds it.
     *
     * @param onlyNonDirectory the unit is held only if it is not a directory (a {@code .git} file):
     *                         a directory already there is no unit
     */
    public record Match(String unit, String className, boolean onlyNonDirectory) {
        public Match(String unit, String className) {
            this(unit, className, false);
        }
    }

    private record Candidate(Pattern pattern, String className) {
    }

    private final Map<String, HeldClass> classes;
    private final boolean symlinks;
    /** Patterns by their last name (ASCII lower case) when it has no '*'. */
    private final Map<String, List<Candidate>> byLastName = new HashMap<>();
    /** Patterns whose last name is a glob. */
    private final List<Candidate> globLast = new ArrayList<>();
    /** The names patterns look at above a unit: the first of each pattern's names but its last. */
    private final List<String> guardParts = new ArrayList<>();
    /** The unless-under names: a directory moved from under one to under none, or back, changes what is held. */
    private final List<String> unlessUnderNames = new ArrayList<>();
    /** The class-level ones: a symlink into one from outside is held. */
    private final List<String> classUnlessNames = new ArrayList<>();

    private HeldPolicy(Collection<HeldClass> enabled, boolean symlinks) {
        this.classes = new LinkedHashMap<>();
        for (HeldClass c : enabled) {
            classes.put(c.name(), c);
            for (String u : c.unlessUnder()) {
                if (!classUnlessNames.contains(u)) {
                    classUnlessNames.add(u);
                }
            }
            for (Pattern p : c.patterns()) {
                String last = p.parts().getLast();
                Candidate cand = new Candidate(p, c.name());
                // a match that reaches above a moved directory starts at or above it: its first name is enough
                for (String part : p.parts().subList(0, p.parts().size() - 1)) {
                    if (!part.equals("**")) {
                        if (!guardParts.contains(part)) {
                            guardParts.add(part);
                        }
                        break;
                    }
                }
                for (String u : p.unlessUnder()) {
                    if (!unlessUnderNames.contains(u)) {
                        unlessUnderNames.add(u);
                    }
                }
                if (last.indexOf('*') >= 0) {
                    globLast.add(cand);
                } else {
                    byLastName.computeIfAbsent(lower(last), k -> new ArrayList<>()).add(cand);
                }
            }
        }
        this.symlinks = symlinks;
    }

    /** The default classes, every one of them held. */
    public static HeldPolicy defaults() {
        return new HeldPolicy(defaultClasses(), true);
    }

    /** A policy that holds nothing (a sandbox whose user turned every class off). */
    static HeldPolicy none() {
        return new HeldPolicy(List.of(), false);
    }

    /**
     * The classes from the defaults and the user's file {@code userFile} (if it exists; a class
     * there replaces a default of its name), all held but those in {@code noHold}; {@code hold}
     * names classes to hold again after a {@code --no-hold} (or names a class to check exists).
     */
    public static HeldPolicy of(Path userFile, Collection<String> hold, Collection<String> noHold) {
        Map<String, HeldClass> all = new LinkedHashMap<>();
        for (HeldClass c : defaultClasses()) {
            all.put(c.name(), c);
        }
        if (userFile != null && Files.isRegularFile(userFile)) {
            try {
                for (HeldClass c : HeldPathsFile.parse(Files.readString(userFile, StandardCharsets.UTF_8),
                        userFile.toString())) {
                    all.put(c.name(), c);
                }
            } catch (IOException e) {
                throw new KosaException(KosaException.Kind.USAGE, "cannot read " + userFile + ": " + e.getMessage(),
                        "fix or remove the file");
            }
        }
        Set<String> known = new TreeSet<>(all.keySet());
        known.add(SYMLINKS);
        List<String> unknown = new ArrayList<>();
        for (String n : hold) {
            if (!known.contains(n)) {
                unknown.add(n);
            }
        }
        for (String n : noHold) {
            if (!known.contains(n)) {
                unknown.add(n);
            }
        }
        if (!unknown.isEmpty()) {
            throw new KosaException(KosaException.Kind.USAGE, "no class of held paths is named "
                    + String.join(", ", unknown), "the classes are: " + String.join(", ", known));
        }
        List<HeldClass> enabled = new ArrayList<>();
        for (HeldClass c : all.values()) {
            if (!noHold.contains(c.name()) || hold.contains(c.name())) {
                enabled.add(c);
            }
        }
        return new HeldPolicy(enabled, !noHold.contains(SYMLINKS) || hold.contains(SYMLINKS));
    }

    static List<HeldClass> defaultClasses() {
        try (InputStream in = HeldPolicy.class.getResourceAsStream("held-paths.txt")) {
            if (in == null) {
                throw new IllegalStateException("held-paths.txt is missing from the build");
            }
            return HeldPathsFile.parse(new String(in.readAllBytes(), StandardCharsets.UTF_8), "held-paths.txt");
        } catch (IOException e) {
            throw new IllegalStateException("cannot read held-paths.txt", e);
        }
    }

    /** The classes held, in order, and whether escaping symlinks are. */
    public List<HeldClass> classes() {
        return List.copyOf(classes.values());
    }

    public boolean holdsSymlinks() {
        return symlinks;
    }

    /** What class {@code name} protects against, for a review. */
    public String protects(String name) {
        if (name.equals(SYMLINKS)) {
            return SYMLINKS_PROTECTS;
        }
        HeldClass c = classes.get(name);
        return c == null ? "" : c.protects();
    }

    /**
     * The held unit {@code path} is in, or null if it is in none.
     *
     * @param directory whether {@code path} is (or is to be made) a directory: a "not-directory"
     *                  pattern holds only a non-directory of its exact name
     */
    public Match classify(String path, boolean directory) {
        if (path.isEmpty() || classes.isEmpty()) {
            return null;
        }
        String[] names = path.split("/", -1);
        for (int i = 0; i < names.length; i++) {
            List<Candidate> literal = byLastName.get(lower(names[i]));
            if (literal != null) {
                for (Candidate c : literal) {
                    if (holds(c.pattern(), names, i, directory)) {
                        return new Match(join(names, i), c.className(), c.pattern().notDirectory());
                    }
                }
            }
            for (Candidate c : globLast) {
                if (holds(c.pattern(), names, i, directory)) {
                    return new Match(join(names, i), c.className(), c.pattern().notDirectory());
                }
            }
        }
        return null;
    }

    private static boolean holds(Pattern p, String[] names, int last, boolean directory) {
        if (p.notDirectory() && (last != names.length - 1 || directory)) {
            return false; // a name under it makes it a directory
        }
        if (!p.unlessUnder().isEmpty()) {
            for (int j = 0; j < last; j++) {
                if (p.unlessUnder().contains(lower(names[j]))) {
                    return false;
                }
            }
        }
        return matches(p.parts(), 0, names, 0, last + 1);
    }

    /** Whether parts[pi..] match names[ni..end) exactly, "**" taking any number of names. */
    private static boolean matches(List<String> parts, int pi, String[] names, int ni, int end) {
        if (pi == parts.size()) {
            return ni == end;
        }
        String part = parts.get(pi);
        if (part.equals("**")) {
            for (int k = ni; k <= end; k++) {
                if (matches(parts, pi + 1, names, k, end)) {
                    return true;
                }
            }
            return false;
        }
        return ni < end && glob(part, names[ni]) && matches(parts, pi + 1, names, ni + 1, end);
    }

    /** A name against one pattern name with '*' for any run of characters, ASCII case ignored. */
    static boolean glob(String pattern, String name) {
        return glob(pattern, 0, name, 0);
    }

    private static boolean glob(String p, int pi, String n, int ni) {
        while (pi < p.length()) {
            char c = p.charAt(pi);
            if (c == '*') {
                for (int k = ni; k <= n.length(); k++) {
                    if (glob(p, pi + 1, n, k)) {
                        return true;
                    }
                }
                return false;
            }
            if (ni >= n.length() || lower(c) != lower(n.charAt(ni))) {
                return false;
            }
            pi++;
            ni++;
        }
        return ni == n.length();
    }

    private static String join(String[] names, int last) {
        return String.join("/", java.util.Arrays.asList(names).subList(0, last + 1));
    }

    /**
     * Whether moving the directory at {@code from} to {@code to} could change what the patterns hold
     * beneath it: some name of either path is one a pattern looks at above a unit ({@code .git},
     * {@code .github}, {@code *.git}...), or one path is under a directory of an unless-under name
     * and the other is not (a package's {@code .github/workflows} moved out of {@code node_modules}).
     * Moving such a directory is refused ({@link HeldMoves}); a move within {@code node_modules},
     * as npm's, is not.
     */
    public boolean guards(String from, String to) {
        if (hasName(from, guardParts) || hasName(to, guardParts)) {
            return true;
        }
        for (String u : unlessUnderNames) {
            if (hasName(from, List.of(u)) != hasName(to, List.of(u))) {
                return true;
            }
        }
        return false;
    }

    private static boolean hasName(String path, List<String> patterns) {
        if (path.isEmpty()) {
            return false;
        }
        for (String name : path.split("/", -1)) {
            for (String part : patterns) {
                if (glob(part, name)) {
                    return true;
                }
            }
        }
        return false;
    }

    /**
     * Whether the guest's symlink at {@code linkPath} to {@code target} is held, as class {@value #SYMLINKS}: it
     * may lead out of the folder ({@link #escapes}), or it leads into a directory below which a whole class is not
     * held (a class-level unless-under name) from a place not under one ({@code tools -> node_modules/p}: a host
     * tool opening {@code tools} would take p's {@code .github/workflows}, not held under node_modules, for a
     * project's own). A link under such a directory already (npm's {@code .bin} links, pnpm's into {@code .pnpm})
     * is not held for that. A pattern's own unless-under ({@code HEAD unless-under .git}) adds no such rule:
     * git-annex links every annexed file into {@code .git/annex}.
     */
    public boolean holdsLink(String linkPath, String target) {
        if (!symlinks) {
            return false;
        }
        if (escapes(linkPath, target)) {
            return true;
        }
        int slash = linkPath.lastIndexOf('/');
        String above = slash < 0 ? "" : linkPath.substring(0, slash);
        for (String u : classUnlessNames) {
            if (!hasName(above, List.of(u)) && hasName(target, List.of(u))) {
                return true;
            }
        }
        return false;
    }

    /**
     * Whether a symlink at {@code linkPath} with {@code target} may lead out of the folder: an
     * absolute target; more leading ".." than the link has directories above it; or a ".." after
     * a name, which the kernel resolves from wherever that name (perhaps itself a symlink) leads,
     * not lexically. A target of leading ".."s and then names only stays inside if every symlink
     * it passes through does, which this same rule ensures of each.
     */
    public static boolean escapes(String linkPath, String target) {
        if (target.isEmpty() || target.charAt(0) == '/') {
            return true;
        }
        int depth = 0;
        for (int i = 0; i < linkPath.length(); i++) {
            if (linkPath.charAt(i) == '/') {
                depth++;
            }
        }
        int up = 0;
        boolean named = false;
        for (String part : target.split("/")) {
            if (part.isEmpty() || part.equals(".")) {
                continue;
            }
            if (part.equals("..")) {
                if (named) {
                    return true;
                }
                up++;
            } else {
                named = true;
            }
        }
        return up > depth;
    }

    private static String lower(String s) {
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (c >= 'A' && c <= 'Z') {
                char[] a = s.toCharArray();
                for (int j = i; j < a.length; j++) {
                    a[j] = lower(a[j]);
                }
                return new String(a);
            }
        }
        return s;
    }

    private static char lower(char c) {
        return c >= 'A' && c <= 'Z' ? (char) (c + 32) : c;
    }
}
