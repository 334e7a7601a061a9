package dev.kosa8.cli;

import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.ParentCommand;

@Command(name = "exec", mixinStandardHelpOptions = true, sortOptions = false,
        description = {"Run a command in a running sandbox. The exit code is the command's."},
        footer = {"", "Examples:", "  kosa8 exec ID -- ls -la /", "  kosa8 exec -it ID -- python3",
            "  kosa8 exec -e DEBUG=1 -w /tmp ID -- env"})
final class ExecCommand implements Callable<Integer> {
    @ParentCommand
    Main main;

    @Mixin
    ExecOptions exec = new ExecOptions();

    @Parameters(index = "0", paramLabel = "ID", description = "The sandbox (its id or a unique prefix).")
    String id;

    @Parameters(index = "1..*", paramLabel = "COMMAND", description = "The command and its arguments, after --.")
    List<String> command;

    @Override
    public Integer call() {
        var spec = exec.spec(command);
        return Exec.run(main.daemon().upgrade("/v1/sandboxes/" + Ids.check(id) + "/exec"), spec, exec.interactive);
    }
}
