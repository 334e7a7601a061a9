package dev.kosa8.egress.tls;

import java.util.Locale;
import java.util.regex.Pattern;

/**
 * A host name a leaf certificate may be minted for: lower-case LDH labels of 1 to
 * 63 characters, no label starting or ending with '-', at most 253 characters.
 *
 * <p>Wildcards are refused so that a leaf never covers more than the one name the
 * guest asked for. IP literals are refused because the broker only intercepts
 * names it resolved itself; a name whose last label is numeric ({@code 1.2.3.4},
 * {@code 127.1}, {@code 0x7f.1}) is read as an IPv4 address by browsers and
 * URL parsers, so it is refused too. Characters are checked before lower-casing:
 * {@code "\u212A".toLowerCase()} is an ASCII {@code k}, and a non-ASCII name must
 * not turn into a different ASCII one on the way in.
 */
record DnsName(String value) {
    static final int MAX_LENGTH = 253;
    private static final Pattern LABEL = Pattern.compile("[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?");
    private static final Pattern ASCII_LDH = Pattern.compile("[A-Za-z0-9.-]+");
    private static final Pattern NUMERIC = Pattern.compile("[0-9]+|0x[0-9a-f]*");

    DnsName {
        if (value == null || value.isEmpty()) {
            throw new IllegalArgumentException("a host name is required");
        }
        if (value.length() > MAX_LENGTH) {
            throw new IllegalArgumentException("host name longer than " + MAX_LENGTH + " characters: " + value);
        }
        if (!ASCII_LDH.matcher(value).matches()) {
            throw new IllegalArgumentException("host name may hold only letters, digits, '-' and '.'"
                    + " (no wildcards, IPv6 literals or non-ASCII; use the xn-- form): " + value);
        }
        value = value.toLowerCase(Locale.ROOT);
        String[] labels = value.split("\\.", -1);
        for (String label : labels) {
            if (!LABEL.matcher(label).matches()) {
                throw new IllegalArgumentException("bad label '" + label + "' in host name " + value
                        + ": labels are 1 to 63 letters, digits or '-', not starting or ending with '-'");
            }
        }
        if (NUMERIC.matcher(labels[labels.length - 1]).matches()) {
            throw new IllegalArgumentException("an IP address is not a host name: " + value);
        }
    }

    @Override
    public String toString() {
        return value;
    }
}
