package dev.kosa8.cli;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.ParentCommand;

@Command(name = "adopt", mixinStandardHelpOptions = true,
        description = {"Write a fork's changes to its folder, since it was forked, into the folder it was forked from "
                + "(or another sandbox's, with --into): the way to keep the best of several tries "
                + "(`kosa8 fork ID CHECKPOINT --count N`). Each file is put in place whole. A path the original "
                + "changed since the fork's instant is a conflict: shown, not overwritten. A path your folder's held "
                + "policy covers (git hooks, .envrc, editor tasks...) is held for `kosa8 review`, not written. "
                + "The fork is left as it is; remove it with `kosa8 rm FORK`.",
                "Examples:",
                "  kosa8 diff 7c1e              # what the fork changed",
                "  kosa8 adopt 7c1e --dry-run   # what adopting it would do",
                "  kosa8 adopt 7c1e             # into the sandbox it was forked from"})
final class AdoptCommand implements Callable<Integer> {
    @ParentCommand
    Main main;

    @Parameters(index = "0", paramLabel = "FORK", description = "The fork whose changes to adopt.")
    String fork;

    @Option(names = "--into", paramLabel = "ID", description = "The sandbox whose folder receives them. Default: "
            + "the one the fork was made from.")
    String into;

    @Option(names = {"-n", "--dry-run"}, description = "Only say what would be done.")
    boolean dryRun;

    @Override
    public Integer call() {
        JsonNode r = main.daemon().post("/v1/sandboxes/" + Ids.check(fork) + "/adopt?dryRun=" + dryRun
                + (into == null ? "" : "&into=" + SandboxOptions.enc(Ids.check(into))));
        String verb = dryRun ? "would adopt " : "adopted ";
        for (JsonNode p : r.path("applied")) {
            System.out.println(verb + p.asText());
        }
        String target = r.path("into").asText();
        for (JsonNode p : r.path("held")) {
            System.out.println((dryRun ? "would hold " : "held ") + p.asText() + " (review it: kosa8 review "
                    + target + ")");
        }
        for (JsonNode p : r.path("conflicts")) {
            System.err.println("kosa8: conflict: " + p.asText() + " changed in " + r.path("folder").asText()
                    + " since the fork's instant; not adopted (compare by hand: kosa8 diff " + r.path("fork").asText()
                    + ")");
        }
        for (JsonNode p : r.path("skipped")) {
            System.err.println("kosa8: skipped " + p.asText());
        }
        int already = r.path("already").size();
        int forkHeld = r.path("forkHeld").asInt();
        System.err.println((dryRun ? "would adopt " : "adopted ") + r.path("applied").size() + " change(s) of "
                + r.path("fork").asText() + " into " + target + " (" + r.path("folder").asText() + ")"
                + (already > 0 ? "; " + already + " already there" : "")
                + (forkHeld > 0 ? "; the fork holds " + forkHeld + " change(s) of its own, not adopted: kosa8 review "
                        + r.path("fork").asText() : ""));
        return r.path("conflicts").isEmpty() && r.path("skipped").isEmpty() ? 0 : 1;
    }
}
