package dev.kosa8.image;

import java.util.ArrayList;
import java.util.List;
import java.util.regex.Pattern;

/**
 * The patterns of a build context's {@code .dockerignore}, matched as Docker
 * matches them: each line a path pattern relative to the context's root
 * ({@code *} and {@code ?} within one path element, {@code [...]} classes,
 * {@code **} any number of elements), {@code !} making an exception, the last
 * matching line deciding. A path is excluded when it or a directory above it
 * is: excluding {@code secrets} excludes everything in it.
 */
public final class DockerIgnore {
    public static final DockerIgnore NONE = new DockerIgnore(List.of());

    private record Rule(Pattern pattern, boolean exception) {
    }

    private final List<Rule> rules;

    private DockerIgnore(List<Rule> rules) {
        this.rules = List.copyOf(rules);
    }

    /** The rules of a {@code .dockerignore} file's text. */
    public static DockerIgnore parse(String text) {
        List<Rule> rules = new ArrayList<>();
        for (String raw : text.split("\r?\n")) {
            String line = raw.strip();
            if (line.isEmpty() || line.startsWith("#")) {
                continue;
            }
            boolean exception = line.startsWith("!");
            if (exception) {
                line = line.substring(1).strip();
            }
            String clean = clean(line);
            if (clean.isEmpty()) {
                continue;
            }
            rules.add(new Rule(Pattern.compile(regex(clean)), exception));
        }
        return new DockerIgnore(rules);
    }

    /** Whether {@code path} (relative to the context's root, '/'-separated) is left out of the build. */
    public boolean excludes(String path) {
        String p = clean(path);
        if (p.isEmpty()) {
            return false;
        }
        boolean excluded = false;
        for (Rule r : rules) {
            if (matchesOrParent(r.pattern(), p)) {
                excluded = !r.exception();
            }
        }
        return excluded;
    }

    private static boolean matchesOrParent(Pattern pattern, String path) {
        String p = path;
        while (true) {
            if (pattern.matcher(p).matches()) {
                return true;
            }
            int slash = p.lastIndexOf('/');
            if (slash < 0) {
                return false;
            }
            p = p.substring(0, slash);
        }
    }

    /** The path without a leading '/', '.' elements, empty elements; '..' resolved within the root. */
    static String clean(String path) {
        List<String> parts = new ArrayList<>();
        for (String e : path.split("/")) {
            if (e.isEmpty() || e.equals(".")) {
                continue;
            }
            if (e.equals("..")) {
                if (!parts.isEmpty()) {
                    parts.removeLast();
                }
            } else {
                parts.add(e);
            }
        }
        return String.join("/", parts);
    }

    private static String regex(String pattern) {
        StringBuilder re = new StringBuilder();
        String[] elements = pattern.split("/");
        for (int i = 0; i < elements.length; i++) {
            String e = elements[i];
            boolean last = i == elements.length - 1;
            if (e.equals("**")) {
                re.append(last ? ".*" : "(?:[^/]+/)*");
                continue;
            }
            re.append(element(e));
            if (!last) {
                re.append('/');
            }
        }
        return re.toString();
    }

    private static String element(String e) {
        StringBuilder re = new StringBuilder();
        for (int i = 0; i < e.length(); i++) {
            char c = e.charAt(i);
            switch (c) {
                case '*' -> re.append("[^/]*");
                case '?' -> re.append("[^/]");
                case '[' -> {
                    int end = e.indexOf(']', i + 2);
                    if (end < 0) {
                        re.append("\\[");
                    } else {
                        String cls = e.substring(i + 1, end);
                        if (cls.startsWith("!") || cls.startsWith("^")) {
                            cls = "^" + cls.substring(1);
                        }
                        re.append('[').append(cls.replace("\\", "\\\\")).append(']');
                        i = end;
                    }
                }
                case '\\' -> {
                    if (i + 1 < e.length()) {
                        re.append(Pattern.quote(String.valueOf(e.charAt(++i))));
                    }
                }
                default -> re.append(Pattern.quote(String.valueOf(c)));
            }
        }
        return re.toString();
    }
}
