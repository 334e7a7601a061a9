package dev.kosa8.mcp;

import java.util.Locale;

/**
 * The checks {@code kosa8 mcp --http} makes on each request's headers before the MCP SDK reads it, as pure
 * functions of what the client sent (fuzzed in {@code HttpGuardTest}): the bearer token of an
 * {@code Authorization} header, whether an {@code Origin} is a page on this machine's loopback, whether a
 * {@code Host} names the loopback. The MCP specification's Streamable HTTP transport requires the Origin check
 * against DNS rebinding (a web page whose name is made to point at 127.0.0.1 would otherwise reach this server
 * from the user's browser); the Host check refuses the same attack when a browser sends no Origin.
 */
final class HttpGuard {
    /** The largest request body: a stdio line's bound, room for 4 MiB of file content in base64 inside JSON. */
    static final int MAX_BODY = StdioGuard.MAX_LINE;
    /** A body refused for its length is still read and dropped up to this, so its client can read the 413. */
    static final long MAX_DRAIN = 2L * MAX_BODY;
    /** MCP sessions open at once; an initialize past it is refused until one is deleted. */
    static final int MAX_SESSIONS = 16;
    /** The longest header value read here; longer ones are refused unread. */
    static final int MAX_HEADER = 4096;

    private HttpGuard() {
    }

    /**
     * The token of an {@code Authorization: Bearer TOKEN} header (RFC 6750: the scheme in any case, then spaces,
     * then a token68), or null when the header is missing, of another scheme, empty, too long or not token68.
     */
    static String bearer(String header) {
        if (header == null || header.length() > MAX_HEADER) {
            return null;
        }
        String h = header.strip();
        if (h.length() < 7 || !h.regionMatches(true, 0, "Bearer ", 0, 7)) {
            return null;
        }
        String token = h.substring(7).stripLeading();
        return isToken68(token) ? token : null;
    }

    /** RFC 7235's token68: letters, digits, {@code -._~+/}, then any {@code =} padding; at least one character. */
    static boolean isToken68(String s) {
        int i = 0;
        int n = s.length();
        while (i < n && tokenChar(s.charAt(i))) {
            i++;
        }
        if (i == 0) {
            return false;
        }
        while (i < n && s.charAt(i) == '=') {
            i++;
        }
        return i == n;
    }

    private static boolean tokenChar(char c) {
        return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || "-._~+/".indexOf(c) >= 0;
    }

    /**
     * Whether a request with this {@code Origin} may go on: none (a program, not a browser page) may; otherwise
     * only an {@code http} or {@code https} origin whose host is this machine's loopback ({@code localhost},
     * {@code 127.0.0.0/8}, {@code [::1]}). {@code null} (a sandboxed frame, a file) and anything unreadable may
     * not.
     */
    static boolean originAllowed(String origin) {
        if (origin == null) {
            return true;
        }
        if (origin.length() > MAX_HEADER) {
            return false;
        }
        String o = origin.strip().toLowerCase(Locale.ROOT);
        String rest;
        if (o.startsWith("http://")) {
            rest = o.substring(7);
        } else if (o.startsWith("https://")) {
            rest = o.substring(8);
        } else {
            return false;
        }
        if (rest.endsWith("/")) {
            rest = rest.substring(0, rest.length() - 1);
        }
        return hostAllowed(rest);
    }

    /**
     * Whether a {@code Host} header (or an origin's {@code host[:port]}) names this machine's loopback: the name
     * {@code localhost}, an address in {@code 127.0.0.0/8} or {@code [::1]}, with an optional port. Nothing else,
     * no user info, path or second name.
     */
    static boolean hostAllowed(String hostPort) {
        if (hostPort == null || hostPort.isEmpty() || hostPort.length() > 300) {
            return false;
        }
        String h = hostPort.toLowerCase(Locale.ROOT);
        String host;
        String port = null;
        if (h.startsWith("[")) {
            int close = h.indexOf(']');
            if (close < 0) {
                return false;
            }
            host = h.substring(0, close + 1);
            String after = h.substring(close + 1);
            if (!after.isEmpty()) {
                if (!after.startsWith(":")) {
                    return false;
                }
                port = after.substring(1);
            }
        } else {
            int colon = h.indexOf(':');
            host = colon < 0 ? h : h.substring(0, colon);
            port = colon < 0 ? null : h.substring(colon + 1);
        }
        if (port != null && !port.matches("[0-9]{1,5}")) {
            return false;
        }
        return host.equals("localhost") || host.equals("[::1]") || isLoopbackV4(host);
    }

    private static boolean isLoopbackV4(String host) {
        String[] parts = host.split("\\.", -1);
        if (parts.length != 4 || !parts[0].equals("127")) {
            return false;
        }
        for (String p : parts) {
            if (!p.matches("[0-9]{1,3}") || Integer.parseInt(p) > 255 || p.length() > 1 && p.startsWith("0")) {
                return false;
            }
        }
        return true;
    }
}
