package dev.kosa8.cli;

import com.fasterxml.jackson.databind.JsonNode;
import dev.kosa8.ports.PortMapping;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.ParentCommand;

@Command(name = "port", mixinStandardHelpOptions = true, sortOptions = false,
        description = {"Publish a TCP port of a sandbox on this machine: a service listening inside the sandbox "
                + "(a dev server, a notebook) answers on 127.0.0.1:HOST_PORT here. Prints the address.",
            "kosa8 accepts each connection here and carries it over its own channel to the agent, which connects "
                + "to 127.0.0.1:GUEST_PORT inside: the guest opens nothing outward and gets no network for it, "
                + "so a sandbox made with --net none can publish ports too.",
            "HOST_PORT left out: a free port, printed. A port stays the sandbox's until `kosa8 port rm` or `kosa8 rm`; "
                + "it comes back after stop/start and rewind (connections open across them are reset). "
                + "Any program of any user of this machine can connect to 127.0.0.1; --address 0.0.0.0 lets other "
                + "machines connect too."},
        footer = {"", "Examples:",
            "  kosa8 exec $id -- sh -c 'python3 -m http.server 8000 >/dev/null 2>&1 &'",
            "  kosa8 port $id 8000                 # prints 127.0.0.1:PORT, a free port",
            "  curl http://$(kosa8 port $id 8000 8080)/   # 127.0.0.1:8080",
            "  kosa8 port ls $id",
            "  kosa8 port rm $id 8000              # by the guest port or the host port",
            "  kosa8 run -p 8080:8000 -- python3 -m http.server 8000   # the same at creation (also create -p)",
            "",
            "A host port already in use is refused: choose another, or leave it out. docs/ports.md says more."},
        subcommands = {PortCommand.Ls.class, PortCommand.Rm.class})
final class PortCommand implements Callable<Integer> {
    @ParentCommand
    Main main;

    @picocli.CommandLine.Spec
    picocli.CommandLine.Model.CommandSpec spec;

    // not required for picocli: it checks a command's required parameters before its subcommands run, which would
    // ask `port ls ID` for a GUEST_PORT; call() checks them instead
    @Parameters(index = "0", arity = "0..1", paramLabel = "ID", description = "The sandbox.")
    String id;

    @Parameters(index = "1", arity = "0..1", paramLabel = "GUEST_PORT",
            description = "The port a service listens on inside it.")
    Integer guestPort;

    @Parameters(index = "2", arity = "0..1", paramLabel = "HOST_PORT",
            description = "The port on this machine (default: a free one).")
    Integer hostPort;

    @Option(names = "--address", paramLabel = "ADDRESS", defaultValue = PortMapping.LOOPBACK,
            description = "The address to listen on here (default: ${DEFAULT-VALUE}, this machine alone). "
                    + "0.0.0.0 lets other machines connect.")
    String address;

    @Override
    public Integer call() {
        if (id == null || guestPort == null) {
            throw UsageError.of(spec.commandLine(), "Missing required parameters: "
                    + (id == null ? "'ID', 'GUEST_PORT'" : "'GUEST_PORT'")
                    + " (or a command: `kosa8 port ls ID`, `kosa8 port rm ID PORT`)");
        }
        PortMapping m = new PortMapping(guestPort, address, hostPort == null ? 0 : hostPort);
        warnIfNotLoopback(m);
        String spec = (m.hostAddress().contains(":") ? "[" + m.hostAddress() + "]" : m.hostAddress()) + ":"
                + m.hostPort() + ":" + m.guestPort();
        JsonNode r = main.daemon().post("/v1/sandboxes/" + Ids.check(id) + "/ports?port=" + SandboxOptions.enc(spec));
        for (JsonNode p : r.path("published")) {
            System.out.println(hostAndPort(p.path("hostAddress").asText(), p.path("hostPort").asInt()));
        }
        return 0;
    }

    static String hostAndPort(String address, int port) {
        return (address.contains(":") ? "[" + address + "]" : address) + ":" + port;
    }

    /** Says so, on stderr, when a port is published beyond this machine's loopback. */
    static void warnIfNotLoopback(PortMapping m) {
        if (!m.loopbackOnly()) {
            System.err.println("kosa8: warning: publishing on " + m.hostAddress() + ", not 127.0.0.1: other machines "
                    + "that reach this one on that address can connect to port " + m.guestPort() + " of the sandbox");
        }
    }

    /** One line per published port on stderr after `run -p`/`create -p`, where the chosen host ports are seen. */
    static void announce(String id, Iterable<JsonNode> ports) {
        for (JsonNode p : ports) {
            System.err.println("kosa8: sandbox " + id + " publishes " + p.asText());
        }
    }

    @Command(name = "ls", mixinStandardHelpOptions = true,
            description = {"List a sandbox's published ports: where each listens here, the port inside, open "
                    + "connections, and whether it listens."},
            footer = {"", "Example:", "  kosa8 port ls $id"})
    static final class Ls implements Callable<Integer> {
        @ParentCommand
        PortCommand port;

        @Parameters(index = "0", paramLabel = "ID", description = "The sandbox.")
        String id;

        @Override
        public Integer call() {
            JsonNode list = port.main.daemon().get("/v1/sandboxes/" + Ids.check(id) + "/ports");
            String fmt = "%-22s  %-5s  %-11s  %s%n";
            System.out.printf(fmt, "HOST", "GUEST", "CONNECTIONS", "STATE");
            for (JsonNode p : list) {
                System.out.printf(fmt, hostAndPort(p.path("hostAddress").asText(), p.path("hostPort").asInt()),
                        p.path("guestPort").asInt(), p.path("connections").asInt(),
                        p.path("listening").asBoolean() ? "listening" : "not listening: " + p.path("problem").asText());
            }
            return 0;
        }
    }

    @Command(name = "rm", mixinStandardHelpOptions = true,
            description = {"Stop publishing a sandbox's port, named by its guest port or its host port; connections "
                    + "open through it are reset."},
            footer = {"", "Example:", "  kosa8 port rm $id 8000"})
    static final class Rm implements Callable<Integer> {
        @ParentCommand
        PortCommand port;

        @Parameters(index = "0", paramLabel = "ID", description = "The sandbox.")
        String id;

        @Parameters(index = "1", paramLabel = "PORT", description = "Its guest port or its host port.")
        int number;

        @Override
        public Integer call() {
            JsonNode r = port.main.daemon().delete("/v1/sandboxes/" + Ids.check(id) + "/ports/" + number);
            for (JsonNode p : r.path("removed")) {
                System.err.println("kosa8: no longer publishing " + hostAndPort(p.path("hostAddress").asText(),
                        p.path("hostPort").asInt()) + " -> " + p.path("guestPort").asInt());
            }
            return 0;
        }
    }
}
