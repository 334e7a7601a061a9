package dev.kosa8.protocol;

import java.util.List;

/**
 * The sandbox's network link between guest and host, defined here once for
 * its two ends: the agent, which listens where the guest's programs connect
 * ({@link #GUEST_ADDRESS} on {@link #PORTS}, an address on the guest's
 * loopback interface: the guest has no network device), and the daemon,
 * which hands each connection to the sandbox's egress broker
 * ({@code dev.kosa8.egress.GuestLink}). docs/network.md tells the whole path.
 *
 * <p>The link is a virtio-serial port of its own ({@link #PORT_NAME}) carrying
 * the protocol's frames ({@link Codec}). The host starts each session with a
 * {@link Message.Hello}, which the agent answers; everything the agent sent
 * before its answer belongs to an earlier session and is dropped. Each guest
 * connection is a stream on a channel the agent picks:
 * <ul>
 *   <li>{@link Message.NetOpen} (agent to host): a guest program connected to one of the ports. That port is all
 *       the stream says about where it goes; the guest cannot name a sandbox, a socket or a host here.</li>
 *   <li>{@link Message.Data} and {@link Message.Eof}: the connection's bytes and its half-closes,
 *       {@link Message.Stream#STDOUT} from the guest, {@link Message.Stream#STDIN} towards it, as an exec's
 *       streams run.</li>
 *   <li>{@link Message.Credit}: flow control per direction, as for exec streams: a receiver credits bytes once it
 *       has written them on (into the guest's socket, into the broker's), so each side holds at most one window
 *       per stream and direction: {@link #WINDOW} bytes from the guest; towards it {@link #OPEN_WINDOW} at first,
 *       grown by the agent up to {@link #DOWN_WINDOW} within {@link #DOWN_BUDGET} over all streams.</li>
 *   <li>{@link Message.NetWindowData} (host to agent): a Data towards the guest whose bytes lie in a slot of the
 *       network window ({@link #WINDOW_SERIAL}), a read-only disk, rather than in the frame; the agent reads the slot
 *       and gives it back ({@link Message.NetWindowReturn}). The host sends these only to an agent that said it reads
 *       the window ({@link Message.NetWindowReady}), only while a slot is free, and only for pieces large enough to be
 *       worth a block request; everything else goes through the port as before.</li>
 *   <li>{@link Message.NetReset} (either way): the stream ends at once. From the host it refuses a stream (beyond
 *       {@link #MAX_STREAMS}, or a port with no listener), or says the broker's side broke off; the agent resets
 *       the guest's connection, so the program sees ECONNRESET at once rather than waiting.</li>
 * </ul>
 * A stream is over for a side once both directions have ended (an Eof each way) or it was reset; late messages for a
 * channel a side no longer knows are dropped.
 */
