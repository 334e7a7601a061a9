package dev.kosa8.cli;

import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.ParentCommand;

@Command(name = "rm", mixinStandardHelpOptions = true, description = {"Remove sandboxes and everything they hold."})
final class RmCommand implements Callable<Integer> {
    @ParentCommand
    Main main;

    @Option(names = {"-f", "--force"}, description = "Remove running sandboxes too (their machines are killed).")
    boolean force;

    @Parameters(arity = "1..*", paramLabel = "ID", description = "The sandboxes.")
    List<String> ids;

    @Override
    public Integer call() {
        DaemonClient d = main.daemon();
        for (String id : ids) {
            d.delete("/v1/sandboxes/" + Ids.check(id) + (force ? "?force=true" : ""));
            System.out.println(id);
        }
        return 0;
    }
}
