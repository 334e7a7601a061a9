package dev.kosa8.protocol;

/**
 * Published ports: a TCP service listening inside the guest reached from the
 * host's loopback (docs/ports.md). Defined here once for the agent and the
 * daemon.
 *
 * <p>The host opens every stream. The daemon accepts a connection on the host's
 * side and sends {@link Message.Connect} on the agent's own port, the channel
 * that carries commands and file transfers; the agent connects to the port on
 * the guest's loopback ({@link #GUEST_ADDRESS}, then {@link #GUEST_ADDRESS_V6}
 * when that is refused) and answers {@link Message.Started}, or
 * {@link Message.Failed}. The connection's bytes then flow as an exec's streams
 * do, stdin towards the guest and stdout back, each within {@link #WINDOW} until
 * credited. The guest sends nothing on such a stream that an exec's does not,
 * and nothing that opens a stream: a {@code Connect} from the guest breaks the
 * protocol.
 */
public final class PortLink {
    /** Where the agent connects inside the guest. */
    public static final String GUEST_ADDRESS = "127.0.0.1";
    /** Where it connects when nothing accepts on {@link #GUEST_ADDRESS} (a server bound to IPv6's loopback only). */
    public static final String GUEST_ADDRESS_V6 = "::1";
    /**
     * Bytes one direction of a port's stream may have in flight before the receiver credits them back: what the
     * daemon holds at most per connection of the guest's bytes while the host's client does not read. A quarter of
     * an exec stream's window, as the network link's: a sandbox may hold many.
     */
    public static final int WINDOW = 256 * 1024;
    /** The most bytes of one {@link Message.Data} on a port's stream. */
    public static final int CHUNK = 64 * 1024;
    /** How long the agent waits for the guest's service to accept, in milliseconds. */
    public static final int CONNECT_MILLIS = 5_000;

    private PortLink() {
    }
}
