package dev.kosa8.cli;

import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.ParentCommand;

@Command(name = "inspect", mixinStandardHelpOptions = true, description = {"Show everything known about a sandbox, as JSON."})
final class InspectCommand implements Callable<Integer> {
    @ParentCommand
    Main main;

    @Parameters(index = "0", paramLabel = "ID", description = "The sandbox.")
    String id;

    @Override
    public Integer call() throws Exception {
        var s = main.daemon().get("/v1/sandboxes/" + Ids.check(id));
        System.out.println(DaemonClient.json().writerWithDefaultPrettyPrinter().writeValueAsString(s));
        return 0;
    }
}
