package dev.kosa8.ports;

import dev.kosa8.host.KosaException;
import java.net.InetAddress;
import java.net.UnknownHostException;

/**
 * One published port of a sandbox, as its record keeps it: connections to
 * {@code hostAddress:hostPort} on the host reach {@code guestPort} on the
 * guest's loopback. A value; {@link #parse} reads the CLI's {@code -p} form.
 *
 * @param guestPort   the port a service listens on inside the sandbox, 1..65535
 * @param hostAddress the host address listened on: {@code 127.0.0.1} unless the user named another
 * @param hostPort    the host port, 1..65535; 0 in a request: any free one, chosen when it is bound
 */
public record PortMapping(int guestPort, String hostAddress, int hostPort) {
    /** The address a port is published on unless the user names another: the host's loopback alone. */
    public static final String LOOPBACK = "127.0.0.1";

    public PortMapping {
        checkPort("guest port", guestPort, false);
        checkPort("host port", hostPort, true);
        hostAddress = hostAddress == null || hostAddress.isEmpty() ? LOOPBACK : hostAddress;
        if (!isLiteral(hostAddress)) {
            throw usage("host address '" + hostAddress + "' is not an IP address",
                    "name the host address as digits (127.0.0.1, 0.0.0.0, ::1), or leave it out for 127.0.0.1");
        }
    }

    /** A mapping on the host's loopback. */
    public static PortMapping loopback(int guestPort, int hostPort) {
        return new PortMapping(guestPort, LOOPBACK, hostPort);
    }

    /**
     * Reads {@code GUEST}, {@code HOST:GUEST} or {@code ADDRESS:HOST:GUEST} (an IPv6 address in brackets:
     * {@code [::1]:8080:80}); a HOST of 0 or left out means any free port.
     */
    public static PortMapping parse(String spec) {
        String s = spec.strip();
        String address = "";
        if (s.startsWith("[")) {
            int close = s.indexOf("]:");
            if (close < 0) {
                throw bad(spec);
            }
            address = s.substring(1, close);
            s = s.substring(close + 2);
            if (!s.contains(":")) {
                throw bad(spec);
            }
        }
        String[] parts = s.split(":", -1);
        return switch (parts.length) {
            case 1 -> loopback(number(parts[0], spec), 0);
            case 2 -> new PortMapping(number(parts[1], spec), address, number(parts[0], spec));
            case 3 -> {
                if (!address.isEmpty()) {
                    throw bad(spec);
                }
                yield new PortMapping(number(parts[2], spec), parts[0], number(parts[1], spec));
            }
            default -> throw bad(spec);
        };
    }

    /** Whether the host address is a loopback one: reachable from this machine alone. */
    public boolean loopbackOnly() {
        try {
            return InetAddress.getByName(hostAddress).isLoopbackAddress();
        } catch (UnknownHostException e) {
            return false;
        }
    }

    /** The same mapping on the host port that was bound. */
    public PortMapping bound(int port) {
        return new PortMapping(guestPort, hostAddress, port);
    }

    /** How a user reads it: {@code 127.0.0.1:8080->80}. */
    @Override
    public String toString() {
        String a = hostAddress.contains(":") ? "[" + hostAddress + "]" : hostAddress;
        return a + ":" + hostPort + "->" + guestPort;
    }

    private static boolean isLiteral(String address) {
        if (address.contains(":")) {
            return address.matches("[0-9A-Fa-f:.]+");
        }
        return address.matches("\\d{1,3}(\\.\\d{1,3}){3}")
                && java.util.Arrays.stream(address.split("\\.")).allMatch(o -> Integer.parseInt(o) <= 255);
    }

    private static int number(String s, String spec) {
        if (s.isEmpty() || s.length() > 5 || !s.chars().allMatch(Character::isDigit)) {
            throw bad(spec);
        }
        return Integer.parseInt(s);
    }

    private static void checkPort(String what, int port, boolean zeroAllowed) {
        if (port < (zeroAllowed ? 0 : 1) || port > 65535) {
            throw usage(what + " " + port + " is out of range 1..65535", "ports are numbers from 1 to 65535");
        }
    }

    private static KosaException bad(String spec) {
        return usage("cannot read the port '" + spec + "'",
                "write GUEST (e.g. 8000), HOST:GUEST (8080:8000) or ADDRESS:HOST:GUEST (0.0.0.0:8080:8000)");
    }

    private static KosaException usage(String what, String todo) {
        return new KosaException(KosaException.Kind.USAGE, what, todo);
    }
}
