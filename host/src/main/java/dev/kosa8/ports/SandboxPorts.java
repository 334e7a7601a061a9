package dev.kosa8.ports;

import dev.kosa8.host.KosaException;
import dev.kosa8.vm.AgentConnection;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;
import java.util.function.Supplier;

/**
 * A sandbox's published ports while the daemon holds it: one listener on the
 * host per {@link PortMapping}, for the sandbox's whole life, running or
 * stopped (a connection while it is not running is reset at once), so a host
 * port chosen once stays the sandbox's through stops, starts and rewinds. The
 * caller keeps the mappings in the sandbox's record; this holds the sockets.
 */
public final class SandboxPorts implements AutoCloseable {
    /**
     * A published port as `kosa8 port ls` shows it.
     *
     * @param listening   whether the host's socket is open (false when a daemon restart found the port taken)
     * @param connections connections open through it now
     * @param problem     why it is not listening; empty when it is
     */
    public record Published(PortMapping mapping, boolean listening, int connections, String problem) {
    }

    private final String sandbox;
    private final Supplier<AgentConnection> agent;
    private final PortLimits limits;
    private final Consumer<String> log;
    private final Slots slots;
    /** Every mapping, bound or not, in the order published; the listener is null when it could not be bound. */
    private final Map<PortMapping, PortListener> listeners = new LinkedHashMap<>();
    private final Map<PortMapping, String> problems = new LinkedHashMap<>();

    /**
     * @param agent the sandbox's agent while it runs, else null
     * @param log   the daemon's log
     */
    public SandboxPorts(String sandbox, Supplier<AgentConnection> agent, PortLimits limits, Consumer<String> log) {
        this.sandbox = sandbox;
        this.agent = agent;
        this.limits = limits;
        this.log = m -> log.accept("sandbox " + sandbox + ": " + m);
        this.slots = new Slots(limits.perSandbox(), null);
    }

    /**
     * Publishes a port: binds its host socket (a free port for host port 0).
     *
     * @return the mapping as bound, with its host port
     * @throws KosaException when the host port is in use, already published here, or the sandbox is at its count
     */
    public synchronized PortMapping publish(PortMapping m) {
        if (listeners.size() >= limits.ports()) {
            throw new KosaException(KosaException.Kind.LIMIT, "sandbox " + sandbox + " has " + listeners.size()
                    + " published ports, the most it may have", "remove one with `kosa8 port rm " + sandbox
                    + " PORT` (`kosa8 port ls " + sandbox + "` lists them)");
        }
        for (PortMapping p : listeners.keySet()) {
            if (m.hostPort() != 0 && p.hostPort() == m.hostPort() && p.hostAddress().equals(m.hostAddress())) {
                throw new KosaException(KosaException.Kind.USAGE, "host port " + m.hostPort() + " already publishes"
                        + " guest port " + p.guestPort() + " of sandbox " + sandbox, "choose another host port, or "
                        + "`kosa8 port rm " + sandbox + " " + m.hostPort() + "` first");
            }
        }
        PortListener l = PortListener.bind(sandbox, m, agent, new Slots(limits.perPort(), slots), log);
        listeners.put(l.mapping(), l);
        return l.mapping();
    }

    /**
     * Binds again what the sandbox's record keeps (at daemon start). A port that cannot be bound now is kept,
     * not listening, with the reason, which `kosa8 port ls` shows and the daemon's log says.
     */
    public synchronized void restore(List<PortMapping> kept) {
        for (PortMapping m : kept) {
            try {
                PortListener l = PortListener.bind(sandbox, m, agent, new Slots(limits.perPort(), slots), log);
                listeners.put(l.mapping(), l);
            } catch (KosaException e) {
                listeners.put(m, null);
                problems.put(m, e.getMessage());
                log.accept("port " + m + " is not listening: " + e.getMessage() + "; `kosa8 port rm " + sandbox + " "
                        + m.hostPort() + "` and publish it again");
            }
        }
    }

    /**
     * Unpublishes every mapping whose guest port or host port is {@code port}; their connections are reset.
     *
     * @return the mappings removed
     * @throws KosaException when none has that port
     */
    public synchronized List<PortMapping> unpublish(int port) {
        List<PortMapping> gone = new ArrayList<>();
        for (PortMapping m : List.copyOf(listeners.keySet())) {
            if (m.guestPort() == port || m.hostPort() == port) {
                PortListener l = listeners.remove(m);
                problems.remove(m);
                if (l != null) {
                    l.close();
                }
                gone.add(m);
            }
        }
        if (gone.isEmpty()) {
            throw new KosaException(KosaException.Kind.USAGE, "sandbox " + sandbox + " publishes no port " + port,
                    listeners.isEmpty() ? "it publishes none" : "it publishes " + mappings().stream()
                            .map(PortMapping::toString).toList() + " (host->guest); name a guest or a host port");
        }
        return gone;
    }

    /** The mappings, in the order published: what the sandbox's record keeps. */
    public synchronized List<PortMapping> mappings() {
        return List.copyOf(listeners.keySet());
    }

    public synchronized List<Published> list() {
        List<Published> out = new ArrayList<>();
        listeners.forEach((m, l) -> out.add(new Published(m, l != null, l == null ? 0 : l.connections(),
                problems.getOrDefault(m, ""))));
        return out;
    }

    /** Closes every listener and resets every connection: the sandbox is removed, or the daemon exits. */
    @Override
    public synchronized void close() {
        for (PortListener l : listeners.values()) {
            if (l != null) {
                l.close();
            }
        }
        listeners.clear();
        problems.clear();
    }
}
