package dev.kosa8.egress;

/**
 * The broker's four entry points. Inside the guest each is a TCP port on
 * {@link #GUEST_ADDRESS}, forwarded by QEMU's {@code guestfwd} to a unix
 * socket of this sandbox's broker; which socket a connection arrives on is
 * the only thing the broker believes about where it came from.
 */
public enum Listener {
    DNS(53, "dns.sock"),
    HTTP(80, "http.sock"),
    TLS(443, "tls.sock"),
    PROXY(3128, "proxy.sock");

    /** The guest-side address of every listener; never a real host. */
    public static final String GUEST_ADDRESS = "10.0.2.100";

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

    /** The name the audit log uses. */
    public String label() {
        return name().toLowerCase(java.util.Locale.ROOT);
    }
}
