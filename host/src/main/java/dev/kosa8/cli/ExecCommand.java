package dev.kosa8.cli;

import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.ParentCommand;

@Command(name = "exec", mixinStandardHelpOptions = true, sortOptions = false,
        description = {"Run a command in a running sandbox. The exit code is the command's."},
        footer = {"", "Examples:", "  kosa8 exec ID -- ls -la /", "  kosa8 exec -it ID -- python3",
            "  kosa8 exec -e DEBUG=1 -w /tmp ID -- env",
            "  kosa8 exec --checkpoint ID -- rm -rf build   # undo with: kosa8 rewind ID"})
final class ExecCommand implements Callable<Integer> {
    @ParentCommand
    Main main;

    @Mixin
    ExecOptions exec = new ExecOptions();

    @Parameters(index = "0", paramLabel = "ID", description = "The sandbox (its id or a unique prefix).")
    String id;

    @Parameters(index = "1..*", paramLabel = "COMMAND", description = "The command and its arguments, after --.")
    List<String> command;

    @Option(names = "--checkpoint", description = "Take a checkpoint of the whole sandbox just before the command "
            + "runs; its id goes to stderr, and `kosa8 rewind ID` undoes everything the command did.")
    boolean checkpoint;

    @Override
    public Integer call() {
        var spec = exec.spec(command);
        if (checkpoint) {
            var c = main.daemon().post("/v1/sandboxes/" + Ids.check(id) + "/checkpoints?message="
                    + SandboxOptions.enc("before: " + String.join(" ", command)));
            System.err.println("kosa8: checkpoint " + c.path("id").asText() + " (kosa8 rewind " + id + " undoes this)");
        }
        return Exec.run(main.daemon().upgrade("/v1/sandboxes/" + Ids.check(id) + "/exec"), spec, exec.interactive);
    }
}
