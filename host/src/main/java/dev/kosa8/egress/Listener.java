package dev.kosa8.egress;

/**
 * The broker's four entry points. Inside the guest each is a TCP port on
 * {@link #GUEST_ADDRESS}, where the agent takes the connection and carries it
 * over the sandbox's network link ({@link GuestLink}) to a unix socket of this
 * sandbox's broker; which socket a connection arrives on is the only thing the
 * broker believes about where it came from. The ports are those the agent
 * listens on ({@code dev.kosa8.protocol.NetLink#PORTS}).
 */
public enum Listener {
    DNS(53, "dns.sock"),
    HTTP(80, "http.sock"),
    TLS(443, "tls.sock"),
    PROXY(3128, "proxy.sock");

    /** The guest-side address of every listener; never a real host. */
    public static final String GUEST_ADDRESS = dev.kosa8.protocol.NetLink.GUEST_ADDRESS;

    private final int guestPort;
    private final String socketName;

    Listener(int guestPort, String socketName) {
        this.guestPort = guestPort;
        this.socketName = socketName;
    }

    public int guestPort() {
        return guestPort;
    }

    public String socketName() {
        return socketName;
    }

    /** The listener a guest reaches on {@code port} of {@link #GUEST_ADDRESS}; null for any other port. */
    public static Listener ofGuestPort(int port) {
        for (Listener l : values()) {
            if (l.guestPort == port) {
                return l;
            }
        }
        return null;
    }

    /** The name the audit log uses. */
    public String label() {
        return name().toLowerCase(java.util.Locale.ROOT);
    }
}
