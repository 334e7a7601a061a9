package dev.kosa8.cli;

import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.ParentCommand;

@Command(name = "logs", mixinStandardHelpOptions = true, description = {"Show a sandbox's console: the guest kernel's messages and the agent's log."})
final class LogsCommand implements Callable<Integer> {
    @ParentCommand
    Main main;

    @Parameters(index = "0", paramLabel = "ID", description = "The sandbox.")
    String id;

    @Option(names = {"-n", "--lines"}, defaultValue = "200", description = "How many lines from the end (default: ${DEFAULT-VALUE}).")
    int lines;

    @Override
    public Integer call() {
        var r = main.daemon().get("/v1/sandboxes/" + Ids.check(id) + "/logs?lines=" + lines);
        System.out.println(r.path("console").asText());
        return 0;
    }
}
