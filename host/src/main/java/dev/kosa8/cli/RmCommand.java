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

    /**
     * Removes each sandbox named, in order; one that cannot be removed (gone already, running without
     * {@code -f}) is said and the rest are still removed, and the exit status is then 1.
     */
    @Override
    public Integer call() {
        DaemonClient d = main.daemon();
        int failed = 0;
        java.io.PrintWriter err = new java.io.PrintWriter(System.err, true);
        for (String id : ids) {
            com.fasterxml.jackson.databind.JsonNode r;
            try {
                r = d.delete("/v1/sandboxes/" + Ids.check(id) + "?force=" + force + "&discardHeld=" + discardHeld);
            } catch (dev.kosa8.host.KosaException | dev.kosa8.client.Kosa8Exception e) {
                if (ids.size() == 1) {
                    throw e;
                }
                Main.report(e, err, false);
                failed++;
                continue;
            }
            System.out.println(id);
            int kept = r.path("heldKept").asInt();
            if (kept > 0) {
                System.err.println("kosa8: " + kept + " held change(s) of " + r.path("removed").asText() + " kept:"
                        + " kosa8 review " + r.path("removed").asText() + " (or rm --discard-held)");
            }
        }
        return failed == 0 ? 0 : 1;
    }
}
