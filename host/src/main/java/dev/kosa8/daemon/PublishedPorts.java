package dev.kosa8.daemon;

import dev.kosa8.host.KosaException;
import dev.kosa8.ports.PortLimits;
import dev.kosa8.ports.PortMapping;
import dev.kosa8.ports.SandboxPorts;
import dev.kosa8.vm.AgentConnection;
import dev.kosa8.vm.Vm;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Consumer;
import java.util.function.Supplier;

/**
 * Every sandbox's published ports (docs/ports.md): the host's sockets, one
 * {@link SandboxPorts} per sandbox held from its creation (or the daemon's
 * start) to its removal, and the mappings kept in its record, so that they come
 * back after a stop, a start, a rewind and a daemon restart on the same host
 * ports. A fork publishes none: two sandboxes cannot share a host port.
 */
final class PublishedPorts {
    private final Map<String, SandboxPorts> open = new ConcurrentHashMap<>();
    private final SandboxStore store;
    private final PortLimits limits;
    private final Consumer<String> log;

    PublishedPorts(SandboxStore store, PortLimits limits, Consumer<String> log) {
        this.store = store;
        this.limits = limits;
        this.log = log;
    }

    /** The sandbox's agent while its machine runs, else null: a connection then is reset at once. */
    private static AgentConnection agentOf(Sandbox s) {
        Vm vm = s == null ? null : s.vm();
        return vm == null || s.record().state() != SandboxState.RUNNING ? null : vm.agent();
    }

    /**
     * Binds a new sandbox's ports before anything else of it is made, so a host port in use fails the create
     * with nothing left behind.
     *
     * @param sandbox the sandbox, once it exists
     * @return the mappings as bound, for its record
     */
    List<PortMapping> bind(String id, Supplier<Sandbox> sandbox, List<PortMapping> requested) {
        SandboxPorts ports = new SandboxPorts(id, () -> agentOf(sandbox.get()), limits, log);
        try {
            for (PortMapping m : requested) {
                ports.publish(m);
            }
        } catch (RuntimeException e) {
            ports.close();
            throw e;
        }
        open.put(id, ports);
        return ports.mappings();
    }

    /** At daemon start: listens again on what the sandbox's record keeps. */
    void restore(Sandbox s) {
        SandboxPorts ports = new SandboxPorts(s.id(), () -> agentOf(s), limits, log);
        ports.restore(s.record().ports());
        open.put(s.id(), ports);
    }

    /** Publishes more ports of a sandbox, running or stopped, and keeps them in its record. */
    List<PortMapping> publish(Sandbox s, List<PortMapping> requested) {
        return s.locked(() -> {
            SandboxState st = s.record().state();
            if (st == SandboxState.REMOVING || st == SandboxState.FAILED) {
                throw new KosaException(KosaException.Kind.STATE, "sandbox " + s.id() + " is " + st.label(),
                        "publish ports of a sandbox that runs or is stopped");
            }
            SandboxPorts ports = of(s);
            List<PortMapping> bound = new java.util.ArrayList<>();
            try {
                for (PortMapping m : requested) {
                    bound.add(ports.publish(m));
                }
            } finally {
                save(s, ports);
            }
            return bound;
        });
    }

    /** Unpublishes the sandbox's ports whose guest or host port is {@code port}. */
    List<PortMapping> unpublish(Sandbox s, int port) {
        return s.locked(() -> {
            SandboxPorts ports = of(s);
            List<PortMapping> gone = ports.unpublish(port);
            save(s, ports);
            return gone;
        });
    }

    /** The sandbox's ports as `kosa8 port ls` shows them. */
    List<SandboxPorts.Published> list(Sandbox s) {
        SandboxPorts ports = open.get(s.id());
        return ports == null ? List.of() : ports.list();
    }

    /** The sandbox is removed: its ports close and their connections are reset. */
    void close(String id) {
        SandboxPorts ports = open.remove(id);
        if (ports != null) {
            ports.close();
        }
    }

    /** The daemon exits: every port closes (the next daemon listens again). */
    void closeAll() {
        for (String id : List.copyOf(open.keySet())) {
            close(id);
        }
    }

    private SandboxPorts of(Sandbox s) {
        return open.computeIfAbsent(s.id(), id -> new SandboxPorts(id, () -> agentOf(s), limits, log));
    }

    private void save(Sandbox s, SandboxPorts ports) {
        SandboxRecord r = s.record().withPorts(ports.mappings());
        s.record(r);
        store.save(r);
    }
}
