package dev.kosa8.net;

import java.util.Locale;
import java.util.regex.Pattern;

/**
 * DNS host names as the broker compares them: lower case, no trailing dot,
 * ASCII labels of letters, digits, '-' and '_' (the latter appears in real
 * service names). IP literals are not host names: policy names hosts, and a
 * request that names an address instead is refused, since its address could
 * not be checked against a name.
 *
 * <p>It lives below both of its users: the broker ({@code dev.kosa8.egress})
 * reads requests' hosts with it, and a secret's spec
 * ({@code dev.kosa8.secrets.SecretSpec}) checks the host it names the same
 * way, so that a secret's host is one the broker can match.
 */
public final class HostName {
    public static final int MAX_LENGTH = 253;
    private static final Pattern LABEL = Pattern.compile("[a-z0-9_]([a-z0-9_-]{0,61}[a-z0-9_])?");
    private static final Pattern IPV4 = Pattern.compile("[0-9.]+");

    private HostName() {
    }

    /** The normalized name, or null when {@code raw} is not a valid host name (IP literals included). */
    public static String normalize(String raw) {
        if (raw == null) {
            return null;
        }
        String s = raw.toLowerCase(Locale.ROOT);
        if (s.endsWith(".")) {
            s = s.substring(0, s.length() - 1);
        }
        if (s.isEmpty() || s.length() > MAX_LENGTH || IPV4.matcher(s).matches() || s.indexOf(':') >= 0) {
            return null;
        }
        for (String label : s.split("\\.", -1)) {
            if (!LABEL.matcher(label).matches()) {
                return null;
            }
        }
        return s;
    }

    /** True for an IPv4 or IPv6 literal, bracketed or not. */
    public static boolean isAddressLiteral(String raw) {
        if (raw == null || raw.isEmpty()) {
            return false;
        }
        String s = raw.startsWith("[") && raw.endsWith("]") ? raw.substring(1, raw.length() - 1) : raw;
        return IPV4.matcher(s).matches() || s.indexOf(':') >= 0;
    }
}
