package dev.kosa8.cli;

import com.fasterxml.jackson.databind.JsonNode;
import java.nio.file.Path;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.ParentCommand;

@Command(name = "fork", mixinStandardHelpOptions = true,
        description = {"Make a new sandbox from a checkpoint of another: its processes run on from the checkpoint's "
                + "instant, with their own disk, their own copy of the workspace folder, their own network broker "
                + "and log (the same policy, copied) and new placeholders for their secrets. The original is "
                + "untouched. Prints the new sandbox's id.",
                "Examples:",
                "  kosa8 fork 3f2a c20261130T0815                      # workspace copied beside the original's",
                "  kosa8 fork 3f2a c20261130T0815 --workspace ~/try-b  # into a new or empty folder"})
final class ForkCommand implements Callable<Integer> {
    @ParentCommand
    Main main;

    @Parameters(index = "0", paramLabel = "ID", description = "The sandbox to fork.")
    String id;

    @Parameters(index = "1", paramLabel = "CHECKPOINT", description = "Its checkpoint to start from (an id or a "
            + "unique prefix; `kosa8 checkpoints ID` lists them).")
    String checkpoint;

    @Option(names = "--workspace", paramLabel = "DIR", description = "Where the fork's copy of the workspace goes: "
            + "a new or empty folder. Default: beside the original's, named after it and the fork's id.")
    Path workspace;

    @Override
    public Integer call() {
        JsonNode s = main.daemon().post("/v1/sandboxes/" + Ids.check(id) + "/fork?checkpoint="
                + SandboxOptions.enc(checkpoint) + "&workspace="
                + SandboxOptions.enc(workspace == null ? "" : workspace.toAbsolutePath().normalize().toString()));
        System.out.println(s.path("id").asText());
        String folder = s.path("workspace").asText("");
        System.err.println("forked " + id + " at " + checkpoint + " into sandbox " + s.path("id").asText()
                + (folder.isEmpty() ? "" : "; its workspace is " + folder));
        return 0;
    }
}
