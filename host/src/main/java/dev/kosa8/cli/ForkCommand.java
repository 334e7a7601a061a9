package dev.kosa8.cli;

import com.fasterxml.jackson.databind.JsonNode;
import dev.kosa8.host.KosaException;
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
                + "untouched. Prints the new sandbox's id (one per line with --count). Keep the best of several "
                + "tries with `kosa8 adopt FORK`.",
                "Examples:",
                "  kosa8 fork 3f2a c20261130T0815                      # workspace copied beside the original's",
                "  kosa8 fork 3f2a c20261130T0815 --workspace ~/try-b  # into a new or empty folder",
                "  kosa8 fork 3f2a c20261130T0815 --count 4            # four tries from one instant",
                "  kosa8 fork 3f2a c20261130T0815 --folder view        # no copy: only what the fork changes is kept"})
final class ForkCommand implements Callable<Integer> {
    /** Forks one command makes at most: each is a running machine. */
    static final int MAX_COUNT = 16;

    @ParentCommand
    Main main;

    @Parameters(index = "0", paramLabel = "ID", description = "The sandbox to fork.")
    String id;

    @Parameters(index = "1", paramLabel = "CHECKPOINT", description = "Its checkpoint to start from (an id or a "
            + "unique prefix; `kosa8 checkpoints ID` lists them).")
    String checkpoint;

    @Option(names = "--workspace", paramLabel = "DIR", description = "Where the fork's copy of the workspace goes: "
            + "a new or empty folder (with --count N: DIR-1 ... DIR-N). Default: beside the original's, named after "
            + "it and the fork's id.")
    Path workspace;

    @Option(names = "--folder", paramLabel = "MODE", defaultValue = "auto", description = {"How the fork's folder "
            + "is made: copy (a folder of its own on the host, beside the original's or in --workspace DIR; its "
            + "files are clones that share the original's blocks on XFS and Btrfs, full copies elsewhere), view (a "
            + "copy-on-write view of the checkpoint's folder: the guest sees the whole folder, and only what it "
            + "changes is stored, in the fork's own directory; see it with `kosa8 diff`, take it with `kosa8 "
            + "adopt`), or auto (default: copy where the file system clones or --workspace names a folder, "
            + "view elsewhere, so N forks of a large folder on ext4 do not cost N copies)."})
    String folderMode;

    @Option(names = "--count", paramLabel = "N", defaultValue = "1", description = "How many forks to make from the "
            + "instant, each with its own copy of the folder (default: 1).")
    int count;

    @Override
    public Integer call() {
        if (count < 1 || count > MAX_COUNT) {
            throw new KosaException(KosaException.Kind.USAGE, "--count must be from 1 to " + MAX_COUNT,
                    "each fork is a running machine with its own memory; make fewer at once");
        }
        for (int i = 1; i <= count; i++) {
            Path folder = workspace == null ? null : count == 1 ? workspace
                    : workspace.resolveSibling(workspace.getFileName() + "-" + i);
            JsonNode s = main.daemon().post("/v1/sandboxes/" + Ids.check(id) + "/fork?checkpoint="
                    + SandboxOptions.enc(checkpoint) + "&folder=" + SandboxOptions.enc(folderMode) + "&workspace="
                    + SandboxOptions.enc(folder == null ? "" : folder.toAbsolutePath().normalize().toString()));
            System.out.println(s.path("id").asText());
            String made = s.path("workspace").asText("");
            String where = made.isEmpty() ? "" : s.path("workspaceView").asBoolean()
                    ? "; its folder is a copy-on-write view of the checkpoint's (`kosa8 diff " + s.path("id").asText()
                    + "` shows what it changes)" : "; its workspace is " + made;
            System.err.println("forked " + id + " at " + checkpoint + " into sandbox " + s.path("id").asText() + where
                    + (count == 1 ? "" : " (" + i + " of " + count + ")"));
        }
        return 0;
    }
}