public final class NetLink {
    /** The virtio-serial port the link crosses ({@code virtserialport,name=...}). */
    public static final String PORT_NAME = "dev.kosa8.net";
    /** Where the broker answers inside the guest: an address on the guest's loopback interface. */
    public static final String GUEST_ADDRESS = "10.0.2.100";
    /** The guest ports that lead to the broker: DNS over TCP, plain HTTP, TLS, the HTTP proxy. */
    public static final List<Integer> PORTS = List.of(53, 80, 443, 3128);
    /**
     * Bytes a stream may have in flight in one direction before its receiver credits them back. Smaller than an
     * exec stream's {@link Limits#INITIAL_WINDOW}: a guest may hold {@link #MAX_STREAMS} of these at once, and each
     * side may have to hold one window per stream and direction while the far end does not read.
     */
    public static final int WINDOW = 256 * 1024;
    /**
     * The window a stream starts with towards the guest. The agent grows it, up to {@link #DOWN_WINDOW}, as it credits
     * what it wrote into the guest's socket, while what it has granted over all streams stays within
     * {@link #DOWN_BUDGET}: so the host's bytes that guest programs do not read cost the agent a bounded heap, and
     * the agent never has to stop reading the port for them (which would stall every stream behind one).
     */
    public static final int OPEN_WINDOW = 32 * 1024;
    /**
     * The most a stream's window towards the guest grows to: four times {@link #WINDOW}. A stream moves at most a
     * window per round trip of its credits (the guest's socket, the agent, the port and QEMU's main loop, then the
     * daemon: about 10 ms under TCG here), so a 256 KiB window held a download to about 25 MB/s; at 1 MiB the
     * link itself is the limit (docs/network.md, "Throughput"). It costs no memory bound: what the agent grants
     * over all streams stays within {@link #DOWN_BUDGET}, and the daemon holds towards the guest what the port
     * takes plus two reads per stream, whatever the window.
     */
    public static final int DOWN_WINDOW = 4 * WINDOW;
    /**
     * The most the agent grants over all streams towards the guest: every stream's {@link #OPEN_WINDOW} (one per
     * stream up to {@link #AGENT_STREAMS}, kept for streams not yet open) and as much again for the windows it grows.
     */
    public static final long DOWN_BUDGET = 2L * NetLink.AGENT_STREAMS * OPEN_WINDOW;
    /**
     * The most bytes of one {@link Message.Data} on the link. Under the 32 KiB that the guest's virtio-console
     * driver takes per write, so a frame's header and its bytes cross the port in one piece.
     */
    public static final int CHUNK = 32 * 1024 - 64;
    /**
     * Open streams per sandbox to the broker's HTTP, TLS and proxy ports: the daemon refuses more (as the broker does
     * connections), and its audit log says so.
     */
    public static final int MAX_STREAMS = 256;
    /**
     * Open DNS streams per sandbox, apart from {@link #MAX_STREAMS}: a sandbox at its cap still resolves names, so
     * its programs get the clear answer, a connection reset, not a failed lookup. The daemon refuses more.
     */
    public static final int DNS_STREAMS = 16;
    /**
     * The most streams the agent has open at once: the daemon's caps, and as many more again as may be on their way
     * to its refusal (the daemon decides, and says so in its audit log; the agent only bounds its own memory).
     * Beyond it the agent resets a connection itself.
     */
    public static final int AGENT_STREAMS = MAX_STREAMS + DNS_STREAMS + 32;

    /**
     * The serial number of the network window's disk: a read-only virtio-blk disk the daemon writes a stream's larger
     * pieces into and the agent reads with O_DIRECT ({@link Message.NetWindowData}). Why: towards the guest the port
     * moves 4 KiB per turn of QEMU's main loop (its socket chardev reads no more at once), which held a download to
     * half of what QEMU's own user network reached; a block request moves a whole slot in one.
     */
    public static final String WINDOW_SERIAL = "kosa8-net-window";
    /** The bytes of a slot's header: the serial it was lent under (8 bytes), its count (4) and channel (4), little-endian. */
    public static final int SLOT_HEADER = 16;
    /**
     * The most bytes one slot carries: 256 KiB, a quarter of {@link #DOWN_WINDOW}, so a stream's window is four
     * pieces in flight. A piece costs the guest a block request, a pread, the relay's turn and a credit whatever its
     * size, and under TCG that cost per piece, not the copying, is most of a download's (docs/network.md,
     * "Throughput"): 128 KiB slots spent about twice as much of the agent's CPU per byte.
     */
    public static final int SLOT_DATA = 256 * 1024;
    /** A slot's size in the window: its header and data, rounded up to whole 4 KiB pages (O_DIRECT reads sectors). */
    public static final int SLOT_SIZE = (SLOT_HEADER + SLOT_DATA + 4095) / 4096 * 4096;
    /** Slots in the window: eight streams' full windows ({@link #DOWN_WINDOW}) at once. */
    public static final int SLOTS = 32;
    /** The window's size in bytes, the size of the file the daemon makes for each QEMU. */
    public static final long WINDOW_BYTES = (long) SLOTS * SLOT_SIZE;

    private NetLink() {
    }

    static void checkSlot(int slot) {
        if (slot < 0 || slot >= SLOTS) {
            throw new ProtocolException("window slot " + slot + " is out of range 0.." + (SLOTS - 1));
        }
    }

    static void checkPort(int port) {
        if (port < 1 || port > 65535) {
            throw new ProtocolException("port " + port + " is out of range 1..65535");
        }
    }
}
