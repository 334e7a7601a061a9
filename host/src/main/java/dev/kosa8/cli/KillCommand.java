package dev.kosa8.cli;

import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.ParentCommand;

@Command(name = "kill", mixinStandardHelpOptions = true, sortOptions = false,
        description = {"Send a signal to a kept process (from `kosa8 exec -d`) and its process group: TERM unless "
                + "--signal names another. `kosa8 procs ID` then shows how it ended."},
        footer = {"", "Examples:", "  kosa8 kill ID p1", "  kosa8 kill -s KILL ID p1", "  kosa8 kill --signal HUP ID p3"})
final class KillCommand implements Callable<Integer> {
    @ParentCommand
    Main main;

    @Parameters(index = "0", paramLabel = "ID", description = "The sandbox (its id or a unique prefix).")
    String id;

    @Parameters(index = "1", paramLabel = "PROC", description = "The process (p1, p2, ...).")
    String proc;

    @Option(names = {"-s", "--signal"}, paramLabel = "SIGNAL", defaultValue = "TERM",
            description = "TERM, KILL, INT, HUP, SIGUSR1, 9... (default: ${DEFAULT-VALUE}).")
    String signal;

    @Override
    public Integer call() {
        new ProcessCalls(main.daemon(), id).signal(proc, signal);
        return 0;
    }
}
