package dev.kosa8.workspace;

import dev.kosa8.host.KosaException;
import java.util.ArrayList;
import java.util.List;

/**
 * The format of {@code held-paths.txt} (beside {@link HeldPolicy}, described at its top; a user's own file has the
 * same): lines of "class", "protects", "unless-under" and "hold", read into classes of patterns. A mistake names its
 * file and line, and says where the format is described.
 */
final class HeldPathsFile {
    private HeldPathsFile() {
    }

    /** Parses the format described at the top of held-paths.txt; a mistake names the line. */
    static List<HeldPolicy.HeldClass> parse(String text, String source) {
        List<HeldPolicy.HeldClass> out = new ArrayList<>();
        String name = null;
        String protects = null;
        List<String> classUnless = new ArrayList<>();
        List<HeldPolicy.Pattern> patterns = new ArrayList<>();
        String[] lines = text.split("\n", -1);
        for (int i = 0; i < lines.length; i++) {
            String line = lines[i].strip();
            if (line.isEmpty() || line.startsWith("#")) {
                continue;
            }
            String where = source + ", line " + (i + 1);
            if (line.startsWith("class ")) {
                if (name != null) {
                    out.add(finish(name, protects, classUnless, patterns, where));
                }
                name = line.substring(6).strip();
                if (!name.matches("[a-z0-9][a-z0-9-]*")) {
                    throw bad(where, "a class name is lower-case letters, digits and '-'");
                }
                protects = null;
                classUnless = new ArrayList<>();
                patterns = new ArrayList<>();
            } else if (line.startsWith("unless-under ")) {
                if (name == null) {
                    throw bad(where, "\"unless-under\" before any \"class\"");
                }
                if (protects == null || !patterns.isEmpty()) {
                    throw bad(where, "a class's \"unless-under\" comes after its \"protects\" and before its first"
                            + " \"hold\"");
                }
                for (String u : line.substring(13).strip().split("\\s+")) {
                    classUnless.add(name(u, where));
                }
            } else if (line.startsWith("protects ")) {
                if (name == null) {
                    throw bad(where, "\"protects\" before any \"class\"");
                }
                protects = line.substring(9).strip();
            } else if (line.startsWith("hold ")) {
                if (name == null) {
                    throw bad(where, "\"hold\" before any \"class\"");
                }
                patterns.add(pattern(line.substring(5).strip(), classUnless, where));
            } else {
                throw bad(where, "expected \"class\", \"protects\", \"unless-under\" or \"hold\"");
            }
        }
        if (name != null) {
            out.add(finish(name, protects, classUnless, patterns, source));
        }
        return out;
    }

    private static HeldPolicy.HeldClass finish(String name, String protects, List<String> classUnless,
                                               List<HeldPolicy.Pattern> patterns, String where) {
        if (protects == null || patterns.isEmpty()) {
            throw bad(where, "class " + name + " needs a \"protects\" line and at least one \"hold\"");
        }
        return new HeldPolicy.HeldClass(name, protects, classUnless, patterns);
    }

    static HeldPolicy.Pattern pattern(String spec, String where) {
        return pattern(spec, List.of(), where);
    }

    /** A "hold" line's pattern, which also takes its class's unless-under names. */
    static HeldPolicy.Pattern pattern(String spec, List<String> classUnless, String where) {
        String[] words = spec.split("\\s+");
        String text = words[0];
        List<String> unlessUnder = new ArrayList<>(classUnless);
        boolean notDirectory = false;
        for (int i = 1; i < words.length; i++) {
            if (words[i].equals("not-directory")) {
                notDirectory = true;
            } else if (words[i].equals("unless-under") && i + 1 < words.length) {
                unlessUnder.add(name(words[++i], where));
            } else {
                throw bad(where, "unknown qualifier " + words[i]);
            }
        }
        List<String> parts = List.of(text.split("/"));
        for (String p : parts) {
            if (p.isEmpty() || p.equals(".") || p.equals("..")) {
                throw bad(where, "a pattern's names are not empty, '.' or '..': " + text);
            }
        }
        if (parts.getLast().equals("**")) {
            throw bad(where, "a pattern ends in a name, not \"**\": " + text);
        }
        return new HeldPolicy.Pattern(text, parts, unlessUnder, notDirectory);
    }

    /** An unless-under name: one name, no '/' or '*', compared in ASCII lower case. */
    private static String name(String word, String where) {
        if (word.isEmpty() || word.equals(".") || word.equals("..") || word.indexOf('/') >= 0
                || word.indexOf('*') >= 0) {
            throw bad(where, "\"unless-under\" takes names of directories, without '/' or '*': " + word);
        }
        return word.toLowerCase(java.util.Locale.ROOT);
    }

    private static KosaException bad(String where, String what) {
        return new KosaException(KosaException.Kind.USAGE, "held paths, " + where + ": " + what,
                "see the format at the top of held-paths.txt (docs/workspace.md, \"What can reach the host\")");
    }
}
