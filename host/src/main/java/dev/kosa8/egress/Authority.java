package dev.kosa8.egress;

import dev.kosa8.net.HostName;

/**
 * The host and port a request names (CONNECT target, absolute URI or Host
 * header), with the host normalized.
 *
 * @param literal the host is an IP address literal, which the broker refuses
 */
record Authority(String host, int port, boolean literal) {

    /** Parses {@code host[:port]} or {@code [v6]:port}; null when it is not one. */
    static Authority parse(String text, int defaultPort) {
        if (text == null || text.isEmpty() || text.length() > HostName.MAX_LENGTH + 8 || text.contains("@")) {
            return null;
        }
        String host = text;
        int port = defaultPort;
        int colon = text.lastIndexOf(':');
        int bracket = text.lastIndexOf(']');
        if (colon > bracket) {
            String p = text.substring(colon + 1);
            if (p.isEmpty() || p.length() > 5 || !p.chars().allMatch(Character::isDigit)) {
                return null;
            }
            port = Integer.parseInt(p);
            if (port < 1 || port > 65535) {
                return null;
            }
            host = text.substring(0, colon);
        }
        if (HostName.isAddressLiteral(host)) {
            return new Authority(host, port, true);
        }
        String h = HostName.normalize(host);
        return h == null ? null : new Authority(h, port, false);
    }
}
