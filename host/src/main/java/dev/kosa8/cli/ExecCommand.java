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
        return run(main.daemon(), id, exec, command, checkpoint);
    }

    /** Runs the command (after a checkpoint, if asked); shared with {@link HotPath}. */
    static int run(DaemonClient daemon, String id, ExecOptions exec, List<String> command, boolean checkpoint) {
        var spec = exec.spec(command);
        if (checkpoint) {
            Object c = daemon.call("POST", "/v1/sandboxes/" + Ids.check(id) + "/checkpoints?message="
                    + SandboxOptions.enc("before: " + String.join(" ", command)));
            System.err.println("kosa8: checkpoint " + Json.text(c, "id") + " (kosa8 rewind " + id + " undoes this)");
        }
        return Exec.run(daemon.upgrade("/v1/sandboxes/" + Ids.check(id) + "/exec"), spec, exec.interactive);
    }
}
