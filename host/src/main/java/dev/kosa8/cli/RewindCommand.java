package dev.kosa8.cli;

import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.ParentCommand;

@Command(name = "rewind", mixinStandardHelpOptions = true,
        description = {"Put a running sandbox back to a checkpoint, in place: same id, workspace path and network "
                + "policy; its processes run on from the checkpoint's instant, and the workspace folder holds what it "
                + "held then. Commands running now are ended.",
                "Examples:",
                "  kosa8 rewind 3f2a                    # the latest checkpoint",
                "  kosa8 rewind 3f2a c20261130T0815     # a given one (a unique prefix is enough)"})
final class RewindCommand implements Callable<Integer> {
    @ParentCommand
    Main main;

    @Parameters(index = "0", paramLabel = "ID", description = "The sandbox.")
    String id;

    @Parameters(index = "1", paramLabel = "CHECKPOINT", arity = "0..1", description = "Default: the latest.")
    String checkpoint;

    @Override
    public Integer call() {
        return run(main.daemon(), id, checkpoint);
    }

    /** Rewinds and says so; shared with {@link HotPath}. */
    static int run(DaemonClient daemon, String id, String checkpoint) {
        Object c = daemon.call("POST", "/v1/sandboxes/" + Ids.check(id) + "/rewind?checkpoint="
                + SandboxOptions.enc(checkpoint == null ? "" : checkpoint));
        System.out.println(Json.text(c, "id"));
        System.err.println("rewound " + id + " to " + Json.text(c, "id") + " in " + Json.number(c, "rewindMillis")
                + " ms");
        return 0;
    }
}
