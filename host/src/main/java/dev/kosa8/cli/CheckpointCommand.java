package dev.kosa8.cli;

import dev.kosa8.client.Json;
import com.fasterxml.jackson.databind.JsonNode;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.ParentCommand;

@Command(name = "checkpoint", mixinStandardHelpOptions = true,
        description = {"Save the whole running sandbox at one instant: its processes, RAM, disk and workspace folder.",
                "`kosa8 rewind ID` puts all of it back later, in place. Prints the checkpoint's id as soon as the "
                        + "instant is fixed; its memory is then saved while the sandbox runs on (`kosa8 checkpoints` "
                        + "shows it pending until then; a rewind to it waits for it).",
                "Examples:",
                "  kosa8 checkpoint 3f2a -m 'before the refactor'",
                "  kosa8 checkpoints 3f2a; kosa8 rewind 3f2a; kosa8 checkpoint rm 3f2a c20261130T0815"},
        subcommands = {CheckpointCommand.Rm.class})
final class CheckpointCommand implements Callable<Integer> {
    @ParentCommand
    Main main;

    @Parameters(index = "0", paramLabel = "ID", arity = "0..1", description = "The sandbox.")
    String id;

    @Option(names = {"-m", "--message"}, paramLabel = "MSG", description = "What this checkpoint is, for `kosa8 checkpoints`.")
    String message = "";

    @Option(names = "--wait", description = "Return only once the checkpoint is committed (its memory saved); "
            + "exits non-zero if that fails.")
    boolean await;

    @Override
    public Integer call() {
        if (id == null) {
            throw UsageError.of(new picocli.CommandLine(this), "name the sandbox: kosa8 checkpoint ID");
        }
        return run(main.daemon(), id, message, await);
    }

    /** Takes the checkpoint and says so; shared with {@link HotPath}. */
    static int run(DaemonClient daemon, String id, String message, boolean await) {
        Object c = daemon.call("POST", "/v1/sandboxes/" + Ids.check(id) + "/checkpoints?message="
                + SandboxOptions.enc(message) + (await ? "&wait=true" : ""));
        System.out.println(Json.text(c, "id"));
        // a machine whose RAM is a file had it copied in the pause (docs/checkpoints.md, "Two ways to save RAM")
        Object steps = Json.get(c, "stepMillis");
        if (steps != null && Json.get(steps, "memory") != null) {
            System.err.println("checkpoint of " + id + " taken; the sandbox stood still for "
                    + Json.number(c, "pauseMillis") + " ms while its memory was copied ("
                    + Json.number(steps, "memory") + " ms of it)" + (Json.text(c, "state").equals("pending")
                    ? "; it is stored in the background" : " (" + Sizes.human(Json.number(c, "vmStateBytes"))
                    + " of machine state, " + Sizes.human(Json.number(c, "workspaceBytesCopied"))
                    + " of changed workspace files; stored after " + Json.number(c, "savedMillis") + " ms)"));
        } else if (Json.text(c, "state").equals("pending")) {
            System.err.println("checkpoint of " + id + " taken; the sandbox stood still for "
                    + Json.number(c, "pauseMillis") + " ms, and runs on while its memory is saved ("
                    + Sizes.human(Json.number(c, "workspaceBytesCopied")) + " of changed workspace files)");
        } else {
            System.err.println("checkpoint of " + id + " taken; the sandbox stood still for "
                    + Json.number(c, "pauseMillis") + " ms, and ran on while its memory was saved ("
                    + Sizes.human(Json.number(c, "vmStateBytes")) + " of new machine state, "
                    + Sizes.human(Json.number(c, "workspaceBytesCopied")) + " of changed workspace files; stored after "
                    + Json.number(c, "savedMillis") + " ms)");
        }
        return 0;
    }

    @Command(name = "rm", mixinStandardHelpOptions = true,
            description = {"Delete a checkpoint and the space only it holds.", "Example: kosa8 checkpoint rm 3f2a c20261130T0815"})
    static final class Rm implements Callable<Integer> {
        @ParentCommand
        CheckpointCommand parent;

        @Parameters(index = "0", paramLabel = "ID", description = "The sandbox.")
        String id;

        @Parameters(index = "1", paramLabel = "CHECKPOINT", description = "A checkpoint id or a unique prefix of it.")
        String checkpoint;

        @Override
        public Integer call() {
            JsonNode c = parent.main.daemon().delete("/v1/sandboxes/" + Ids.check(id) + "/checkpoints/"
                    + SandboxOptions.enc(checkpoint));
            System.out.println("removed " + c.path("id").asText());
            return 0;
        }
    }
}
