package dev.kosa8.egress;

import dev.kosa8.net.HostName;

/**
 * One host of an allow-list entry: an exact name ({@code pypi.org}) or every
 * name below a suffix ({@code *.githubusercontent.com}, which does not match
 * the suffix itself), with an optional port. Without a port the pattern
 * covers the web's two ports, 80 and 443; any other port must be named.
 *
 * @param name     the exact name, or the suffix without "*."
 * @param wildcard true for a "*." pattern
 * @param port     0 for 80 and 443, else the one port
 */
public record HostPattern(String name, boolean wildcard, int port) {

    public HostPattern {
        if (HostName.normalize(name) == null || !HostName.normalize(name).equals(name)) {
            throw new IllegalArgumentException("not a host name: " + name);
        }
        if (port < 0 || port > 65535) {
            throw new IllegalArgumentException("port out of range: " + port);
        }
    }

    /** Parses {@code host}, {@code *.suffix}, each with an optional {@code :port}. */
    public static HostPattern parse(String text) {
        String s = text.trim();
        int port = 0;
        int colon = s.lastIndexOf(':');
        if (colon >= 0) {
            String p = s.substring(colon + 1);
            try {
                port = Integer.parseInt(p);
            } catch (NumberFormatException e) {
                throw new IllegalArgumentException("bad port '" + p + "' in '" + text + "'");
            }
            if (port < 1 || port > 65535) {
                throw new IllegalArgumentException("port out of range in '" + text + "'");
            }
            s = s.substring(0, colon);
        }
        boolean wildcard = s.startsWith("*.");
        String host = wildcard ? s.substring(2) : s;
        if (HostName.isAddressLiteral(host)) {
            throw new IllegalArgumentException("'" + text + "' is an IP address; allow host names, which the broker "
                    + "resolves and checks itself");
        }
        String normalized = HostName.normalize(host);
        if (normalized == null || host.contains("*")) {
            throw new IllegalArgumentException("'" + text + "' is not a host name or *.suffix pattern");
        }
        if (wildcard && normalized.indexOf('.') < 0) {
            throw new IllegalArgumentException("'" + text + "' would match a whole top-level domain; name a "
                    + "registered domain, such as *.example.com");
        }
        return new HostPattern(normalized, wildcard, port);
    }

    /** Whether the (normalized) name matches, whatever the port. */
    public boolean matchesName(String host) {
        return wildcard ? host.endsWith("." + name) : host.equals(name);
    }

    public boolean matches(String host, int p) {
        return matchesName(host) && (port == 0 ? p == 80 || p == 443 : p == port);
    }

    @Override
    public String toString() {
        return (wildcard ? "*." : "") + name + (port == 0 ? "" : ":" + port);
    }
}
