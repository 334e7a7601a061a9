package dev.kosa8.cli;

import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.ParentCommand;

@Command(name = "rm", mixinStandardHelpOptions = true, description = {"Remove sandboxes and everything they hold.",
        "Changes held for review (see `kosa8 review`) are kept, to be reviewed by the sandbox's id, unless"
                + " --discard-held."})
final class RmCommand implements Callable<Integer> {
    @ParentCommand
    Main main;

    @Option(names = {"-f", "--force"}, description = "Remove running sandboxes too (their machines are killed).")
    boolean force;

    @Option(names = "--discard-held", description = "Drop the sandboxes' held changes instead of keeping them.")
    boolean discardHeld;

    @Parameters(arity = "1..*", paramLabel = "ID", description = "The sandboxes.")
    List<String> ids;

    @Override
    public Integer call() {
        DaemonClient d = main.daemon();
        for (String id : ids) {
            var r = d.delete("/v1/sandboxes/" + Ids.check(id) + "?force=" + force + "&discardHeld=" + discardHeld);
            System.out.println(id);
            int kept = r.path("heldKept").asInt();
            if (kept > 0) {
                System.err.println("kosa8: " + kept + " held change(s) of " + r.path("removed").asText() + " kept:"
                        + " kosa8 review " + r.path("removed").asText() + " (or rm --discard-held)");
            }
        }
        return 0;
    }
}
