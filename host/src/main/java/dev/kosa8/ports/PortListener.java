package dev.kosa8.ports;

import dev.kosa8.host.KosaException;
import dev.kosa8.vm.AgentConnection;
import java.io.IOException;
import java.net.BindException;
import java.net.InetSocketAddress;
import java.net.StandardSocketOptions;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Consumer;
import java.util.function.Supplier;

/**
 * One published port's socket on the host: accepts connections and joins each
 * to the sandbox's agent as a {@link PortStream}, within the port's and the
 * sandbox's caps ({@link PortLimits}). A connection while the sandbox is not
 * running, or beyond a cap, is reset at once.
 */
final class PortListener implements AutoCloseable {
    private final PortMapping mapping;
    private final ServerSocketChannel server;
    private final Supplier<AgentConnection> agent;
    private final Slots slots;
    private final Consumer<String> log;
    private final Set<PortStream> open = ConcurrentHashMap.newKeySet();
    private volatile boolean capLogged;
    private volatile Thread acceptor;

    private PortListener(PortMapping mapping, ServerSocketChannel server, Supplier<AgentConnection> agent,
                         Slots slots, Consumer<String> log) {
        this.mapping = mapping;
        this.server = server;
        this.agent = agent;
        this.slots = slots;
        this.log = log;
    }

    /**
     * Binds the mapping's host address and port (any free one for port 0) and starts accepting.
     *
     * @param agent the sandbox's agent while it runs, else null
     * @throws KosaException naming the port and what to do when it is in use or cannot be bound
     */
    static PortListener bind(String sandbox, PortMapping mapping, Supplier<AgentConnection> agent, Slots slots,
                             Consumer<String> log) {
        ServerSocketChannel server = null;
        try {
            server = ServerSocketChannel.open();
            server.setOption(StandardSocketOptions.SO_REUSEADDR, true);
            server.bind(new InetSocketAddress(mapping.hostAddress(), mapping.hostPort()), 128);
            int port = ((InetSocketAddress) server.getLocalAddress()).getPort();
            PortListener l = new PortListener(mapping.bound(port), server, agent, slots, log);
            l.acceptor = Thread.ofVirtual().name("port-accept-" + port).start(l::acceptLoop);
            return l;
        } catch (IOException e) {
            if (server != null) {
                try {
                    server.close();
                } catch (IOException ignored) {
                    // closing anyway
                }
            }
            String where = mapping.hostAddress() + ":" + mapping.hostPort();
            if (e instanceof BindException && String.valueOf(e.getMessage()).contains("in use")) {
                throw new KosaException(KosaException.Kind.USAGE, "host port " + mapping.hostPort() + " on "
                        + mapping.hostAddress() + " is already in use by another program",
                        "choose another host port (`kosa8 port " + sandbox + " " + mapping.guestPort() + " HOST_PORT`)"
                                + ", or leave it out and kosa8 picks a free one", e);
            }
            throw new KosaException(KosaException.Kind.USAGE, "cannot listen on " + where + ": " + e.getMessage(),
                    "name an address of this machine, or leave it out for 127.0.0.1", e);
        }
    }

    PortMapping mapping() {
        return mapping;
    }

    /** Connections open through this port now. */
    int connections() {
        return open.size();
    }

    private void acceptLoop() {
        while (server.isOpen()) {
            SocketChannel client;
            try {
                client = server.accept();
            } catch (IOException e) {
                if (server.isOpen()) {
                    log.accept("port " + mapping + ": accepting failed (" + e.getMessage() + "); no longer listening");
                }
                return;
            }
            AgentConnection a = agent.get();
            if (a == null || !a.isOpen()) {
                abort(client); // not running: nothing to connect it to
                continue;
            }
            if (!slots.take()) {
                if (!capLogged) {
                    capLogged = true;
                    log.accept("port " + mapping + ": at its cap of open connections; resetting new ones until some"
                            + " end");
                }
                abort(client);
                continue;
            }
            capLogged = false;
            PortStream[] self = new PortStream[1];
            self[0] = new PortStream(client, a, mapping.guestPort(), m -> log.accept("port " + mapping + ": " + m),
                    () -> {
                        open.remove(self[0]);
                        slots.give();
                    });
            open.add(self[0]);
            self[0].start();
        }
    }

    /**
     * Stops listening, and resets every connection open through the port. Returns once the host port is free: a
     * channel closed while a thread accepts on it lets go of its socket only when that thread has left the accept.
     */
    @Override
    public void close() {
        try {
            server.close();
        } catch (IOException ignored) {
            // closed either way
        }
        Thread t = acceptor;
        if (t != null && t != Thread.currentThread()) {
            try {
                t.join(java.time.Duration.ofSeconds(5));
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        for (PortStream s : open) {
            s.reset(true);
        }
    }

    static void abort(SocketChannel c) {
        try {
            c.setOption(StandardSocketOptions.SO_LINGER, 0);
        } catch (IOException | RuntimeException ignored) {
            // closed as it is
        }
        try {
            c.close();
        } catch (IOException ignored) {
            // closed either way
        }
    }
}
