package dev.kosa8.cli;

import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.ParentCommand;

@Command(name = "stop", mixinStandardHelpOptions = true, description = {
        "Stop sandboxes, keeping them for `kosa8 start`.",
        "A running sandbox is paused to disk: its whole machine (processes, memory, open files) is saved, and "
                + "`kosa8 start` resumes it exactly where it was. With --shutdown the guest shuts down instead, and "
                + "the next start boots it afresh from its disk.",
        "Example: kosa8 stop 3f2a && kosa8 start 3f2a"})
final class StopCommand implements Callable<Integer> {
    @ParentCommand
    Main main;

    @Parameters(arity = "1..*", paramLabel = "ID", description = "The sandboxes.")
    List<String> ids;

    @Option(names = "--shutdown", description = "Shut the guest down instead of saving its running state.")
    boolean shutdown;

    @Override
    public Integer call() {
        DaemonClient d = main.daemon();
        for (String id : ids) {
            d.post("/v1/sandboxes/" + Ids.check(id) + "/stop" + (shutdown ? "?shutdown=true" : ""));
            System.out.println(id);
        }
        return 0;
    }
}
