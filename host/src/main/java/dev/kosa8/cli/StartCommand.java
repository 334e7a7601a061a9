package dev.kosa8.cli;

import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.ParentCommand;

@Command(name = "start", mixinStandardHelpOptions = true, description = {"Boot stopped sandboxes again, from their kept disks."})
final class StartCommand implements Callable<Integer> {
    @ParentCommand
    Main main;

    @Parameters(arity = "1..*", paramLabel = "ID", description = "The sandboxes.")
    List<String> ids;

    @Override
    public Integer call() {
        Images.ensure(main.paths, System.err);
        DaemonClient d = main.daemon();
        for (String id : ids) {
            d.post("/v1/sandboxes/" + Ids.check(id) + "/start");
            System.out.println(id);
        }
        return 0;
    }
}
