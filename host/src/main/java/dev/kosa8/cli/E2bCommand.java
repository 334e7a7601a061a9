package dev.kosa8.cli;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParentCommand;

@Command(name = "e2b", mixinStandardHelpOptions = true,
        description = {"Serve the E2B API on this machine, so programs written against E2B's SDK (`e2b` on npm and "
                + "PyPI) run their sandboxes as kosa8 microVMs, unchanged: they switch by environment variables.",
            "The daemon listens on 127.0.0.1:49982 (HTTP/1.1) once started, and again with every daemon until "
                + "`kosa8 e2b stop`. Every request needs its API key; every in-sandbox request its sandbox's token."},
        footer = {"", "Examples:",
            "  eval \"$(kosa8 e2b env)\"        # starts the listener if it is off, sets E2B_API_URL and the rest",
            "  node my-agent.mjs               # Sandbox.create('kosa8/debian'), sandbox.commands.run(...)",
            "  kosa8 e2b start --port 3000     # another port",
            "  kosa8 e2b stop",
            "", "docs/e2b.md says what maps to what, and what E2B does that kosa8 does not."},
        subcommands = {E2bCommand.Start.class, E2bCommand.Stop.class, E2bCommand.Env.class, E2bCommand.Status.class})
final class E2bCommand {
    @ParentCommand
    Main main;

    @Command(name = "start", mixinStandardHelpOptions = true, description = "Start the listener (kept on across "
            + "daemon restarts) and print its URL.")
    static final class Start implements Callable<Integer> {
        @ParentCommand
        E2bCommand parent;

        @Option(names = "--port", description = "The port (default 49982; 0: any free one).")
        int port = 49982;

        @Option(names = "--address", description = "The address to listen on (default 127.0.0.1). Any other lets "
                + "other machines reach it, API key required.")
        String address = "127.0.0.1";

        @Override
        public Integer call() {
            if (!address.equals("127.0.0.1") && !address.equals("::1") && !address.equals("localhost")) {
                System.err.println("warning: listening on " + address + ": other machines can reach the E2B API;"
                        + " its key is all that keeps them out, over plain HTTP");
            }
            Images.ensure(parent.main.paths, System.err); // the default template, built on first use as run does
            JsonNode v = parent.main.daemon().post("/v1/e2b/start?port=" + port + "&address="
                    + java.net.URLEncoder.encode(address, java.nio.charset.StandardCharsets.UTF_8));
            System.out.println(v.path("url").asText());
            return 0;
        }
    }

    @Command(name = "stop", mixinStandardHelpOptions = true, description = "Stop the listener. Sandboxes made "
            + "through it stay (kosa8 ls); their E2B tokens and timeouts go.")
    static final class Stop implements Callable<Integer> {
        @ParentCommand
        E2bCommand parent;

        @Override
        public Integer call() {
            parent.main.daemon().post("/v1/e2b/stop");
            System.out.println("the E2B listener is off");
            return 0;
        }
    }

    @Command(name = "status", mixinStandardHelpOptions = true, description = "Say whether the listener runs, "
            + "and where.")
    static final class Status implements Callable<Integer> {
        @ParentCommand
        E2bCommand parent;

        @Override
        public Integer call() {
            JsonNode v = parent.main.daemon().get("/v1/e2b");
            if (!v.path("running").asBoolean()) {
                System.out.println("the E2B listener is off (kosa8 e2b start)");
                return 1;
            }
            System.out.println(v.path("url").asText());
            return 0;
        }
    }

    @Command(name = "env", mixinStandardHelpOptions = true, description = {"Print the variables E2B's SDKs read, "
            + "for `eval \"$(kosa8 e2b env)\"`: E2B_API_URL, E2B_SANDBOX_URL, E2B_API_KEY, E2B_DOMAIN. Starts the "
            + "listener if it is off."})
    static final class Env implements Callable<Integer> {
        @ParentCommand
        E2bCommand parent;

        @Override
        public Integer call() {
            JsonNode v = parent.main.daemon().get("/v1/e2b");
            if (!v.path("running").asBoolean()) {
                Images.ensure(parent.main.paths, System.err);
                v = parent.main.daemon().post("/v1/e2b/start");
            }
            String url = v.path("url").asText();
            System.out.println("export E2B_API_URL=" + url);
            System.out.println("export E2B_SANDBOX_URL=" + url);
            System.out.println("export E2B_API_KEY=" + v.path("apiKey").asText());
            System.out.println("export E2B_DOMAIN=localhost");
            return 0;
        }
    }
}
