package dev.kosa8.cli;

import dev.kosa8.client.Json;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.ParentCommand;

@Command(name = "checkpoints", mixinStandardHelpOptions = true,
        description = {"List a sandbox's checkpoints, oldest first: id, when, the disk space only it holds "
                + "(machine state plus workspace files no other checkpoint shares), its state and message. A checkpoint "
                + "is pending until its memory is saved, then committed; one whose commit failed says why, and can "
                + "only be removed. An agent's turn checkpoints (docs/agents.md) show as 'turn N: TOOL'; "
                + "`kosa8 rewind ID --turn N` goes back to one.",
                "Example: kosa8 checkpoints 3f2a"})
final class CheckpointsCommand implements Callable<Integer> {
    @ParentCommand
    Main main;

    @Parameters(index = "0", paramLabel = "ID", description = "The sandbox.")
    String id;

    @picocli.CommandLine.Option(names = "--json", description = "Everything, as JSON (docs/api.md, GET "
            + "/v1/sandboxes/ID/checkpoints): step times, sizes, and each turn checkpoint's turn number.")
    boolean json;

    @Override
    public Integer call() {
        if (json) {
            System.out.println(main.daemon().get("/v1/sandboxes/" + Ids.check(id) + "/checkpoints").toPrettyString());
            return 0;
        }
        return run(main.daemon(), id);
    }

    /** Lists them; shared with {@link HotPath}. */
    static int run(DaemonClient daemon, String id) {
        java.util.List<?> all = Json.list(daemon.call("GET", "/v1/sandboxes/" + Ids.check(id) + "/checkpoints"));
        if (all.isEmpty()) {
            System.err.println("no checkpoints yet: kosa8 checkpoint " + id + " -m 'what it is'");
            return 0;
        }
        System.out.printf("%-22s  %-20s  %9s  %-9s  %s%n", "CHECKPOINT", "CREATED", "SIZE", "STATE", "MESSAGE");
        for (Object c : all) {
            String state = Json.text(c, "state").isEmpty() ? "committed" : Json.text(c, "state");
            String failure = Json.text(c, "failure");
            System.out.printf("%-22s  %-20s  %9s  %-9s  %s%n", Json.text(c, "id"),
                    Json.text(c, "created").replaceAll("\\.\\d+Z$", "Z"),
                    state.equals("committed") ? Sizes.human(Json.number(c, "bytesOnDisk")) : "-", state,
                    Json.text(c, "message") + (failure.isEmpty() ? "" : " (failed: " + failure + ")"));
        }
        return 0;
    }
}
