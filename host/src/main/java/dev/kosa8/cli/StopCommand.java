package dev.kosa8.cli;

import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.ParentCommand;

@Command(name = "stop", mixinStandardHelpOptions = true, description = {"Stop sandboxes; their disks are kept for `kosa8 start`."})
final class StopCommand implements Callable<Integer> {
    @ParentCommand
    Main main;

    @Parameters(arity = "1..*", paramLabel = "ID", description = "The sandboxes.")
    List<String> ids;

    @Override
    public Integer call() {
        DaemonClient d = main.daemon();
        for (String id : ids) {
            d.post("/v1/sandboxes/" + Ids.check(id) + "/stop");
            System.out.println(id);
        }
        return 0;
    }
}
