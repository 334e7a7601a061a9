package dev.kosa8.egress;

import java.net.InetAddress;
import java.util.List;
import java.util.Optional;

/**
 * One user setting that lets the names {@code host} matches be dialed at
 * addresses in {@code ranges}, although the address check refuses those
 * ranges by default (a company mirror on a private address; a registry
 * that, on a machine behind an intercepting proxy, resolves into a reserved
 * range). Names only by exact name or {@code *.domain}; it widens nothing
 * for any other name, and it allows no host: the allow-list still decides
 * which names a sandbox may reach at all.
 */
public record AddressException(HostPattern host, List<AddressRange> ranges) {

    public AddressException {
        ranges = List.copyOf(ranges);
        if (host.port() != 0) {
            throw new IllegalArgumentException("an address exception names a host, not a port: " + host);
        }
        if (ranges.isEmpty()) {
            throw new IllegalArgumentException("the address exception for " + host + " names no address block");
        }
    }

    /** Parses {@code host} (a name or {@code *.domain}) and its blocks; a bad one is an error naming it. */
    public static AddressException parse(String host, List<String> ranges) {
        HostPattern pattern = HostPattern.parse(host);
        if (pattern.port() != 0) {
            throw new IllegalArgumentException("'" + host + "' names a port; an address exception applies to a name "
                    + "whatever the port (the allow-list decides the ports)");
        }
        return new AddressException(pattern, ranges.stream().map(AddressRange::parse).toList());
    }

    /** The block {@code a} lies in, when {@code name} is one of this exception's names. */
    public Optional<AddressRange> covering(String name, InetAddress a) {
        if (!host.matchesName(name)) {
            return Optional.empty();
        }
        return ranges.stream().filter(r -> r.contains(a)).findFirst();
    }

    /** As {@code kosa8 net} and the audit log show it: {@code deb.debian.org -> 203.0.113.0/24}. */
    @Override
    public String toString() {
        return host + " -> " + String.join(", ", ranges.stream().map(AddressRange::toString).toList());
    }
}
