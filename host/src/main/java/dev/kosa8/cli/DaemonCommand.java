package dev.kosa8.cli;

import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.ParentCommand;

@Command(name = "daemon", mixinStandardHelpOptions = true, description = {"Manage kosa8d, the per-user daemon that owns the sandboxes.",
    "The CLI starts it on first need; you rarely need these."},
        subcommands = {DaemonCommand.Run.class, DaemonCommand.Stop.class, DaemonCommand.Status.class})
final class DaemonCommand {
    @ParentCommand
    Main main;

    @Command(name = "run", mixinStandardHelpOptions = true, description = "Run the daemon in the foreground (for debugging).")
    static final class Run implements Callable<Integer> {
        @Override
        public Integer call() throws Exception {
            dev.kosa8.daemon.DaemonMain.main(new String[0]);
            return 0;
        }
    }

    @Command(name = "stop", mixinStandardHelpOptions = true, description = "Stop the daemon. Running sandboxes keep running; the next daemon re-attaches.")
    static final class Stop implements Callable<Integer> {
        @ParentCommand
        DaemonCommand parent;

        @Override
        public Integer call() {
            DaemonClient c = new DaemonClient(parent.main.paths);
            System.out.println(c.stopDaemon() ? "kosa8d stopped" : "kosa8d is not running");
            return 0;
        }
    }

    @Command(name = "status", mixinStandardHelpOptions = true, description = "Say whether the daemon runs, and its pid and build.")
    static final class Status implements Callable<Integer> {
        @ParentCommand
        DaemonCommand parent;

        @Override
        public Integer call() {
            DaemonClient c = new DaemonClient(parent.main.paths);
            if (!c.isUp()) {
                System.out.println("kosa8d is not running (it starts on first use)");
                return 1;
            }
            var v = c.get("/v1/version");
            System.out.println("kosa8d " + v.path("version").asText() + " pid " + v.path("pid").asLong()
                    + " build " + v.path("build").asText() + " socket " + parent.main.paths.daemonSocket());
            return 0;
        }
    }
}
