package dev.kosa8.cli;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.ParentCommand;

@Command(name = "checkpoints", mixinStandardHelpOptions = true,
        description = {"List a sandbox's checkpoints, oldest first: id, when, the disk space only it holds "
                + "(machine state plus workspace files no other checkpoint shares), its state and message. A checkpoint "
                + "is pending until its memory is saved, then committed; one whose commit failed says why, and can "
                + "only be removed.",
                "Example: kosa8 checkpoints 3f2a"})
final class CheckpointsCommand implements Callable<Integer> {
    @ParentCommand
    Main main;

    @Parameters(index = "0", paramLabel = "ID", description = "The sandbox.")
    String id;

    @Override
    public Integer call() {
        JsonNode all = main.daemon().get("/v1/sandboxes/" + Ids.check(id) + "/checkpoints");
        if (all.isEmpty()) {
            System.err.println("no checkpoints yet: kosa8 checkpoint " + id + " -m 'what it is'");
            return 0;
        }
        System.out.printf("%-22s  %-20s  %9s  %-9s  %s%n", "CHECKPOINT", "CREATED", "SIZE", "STATE", "MESSAGE");
        for (JsonNode c : all) {
            String state = c.path("state").asText("committed");
            String failure = c.path("failure").asText("");
            System.out.printf("%-22s  %-20s  %9s  %-9s  %s%n", c.path("id").asText(),
                    c.path("created").asText().replaceAll("\\.\\d+Z$", "Z"),
                    state.equals("committed") ? Sizes.human(c.path("bytesOnDisk").asLong()) : "-", state,
                    c.path("message").asText() + (failure.isEmpty() ? "" : " (failed: " + failure + ")"));
        }
        return 0;
    }
}
