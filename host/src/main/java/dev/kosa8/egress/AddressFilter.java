package dev.kosa8.egress;

import java.net.Inet4Address;
import java.net.Inet6Address;
import java.net.InetAddress;

/**
 * Which resolved addresses the broker may dial: public unicast only. Applied
 * to the address the broker itself resolved and is about to dial, so a name
 * that is allowed but resolves (or is re-bound) to the host's loopback, the
 * LAN, a cloud metadata service or a carrier-grade NAT cannot carry the
 * guest there.
 */
public final class AddressFilter {

    private AddressFilter() {
    }

    /** Null when the address may be dialed, else why not. */
    public static String refusal(InetAddress a) {
        if (a instanceof Inet6Address v6) {
            byte[] b = v6.getAddress();
            if (isV4Mapped(b) || isV4Compatible(b) || isNat64(b)) {
                byte[] v4 = {b[12], b[13], b[14], b[15]};
                return refusalV4(v4);
            }
            if (v6.isLoopbackAddress() || v6.isAnyLocalAddress()) {
                return "loopback";
            }
            if (v6.isLinkLocalAddress() || (b[0] & 0xff) == 0xfe && (b[1] & 0xc0) == 0x80) {
                return "link-local";
            }
            if ((b[0] & 0xfe) == 0xfc) {
                return "private (unique local)";
            }
            if (v6.isSiteLocalAddress()) {
                return "private (site local)";
            }
            if (v6.isMulticastAddress()) {
                return "multicast";
            }
            if ((b[0] & 0xff) == 0x20 && (b[1] & 0xff) == 0x01 && (b[2] & 0xff) == 0x0d && (b[3] & 0xff) == 0xb8) {
                return "documentation range";
            }
            return null;
        }
        if (a instanceof Inet4Address v4) {
            return refusalV4(v4.getAddress());
        }
        return "unknown address family";
    }

    private static String refusalV4(byte[] b) {
        int o0 = b[0] & 0xff;
        int o1 = b[1] & 0xff;
        int o2 = b[2] & 0xff;
        if (o0 == 127) {
            return "loopback";
        }
        if (o0 == 0) {
            return "this-network";
        }
        if (o0 == 10 || o0 == 172 && (o1 & 0xf0) == 16 || o0 == 192 && o1 == 168) {
            return "private";
        }
        if (o0 == 169 && o1 == 254) {
            return "link-local (cloud metadata lives here)";
        }
        if (o0 == 100 && (o1 & 0xc0) == 64) {
            return "carrier-grade NAT";
        }
        if (o0 == 192 && o1 == 0 && o2 == 0) {
            return "IETF protocol assignments";
        }
        if (o0 == 198 && (o1 & 0xfe) == 18) {
            return "benchmarking range";
        }
        if (o0 == 192 && o1 == 0 && o2 == 2 || o0 == 198 && o1 == 51 && o2 == 100 || o0 == 203 && o1 == 0
                && o2 == 113) {
            return "documentation range";
        }
        if (o0 >= 224) {
            return o0 < 240 ? "multicast" : "reserved or broadcast";
        }
        return null;
    }

    private static boolean isV4Mapped(byte[] b) {
        for (int i = 0; i < 10; i++) {
            if (b[i] != 0) {
                return false;
            }
        }
        return (b[10] & 0xff) == 0xff && (b[11] & 0xff) == 0xff;
    }

    private static boolean isV4Compatible(byte[] b) {
        for (int i = 0; i < 12; i++) {
            if (b[i] != 0) {
                return false;
            }
        }
        return (b[12] | b[13]) != 0; // not :: or ::1, which the loopback and any-local checks see
    }

    /** 64:ff9b::/96, the well-known NAT64 prefix, reaches the IPv4 address in its last four bytes. */
    private static boolean isNat64(byte[] b) {
        if (!(b[0] == 0 && b[1] == 0x64 && (b[2] & 0xff) == 0xff && (b[3] & 0xff) == 0x9b)) {
            return false;
        }
        for (int i = 4; i < 12; i++) {
            if (b[i] != 0) {
                return false;
            }
        }
        return true;
    }
}
