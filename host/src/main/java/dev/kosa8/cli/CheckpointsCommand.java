package dev.kosa8.cli;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.ParentCommand;

@Command(name = "checkpoints", mixinStandardHelpOptions = true,
        description = {"List a sandbox's checkpoints, oldest first: id, when, message, and the disk space only it holds "
                + "(machine state plus workspace files no other checkpoint shares). "
                + "An agent's turn checkpoints (docs/agents.md) show as 'turn N: TOOL'; `kosa8 rewind ID --turn N` goes "
                + "back to one.",
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
        JsonNode all = main.daemon().get("/v1/sandboxes/" + Ids.check(id) + "/checkpoints");
        if (json) {
            System.out.println(all.toPrettyString());
            return 0;
        }
        if (all.isEmpty()) {
            System.err.println("no checkpoints yet: kosa8 checkpoint " + id + " -m 'what it is'");
            return 0;
        }
        System.out.printf("%-22s  %-20s  %9s  %s%n", "CHECKPOINT", "CREATED", "SIZE", "MESSAGE");
        for (JsonNode c : all) {
            System.out.printf("%-22s  %-20s  %9s  %s%n", c.path("id").asText(), c.path("created").asText().replaceAll("\\.\\d+Z$", "Z"),
                    Sizes.human(c.path("bytesOnDisk").asLong()), c.path("message").asText());
        }
        return 0;
    }
}
