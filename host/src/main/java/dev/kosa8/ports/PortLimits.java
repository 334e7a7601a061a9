package dev.kosa8.ports;

/**
 * How much a sandbox's published ports may hold in the daemon: connections
 * per port and per sandbox, and ports per sandbox. Each connection holds at
 * most one window of the guest's bytes ({@link dev.kosa8.protocol.PortLink#WINDOW},
 * 256 KiB) and two virtual threads, so the defaults bound a sandbox's ports at
 * 32 MiB of the daemon's heap. A connection beyond a cap is accepted and reset
 * at once (the client sees ECONNRESET, not a hang), and the daemon's log says so
 * once per port until the count falls.
 *
 * @param perPort    open connections to one published port
 * @param perSandbox open connections to all of a sandbox's published ports
 * @param ports      ports a sandbox may publish
 */
public record PortLimits(int perPort, int perSandbox, int ports) {
    public static final PortLimits DEFAULT = new PortLimits(64, 128, 32);

    public PortLimits {
        if (perPort < 1 || perSandbox < 1 || ports < 1) {
            throw new IllegalArgumentException("port limits must be positive: " + perPort + ", " + perSandbox + ", "
                    + ports);
        }
    }
}
