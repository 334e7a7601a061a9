package dev.kosa8.cli;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.Callable;
import picocli.CommandLine.ArgGroup;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.ParentCommand;

@Command(name = "diff", mixinStandardHelpOptions = true,
        description = {"Show what a sandbox changed in its folder since it started, or since a checkpoint: files"
                + " added, modified and deleted, mode and symlink changes, with unified diffs of text files.",
                "It compares with the copy kosa8 keeps of the folder (at the sandbox's start and in each"
                        + " checkpoint), not with git: it works in folders that are not repositories, and sees"
                        + " ignored and untracked files too.",
                "Changes the sandbox made to held paths are not in your folder yet; `kosa8 review ID` shows them.",
                "Examples: kosa8 diff 3f2a; kosa8 diff 3f2a --stat; kosa8 diff 3f2a c20261204T1530 --name-only"})
final class DiffCommand implements Callable<Integer> {
    @ParentCommand
    Main main;

    @Parameters(index = "0", paramLabel = "ID", description = "The sandbox.")
    String id;

    @Parameters(index = "1", arity = "0..1", paramLabel = "CHECKPOINT",
            description = "Compare with this checkpoint (an id or a unique prefix; `kosa8 checkpoints ID` lists"
                    + " them). Default: the folder as the sandbox started.")
    String checkpoint = "";

    @ArgGroup(exclusive = true)
    Format format = new Format();

    static final class Format {
        @Option(names = "--stat", description = "One line per path: lines added and removed, or what changed.")
        boolean stat;

        @Option(names = "--name-only", description = "Only the paths that changed, one per line.")
        boolean nameOnly;

        @Option(names = "--json", description = "Everything, as JSON (docs/api.md, GET /v1/sandboxes/ID/diff).")
        boolean json;
    }

    @Override
    public Integer call() throws JsonProcessingException {
        JsonNode r = main.daemon().get("/v1/sandboxes/" + Ids.check(id) + "/diff?checkpoint="
                + URLEncoder.encode(checkpoint, StandardCharsets.UTF_8));
        if (format.json) {
            System.out.println(DaemonClient.json().writerWithDefaultPrettyPrinter().writeValueAsString(r));
            return 0;
        }
        JsonNode changes = r.path("changes");
        String since = r.path("since").asText().equals("start") ? "it started" : "checkpoint " + r.path("since").asText();
        if (changes.isEmpty()) {
            System.err.println("sandbox " + r.path("id").asText() + " changed nothing in " + r.path("folder").asText()
                    + " since " + since);
        } else if (format.nameOnly) {
            changes.forEach(c -> System.out.println(c.path("path").asText()));
        } else if (format.stat) {
            System.out.print(DiffFormat.stat(changes));
        } else {
            System.out.print(DiffFormat.full(changes));
        }
        int held = r.path("held").asInt();
        if (held > 0 && !format.nameOnly) {
            System.err.println(held + " change" + (held == 1 ? "" : "s") + " to held paths not in your folder: "
                    + "kosa8 review " + r.path("id").asText());
        }
        return 0;
    }
}
