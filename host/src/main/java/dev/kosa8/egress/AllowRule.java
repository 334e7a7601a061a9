package dev.kosa8.egress;

import java.util.Locale;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Pattern;

/**
 * One allow-list entry: a host pattern, optionally narrowed to some HTTP
 * methods and a path prefix. Written {@code [METHODS ]HOST[:PORT][/PATH]}, for
 * example {@code pypi.org}, {@code *.github.com}, {@code api.example.com:8443}
 * or {@code GET,HEAD pypi.org/simple/}. A rule with methods or a path can only
 * be enforced by reading the request, so the broker intercepts TLS to hosts
 * that have one.
 *
 * @param methods    upper-case method names; empty for any
 * @param pathPrefix the prefix the request's path must start with; empty for any
 */
public record AllowRule(HostPattern host, Set<String> methods, String pathPrefix) {
    private static final Pattern METHOD = Pattern.compile("[A-Z]{1,16}");

    public AllowRule {
        methods = Set.copyOf(new TreeSet<>(methods));
        pathPrefix = pathPrefix == null ? "" : pathPrefix;
        if (!pathPrefix.isEmpty() && !pathPrefix.startsWith("/")) {
            throw new IllegalArgumentException("a path prefix starts with '/': " + pathPrefix);
        }
        for (String m : methods) {
            if (!METHOD.matcher(m).matches()) {
                throw new IllegalArgumentException("not an HTTP method: " + m);
            }
        }
    }

    public static AllowRule parse(String text) {
        String s = text.strip();
        Set<String> methods = new TreeSet<>();
        int space = s.indexOf(' ');
        if (space > 0) {
            for (String m : s.substring(0, space).split(",")) {
                methods.add(m.strip().toUpperCase(Locale.ROOT));
            }
            s = s.substring(space + 1).strip();
        }
        String path = "";
        int slash = s.indexOf('/');
        if (slash >= 0) {
            path = s.substring(slash);
            s = s.substring(0, slash);
        }
        return new AllowRule(HostPattern.parse(s), methods, path);
    }

    /** True when the rule says anything about requests, not only about the host. */
    public boolean hasRequestRules() {
        return !methods.isEmpty() || !pathPrefix.isEmpty();
    }

    public boolean allowsRequest(String method, String path) {
        return (methods.isEmpty() || methods.contains(method)) && path.startsWith(pathPrefix);
    }

    @Override
    public String toString() {
        return (methods.isEmpty() ? "" : String.join(",", new TreeSet<>(methods)) + " ") + host + pathPrefix;
    }
}
