package dev.kosa8.image.oci;

import dev.kosa8.host.KosaException;
import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.HashMap;
import java.util.Map;
import java.util.TreeMap;
import java.util.function.Function;

/**
 * A PAX extended header's records ({@code "LEN key=value\n"}, LEN counting the whole record), their values kept
 * as bytes: an extended attribute's value is binary ({@code security.capability} is a kernel structure), and
 * GNU tar, Go's {@code archive/tar} (Docker, containerd, BuildKit) and star write it raw in
 * {@code SCHILY.xattr.NAME}; libarchive ({@code bsdtar}) writes {@code LIBARCHIVE.xattr.NAME}, NAME
 * percent-encoded and the value in base64. Both are read, within {@link ImportLimits#maxXattrs()} and
 * {@link ImportLimits#maxXattrBytes()} per member.
 */
final class PaxHeader {
    static final String SCHILY = "SCHILY.xattr.";
    static final String LIBARCHIVE = "LIBARCHIVE.xattr.";
    /** Linux's longest attribute name ({@code XATTR_NAME_MAX}). */
    static final int MAX_NAME_BYTES = 255;

    private PaxHeader() {
    }

    /** The records of one header, later ones replacing earlier ones of the same key. */
    static Map<String, byte[]> parse(byte[] b, Function<String, KosaException> bad) {
        Map<String, byte[]> out = new HashMap<>();
        int i = 0;
        while (i < b.length) {
            int sp = i;
            while (sp < b.length && b[sp] != ' ') {
                sp++;
            }
            if (sp == b.length || sp == i || sp - i > 10) {
                throw bad.apply("a PAX record has no length");
            }
            int len;
            try {
                len = Integer.parseInt(new String(b, i, sp - i, StandardCharsets.US_ASCII));
            } catch (NumberFormatException e) {
                throw bad.apply("a PAX record's length is not a number");
            }
            if (len <= sp - i + 1 || len > b.length - i || b[i + len - 1] != '\n') {
                throw bad.apply("a PAX record's length does not fit it");
            }
            int eq = sp + 1;
            int end = i + len - 1;
            while (eq < end && b[eq] != '=') {
                eq++;
            }
            if (eq == end || eq == sp + 1) {
                throw bad.apply("a PAX record has no key");
            }
            byte[] value = new byte[end - eq - 1];
            System.arraycopy(b, eq + 1, value, 0, value.length);
            out.put(new String(b, sp + 1, eq - sp - 1, StandardCharsets.UTF_8), value);
            i += len;
        }
        return out;
    }

    /** A record's value as text (UTF-8), as every record but an attribute's is. */
    static String text(byte[] value) {
        return new String(value, StandardCharsets.UTF_8);
    }

    /**
     * The member's extended attributes, by name ({@code security.capability}), in name order.
     *
     * @throws KosaException for a name that is empty, too long or holds a control character, a base64 value that
     *                       is not, or more attributes or bytes than the limits
     */
    static Map<String, byte[]> xattrs(Map<String, byte[]> pax, ImportLimits limits,
                                      Function<String, KosaException> bad) {
        Map<String, byte[]> out = new TreeMap<>();
        long bytes = 0;
        for (var r : pax.entrySet()) {
            String name;
            byte[] value;
            if (r.getKey().startsWith(SCHILY)) {
                name = r.getKey().substring(SCHILY.length());
                value = r.getValue();
            } else if (r.getKey().startsWith(LIBARCHIVE)) {
                name = percentDecoded(r.getKey().substring(LIBARCHIVE.length()), bad);
                try {
                    value = Base64.getDecoder().decode(r.getValue()); // padding optional: libarchive omits it
                } catch (IllegalArgumentException e) {
                    throw bad.apply("extended attribute " + printable(name) + " has a value that is not base64");
                }
            } else {
                continue;
            }
            checkName(name, bad);
            out.put(name, value);
            bytes += name.getBytes(StandardCharsets.UTF_8).length + value.length;
            if (out.size() > limits.maxXattrs()) {
                throw bad.apply("a member has more than " + limits.maxXattrs() + " extended attributes");
            }
            if (bytes > limits.maxXattrBytes()) {
                throw bad.apply("a member's extended attributes hold more than " + limits.maxXattrBytes()
                        + " bytes (names and values)");
            }
        }
        return out;
    }

    private static void checkName(String name, Function<String, KosaException> bad) {
        if (name.isEmpty() || name.getBytes(StandardCharsets.UTF_8).length > MAX_NAME_BYTES) {
            throw bad.apply("an extended attribute's name is empty or longer than " + MAX_NAME_BYTES + " bytes");
        }
        // printable ASCII but space, quote and backslash: what real attribute names are made of (user.mime_type,
        // security.capability), and nothing the disk writer's debugfs script would read as more than a name
        for (int i = 0; i < name.length(); i++) {
            char c = name.charAt(i);
            if (c <= 0x20 || c >= 0x7f || c == '"' || c == '\\') {
                throw bad.apply("extended attribute " + printable(name) + " has a character other than printable"
                        + " ASCII (and not a space, quote or backslash) in its name");
            }
        }
    }

    /** libarchive's names: {@code %XX} for bytes outside printable ASCII and for {@code %} and {@code =}. */
    private static String percentDecoded(String s, Function<String, KosaException> bad) {
        byte[] raw = s.getBytes(StandardCharsets.UTF_8);
        byte[] out = new byte[raw.length];
        int n = 0;
        for (int i = 0; i < raw.length; i++) {
            if (raw[i] == '%') {
                int hi = i + 2 < raw.length ? Character.digit(raw[i + 1], 16) : -1;
                int lo = i + 2 < raw.length ? Character.digit(raw[i + 2], 16) : -1;
                if (hi < 0 || lo < 0) {
                    throw bad.apply("extended attribute name " + printable(s) + " has a bad %-escape");
                }
                out[n++] = (byte) (hi << 4 | lo);
                i += 2;
            } else {
                out[n++] = raw[i];
            }
        }
        return new String(out, 0, n, StandardCharsets.UTF_8);
    }

    static String printable(String s) {
        StringBuilder b = new StringBuilder();
        s.codePoints().limit(80).forEach(c -> {
            if (c < 0x20 || c == 0x7f) {
                b.append(String.format("\\x%02x", c));
            } else {
                b.appendCodePoint(c);
            }
        });
        return b.toString();
    }
}
