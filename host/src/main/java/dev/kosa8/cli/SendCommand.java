package dev.kosa8.cli;

import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.ParentCommand;

@Command(name = "send", mixinStandardHelpOptions = true, sortOptions = false,
        description = {"Write to the stdin of a kept process started with `kosa8 exec -d -i`: the TEXT given (its "
                + "words joined by spaces, then a newline), or else this command's own stdin to its end (unless "
                + "that is a terminal). --close then closes the process's stdin: it reads end of file."},
        footer = {"", "Examples:", "  kosa8 send ID p1 'print(6*7)'", "  kosa8 send -n ID p1 'no newline'",
            "  kosa8 send --close ID p1 < data.csv", "  kosa8 send --close ID p1          # only close its stdin"})
final class SendCommand implements Callable<Integer> {
    @ParentCommand
    Main main;

    @Parameters(index = "0", paramLabel = "ID", description = "The sandbox (its id or a unique prefix).")
    String id;

    @Parameters(index = "1", paramLabel = "PROC", description = "The process (p1, p2, ...).")
    String proc;

    @Parameters(index = "2..*", paramLabel = "TEXT", description = "What to write; without it, this command's stdin.")
    List<String> text;

    @Option(names = {"-n", "--no-newline"}, description = "Do not add a newline after TEXT.")
    boolean noNewline;

    @Option(names = "--close", description = "Close the process's stdin afterwards.")
    boolean close;

    @Override
    public Integer call() throws Exception {
        ProcessCalls calls = new ProcessCalls(main.daemon(), id);
        ProcessCalls.checkProcess(proc);
        if (text != null && !text.isEmpty()) {
            calls.write(proc, (String.join(" ", text) + (noNewline ? "" : "\n")).getBytes(StandardCharsets.UTF_8));
        } else if (System.console() == null || !close) {
            calls.writeAll(proc, System.in);
        }
        if (close) {
            calls.closeStdin(proc);
        }
        return 0;
    }
}
