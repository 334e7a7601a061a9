package dev.kosa8.cli;

import dev.kosa8.protocol.Message;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.ParentCommand;

@Command(name = "shell", mixinStandardHelpOptions = true, description = {"Open an interactive bash in a running sandbox."})
final class ShellCommand implements Callable<Integer> {
    @ParentCommand
    Main main;

    @Parameters(index = "0", paramLabel = "ID", description = "The sandbox.")
    String id;

    @Override
    public Integer call() {
        boolean tty = Terminal.isInteractive();
        int[] size = Terminal.size();
        var spec = new Message.ExecSpec(List.of("bash", "-l"), Map.of(), "", "", tty, size[0], size[1]);
        return Exec.run(main.daemon().upgrade("/v1/sandboxes/" + Ids.check(id) + "/exec"), spec, true);
    }
}
