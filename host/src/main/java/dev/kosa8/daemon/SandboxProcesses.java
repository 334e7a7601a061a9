package dev.kosa8.daemon;

import dev.kosa8.processes.Guest;
import dev.kosa8.processes.ProcessInfo;
import dev.kosa8.processes.Processes;
import dev.kosa8.processes.SandboxEnvironment;
import dev.kosa8.protocol.Message;
import dev.kosa8.vm.AgentConnection;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.function.Consumer;

/**
 * The sandboxes' side of {@link Processes}: a process starts on the daemon's own connection to the sandbox's
 * agent, with the environment every command in the sandbox gets ({@link #environmentOf}); the sandbox's own
 * variables live in its directory.
 */
final class SandboxProcesses {
    private final Processes processes;
    private final SandboxLayout layout;
    private final SandboxNetworks networks;

    SandboxProcesses(Processes processes, SandboxLayout layout, SandboxNetworks networks) {
        this.processes = processes;
        this.layout = layout;
        this.networks = networks;
    }

    /** The processes themselves: list, read, write, signal, by the sandbox's id. */
    Processes all() {
        return processes;
    }

    /** Starts a process in a running sandbox, with its image's, its own and its secrets' variables. */
    ProcessInfo start(Sandbox s, Processes.Start start) {
        AgentConnection agent = s.current().agent();
        Message.ExecSpec spec = ExecRelay.withImage(start.spec(), s.record().image().config(), environmentOf(s));
        return processes.start(s.id(), new AgentGuest(agent), new Processes.Start(spec, start.tag(), start.timeout(),
                start.keepStdin()));
    }

    /**
     * What every command in the sandbox gets over its image's variables and under its own: the sandbox's own
     * variables ({@code kosa8 env}), then its secrets' placeholders, which a variable of the same name cannot hide.
     */
    Map<String, String> environmentOf(Sandbox s) {
        Map<String, String> env = new LinkedHashMap<>(SandboxEnvironment.read(layout.directory(s.id())));
        env.putAll(networks.secretEnvironment(s));
        return env;
    }

    Map<String, String> environment(Sandbox s) {
        return SandboxEnvironment.read(layout.directory(s.id()));
    }

    Map<String, String> changeEnvironment(Sandbox s, Map<String, String> set, Collection<String> unset) {
        return s.locked(() -> SandboxEnvironment.change(layout.directory(s.id()), set, unset));
    }

    /** The sandbox is gone. */
    void forget(Sandbox s) {
        processes.forget(s.id());
    }

    /** The agent connection as processes use it (here and for the E2B listener's, `E2bBridge`). */
    record AgentGuest(AgentConnection agent) implements Guest {
        @Override
        public int open(Consumer<Message> listener) {
            return agent.open(listener);
        }

        @Override
        public void send(Message m) {
            agent.send(m);
        }
    }
}
