package dev.kosa8.cli;

import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.ParentCommand;

@Command(name = "start", mixinStandardHelpOptions = true, description = {"Start stopped sandboxes again: resumed where `kosa8 stop` paused them, or booted afresh from their disks (after `stop --shutdown`, or when the saved machine cannot be resumed).", "Example: kosa8 start 3f2a"})
final class StartCommand implements Callable<Integer> {
    @ParentCommand
    Main main;

    @Parameters(arity = "1..*", paramLabel = "ID", description = "The sandboxes.")
    List<String> ids;

    @Override
    public Integer call() {
        Images.ensureEvery(main.paths, System.err);
        DaemonClient d = main.daemon();
        for (String id : ids) {
            d.post("/v1/sandboxes/" + Ids.check(id) + "/start");
            System.out.println(id);
        }
        return 0;
    }
}
