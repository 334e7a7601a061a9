package dev.kosa8.agent;

import dev.kosa8.protocol.FrameReader;
import dev.kosa8.protocol.Limits;
import dev.kosa8.protocol.Message;
import dev.kosa8.protocol.NetLink;
import java.io.BufferedInputStream;
import java.io.FileInputStream;
import java.io.FileOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.RandomAccessFile;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The network link's port in the guest ({@link NetLink#PORT_NAME}), for a
 * sandbox with a network ({@code kosa8.net=1} on the kernel command line):
 * opens it, starts the {@link NetRelay} on the broker's address, and reads
 * the host's messages for the agent's whole life, one session after another.
 *
 * <p>A session begins with the host's Hello and ends when the host goes: the
 * port then reads as end of file (QEMU tells the guest its host has gone),
 * unbroken for {@link dev.kosa8.protocol.Limits#HOST_GONE_MILLIS} ({@link PortInput}:
 * the guest can be told of a going out of order with the bytes around it), and
 * is polled until one connects, or a new Hello comes in the middle of a
 * session (a machine restored from a saved state, whose host is new, or a
 * host that went while the machine was stopped). Either way the relay resets
 * every stream of the session before, so no connection of a checkpoint's, a
 * template's or an earlier daemon's reaches the new host.
 *
 * <p>A {@link Message.NetWindowData} is turned back here into the Data it stands for, read from the network window
 * ({@link NetWindowReader}); the relay gives its slot back.
 */
final class NetPort {
    /** How often a port with no host is read again. */
    static final long POLL_MILLIS = 50;

    private NetPort() {
    }

    /** Starts the link if the guest has a network; returns at once. */
    static void startIfNetworked(long bootMillis) {
        if (!networked()) {
            return;
        }
        Thread t = new Thread(() -> {
            try {
                Path device = VirtioPort.find(NetLink.PORT_NAME, 30_000);
                RandomAccessFile port = VirtioPort.open(device);
                Map<Integer, InetSocketAddress> bind = new LinkedHashMap<>();
                InetAddress address = InetAddress.getByName(NetLink.GUEST_ADDRESS);
                for (int p : NetLink.PORTS) {
                    bind.put(p, new InetSocketAddress(address, p));
                }
                NetRelay relay = new NetRelay(bind, new FileOutputStream(port.getFD()));
                relay.start();
                Log.info("network: listening on " + NetLink.GUEST_ADDRESS + " " + NetLink.PORTS + ", link on " + device);
                serve(new FileInputStream(port.getFD()), relay, NetWindowReader.open(), bootMillis, POLL_MILLIS,
                        dev.kosa8.protocol.Limits.HOST_GONE_MILLIS);
            } catch (IOException | RuntimeException e) {
                Log.info("network: cannot start (" + e + "); the sandbox has no network");
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }, "net-port");
        t.setDaemon(true);
        t.start();
    }

    private static boolean networked() {
        try {
            for (String word : Files.readString(Path.of("/proc/cmdline")).strip().split("\\s+")) {
                if (word.equals("kosa8.net=1")) {
                    return true;
                }
            }
        } catch (IOException e) {
            Log.info("network: cannot read the kernel command line: " + e.getMessage());
        }
        return false;
    }

    /**
     * Frames read from the port through a buffer that never asks the port what it cannot tell, and that sees end of
     * file only once the host has been gone for {@code graceMillis} ({@link PortInput}).
     */
    private static FrameReader reader(InputStream port, long graceMillis, long pollMillis) {
        return new FrameReader(new BufferedInputStream(new PortInput(port, graceMillis, pollMillis), 1 << 18));
    }

    /**
     * Reads the host's messages from the port forever. End of file unbroken for {@code graceMillis} means no host:
     * the session (if any) ends and the port is read again every {@code pollMillis}. What comes outside a session
     * is dropped.
     *
     * @param window the network window, or null: the host is then not told the agent reads it, and sends every byte
     *               through the port
     */
    static void serve(InputStream port, NetRelay relay, NetWindowReader window, long bootMillis, long pollMillis,
                      long graceMillis) throws InterruptedException {
        FrameReader reader = reader(port, graceMillis, pollMillis);
        boolean session = false;
        while (true) {
            Message m;
            try {
                m = reader.read();
            } catch (IOException | RuntimeException e) {
                if (!(e instanceof java.io.EOFException)) {
                    Log.info("network link: dropping what the host sent (" + e.getMessage() + ")");
                }
                m = null;
            }
            if (m == null) {
                if (session) {
                    relay.endSession();
                    session = false;
                }
                // a fresh buffer: nothing of a stream that ended may be read as the start of the next
                reader = reader(port, graceMillis, pollMillis);
                Thread.sleep(pollMillis);
                continue;
            }
            if (m instanceof Message.Hello h) {
                if (h.version() != Limits.VERSION) {
                    Log.info("network link: the host speaks protocol " + h.version() + ", this agent "
                            + Limits.VERSION + "; no network until one that speaks it connects");
                    if (session) {
                        relay.endSession();
                    }
                    session = false;
                    continue;
                }
                relay.beginSession(new Message.Hello(Limits.VERSION, AgentMain.SOFTWARE, bootMillis), window != null);
                session = true;
            } else if (session && m instanceof Message.NetWindowData d) {
                relay.fromWindow(d, window == null ? null : window.read(d));
            } else if (session) {
                relay.fromHost(m);
            }
        }
    }
}
