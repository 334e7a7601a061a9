package dev.kosa8.egress;

import java.net.Inet4Address;
import java.net.Inet6Address;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.util.Arrays;

/**
 * A block of addresses in CIDR notation ({@code 203.0.113.0/24},
 * {@code fd00:1::/48}, or one address alone), as an address exception names
 * it. A value with no I/O: parsing takes address literals only, never a name.
 *
 * <p>Blocks wider than {@value #WIDEST_V4} bits of IPv4 or {@value #WIDEST_V6}
 * bits of IPv6 are refused: an exception names where a mirror lives, and
 * {@code 0.0.0.0/0} would be the blanket switch the address check exists to
 * prevent. Host bits set beyond the prefix are refused too, so what is
 * written is what is meant.
 */
public record AddressRange(byte[] network, int prefix) {
    /** The widest IPv4 block an exception may name (all of 10.0.0.0/8). */
    static final int WIDEST_V4 = 8;
    /** The widest IPv6 block an exception may name (all of fc00::/7, unique-local). */
    static final int WIDEST_V6 = 7;

    public AddressRange {
        network = network.clone();
        if (network.length != 4 && network.length != 16) {
            throw new IllegalArgumentException("an address has 4 or 16 bytes, not " + network.length);
        }
        if (prefix < 0 || prefix > network.length * 8) {
            throw new IllegalArgumentException("prefix /" + prefix + " out of range");
        }
    }

    /** Parses {@code ADDRESS/BITS} or a lone address (all its bits). */
    public static AddressRange parse(String text) {
        String s = text.strip();
        int slash = s.indexOf('/');
        String addr = slash < 0 ? s : s.substring(0, slash);
        if (addr.isEmpty() || !addr.matches("[0-9a-fA-F.:]+")) {
            throw new IllegalArgumentException("'" + text + "' is not an address block: write ADDRESS/BITS, such as "
                    + "203.0.113.0/24 or fd00:1::/48");
        }
        byte[] bytes;
        try {
            InetAddress a = InetAddress.getByName(addr); // a literal, by the check above: no lookup happens
            bytes = a.getAddress();
        } catch (UnknownHostException e) {
            throw new IllegalArgumentException("'" + text + "' is not an address block: " + addr
                    + " is not an IP address");
        }
        int bits = bytes.length * 8;
        if (slash >= 0) {
            try {
                bits = Integer.parseInt(s.substring(slash + 1));
            } catch (NumberFormatException e) {
                throw new IllegalArgumentException("'" + text + "' has no prefix length after the '/'");
            }
            if (bits < 0 || bits > bytes.length * 8) {
                throw new IllegalArgumentException("'" + text + "': the prefix length must be 0 to "
                        + bytes.length * 8);
            }
        }
        int widest = bytes.length == 4 ? WIDEST_V4 : WIDEST_V6;
        if (bits < widest) {
            throw new IllegalArgumentException("'" + text + "' is wider than /" + widest + ": an exception names "
                    + "the block a mirror or registry lives in, never a large part of the address space");
        }
        byte[] masked = mask(bytes, bits);
        if (!Arrays.equals(masked, bytes)) {
            throw new IllegalArgumentException("'" + text + "' has bits set after the first " + bits + "; write "
                    + format(masked) + "/" + bits);
        }
        return new AddressRange(bytes, bits);
    }

    /**
     * Whether {@code a} is in the block. An IPv4-mapped IPv6 address counts as
     * its IPv4 address, as the address check reads it.
     */
    public boolean contains(InetAddress a) {
        byte[] b = a.getAddress();
        if (a instanceof Inet6Address && network.length == 4 && isV4Mapped(b)) {
            b = Arrays.copyOfRange(b, 12, 16);
        }
        if (b.length != network.length) {
            return false;
        }
        return Arrays.equals(mask(b, prefix), network);
    }

    private static boolean isV4Mapped(byte[] b) {
        for (int i = 0; i < 10; i++) {
            if (b[i] != 0) {
                return false;
            }
        }
        return (b[10] & 0xff) == 0xff && (b[11] & 0xff) == 0xff;
    }

    private static byte[] mask(byte[] b, int bits) {
        byte[] out = b.clone();
        for (int i = 0; i < out.length; i++) {
            int keep = Math.max(0, Math.min(8, bits - i * 8));
            out[i] = (byte) (out[i] & (0xff00 >> keep));
        }
        return out;
    }

    private static String format(byte[] b) {
        try {
            InetAddress a = b.length == 4 ? Inet4Address.getByAddress(b) : Inet6Address.getByAddress(b);
            return a.getHostAddress();
        } catch (UnknownHostException e) {
            throw new IllegalStateException(e);
        }
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof AddressRange r && r.prefix == prefix && Arrays.equals(r.network, network);
    }

    @Override
    public int hashCode() {
        return Arrays.hashCode(network) * 31 + prefix;
    }

    @Override
    public String toString() {
        return (network.length == 4 ? format(network) : compressed(network)) + "/" + prefix;
    }

    /** IPv6 as people write it: hexadecimal groups, the longest run of two or more zero groups as "::". */
    private static String compressed(byte[] b) {
        int[] g = new int[8];
        for (int i = 0; i < 8; i++) {
            g[i] = (b[2 * i] & 0xff) << 8 | b[2 * i + 1] & 0xff;
        }
        int bestStart = -1;
        int bestLen = 1;
        for (int i = 0; i < 8; ) {
            int j = i;
            while (j < 8 && g[j] == 0) {
                j++;
            }
            if (j - i > bestLen) {
                bestStart = i;
                bestLen = j - i;
            }
            i = j == i ? i + 1 : j;
        }
        StringBuilder out = new StringBuilder();
        for (int i = 0; i < 8; i++) {
            if (i == bestStart) {
                out.append("::");
                i += bestLen - 1;
                continue;
            }
            if (out.length() > 0 && out.charAt(out.length() - 1) != ':') {
                out.append(':');
            }
            out.append(Integer.toHexString(g[i]));
        }
        return out.toString();
    }
}
