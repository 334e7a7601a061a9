package dev.kosa8.egress;

import java.util.Locale;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Pattern;

/**
 * One allow-list entry: a host pattern, optionally narrowed to some HTTP
 * methods and a path prefix. Written {@code [METHODS ]HOST[:PORT][/PATH]}, for
 * example {@code pypi.org}, {@code *.github.com}, {@code api.example.com:8443}
 * or {@code GET,HEAD pypi.org/simple/}. The broker terminates TLS to every
 * allowed host and reads each request (the request must name the host the
 * connection was opened for, and methods and paths are judged where a rule has
 * them), except for hosts written {@code passthrough HOST}: TLS to those is
 * relayed unread, for clients that pin certificates or need the server's own
 * end to end.
 *
 * @param methods     upper-case method names; empty for any
 * @param pathPrefix  the prefix the request's path must start with; empty for any
 * @param passthrough TLS to the host is passed through unread; such a rule has no methods or path
 */
public record AllowRule(HostPattern host, Set<String> methods, String pathPrefix, boolean passthrough) {
    private static final Pattern METHOD = Pattern.compile("[A-Z]{1,16}");
    /** The word that marks a passthrough rule: {@code passthrough pypi.org}. */
    public static final String PASSTHROUGH = "passthrough";

    public AllowRule {
        methods = Set.copyOf(new TreeSet<>(methods));
        pathPrefix = pathPrefix == null ? "" : pathPrefix;
        if (passthrough && (!methods.isEmpty() || !pathPrefix.isEmpty())) {
            throw new IllegalArgumentException("a passthrough host's requests are never read, so it cannot have "
                    + "methods or a path");
        }
        if (!pathPrefix.isEmpty() && !pathPrefix.startsWith("/")) {
            throw new IllegalArgumentException("a path prefix starts with '/': " + pathPrefix);
        }
        for (String m : methods) {
            if (!METHOD.matcher(m).matches()) {
                throw new IllegalArgumentException("not an HTTP method: " + m);
            }
        }
    }

    /** A rule for the host and nothing else about requests, intercepted as every host is by default. */
    public AllowRule(HostPattern host, Set<String> methods, String pathPrefix) {
        this(host, methods, pathPrefix, false);
    }

    public static AllowRule parse(String text) {
        String s = text.strip();
        int word = s.indexOf(' ');
        if (word > 0 && s.substring(0, word).equalsIgnoreCase(PASSTHROUGH)) {
            String rest = s.substring(word + 1).strip();
            AllowRule inner = parse(rest);
            if (inner.passthrough() || inner.hasRequestRules()) {
                throw new IllegalArgumentException("a passthrough host's requests are never read, so '" + rest
                        + "' cannot have methods or a path; write passthrough HOST");
            }
            return new AllowRule(inner.host(), Set.of(), "", true);
        }
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
        return (passthrough ? PASSTHROUGH + " " : "") + (methods.isEmpty() ? "" : String.join(",",
                new TreeSet<>(methods)) + " ") + host + pathPrefix;
    }
}
