package dev.kosa8.cli;

import dev.kosa8.client.Json;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.ParentCommand;

@Command(name = "rewind", mixinStandardHelpOptions = true,
        description = {"Put a running sandbox back to a checkpoint, in place: same id, workspace path and network "
                + "policy; its processes run on from the checkpoint's instant, and the workspace folder holds what it "
                + "held then. Commands running now are ended.",
                "Examples:",
                "  kosa8 rewind 3f2a                    # the latest checkpoint",
                "  kosa8 rewind 3f2a c20261130T0815     # a given one (a unique prefix is enough)",
                "  kosa8 rewind 3f2a --turn 4           # to just before an agent's turn 4 (docs/agents.md): its tool "
                        + "call is stopped, not run again"})
final class RewindCommand implements Callable<Integer> {
    @ParentCommand
    Main main;

    @Parameters(index = "0", paramLabel = "ID", description = "The sandbox.")
    String id;

    @Parameters(index = "1", paramLabel = "CHECKPOINT", arity = "0..1", description = "Default: the latest.")
    String checkpoint;

    @Option(names = "--turn", paramLabel = "N", description = "Rewind to the checkpoint taken just before the agent's "
            + "turn N (`kosa8 checkpoints ID` lists the turns kept).")
    Integer turn;

    @Override
    public Integer call() {
        if (turn != null && checkpoint != null) {
            throw UsageError.of(new picocli.CommandLine(this),
                    "give a CHECKPOINT or --turn N, not both");
        }
        return rewind(main.daemon(), id, turn != null ? "turn=" + turn
                : "checkpoint=" + SandboxOptions.enc(checkpoint == null ? "" : checkpoint));
    }

    /** Rewinds and says so; shared with {@link HotPath}. */
    static int run(DaemonClient daemon, String id, String checkpoint) {
        return rewind(daemon, id, "checkpoint=" + SandboxOptions.enc(checkpoint == null ? "" : checkpoint));
    }

    private static int rewind(DaemonClient daemon, String id, String query) {
        Object c = daemon.call("POST", "/v1/sandboxes/" + Ids.check(id) + "/rewind?" + query);
        System.out.println(Json.text(c, "id"));
        System.err.println("rewound " + id + " to " + Json.text(c, "id") + " in " + Json.number(c, "rewindMillis")
                + " ms");
        return 0;
    }
}
