package dev.kosa8.cli;

import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.ParentCommand;

@Command(name = "attach", mixinStandardHelpOptions = true, sortOptions = false,
        description = {"Show a kept process's output (from `kosa8 exec -d`): stdout here on stdout, stderr on "
                + "stderr, from its first byte (or --from), then as it comes until the process ends. The exit code "
                + "is then the process's (128+N for signal N).",
            "",
            "Ctrl-C detaches: the process runs on, and the offset reached is printed for --from, so no byte is "
                + "shown twice or missed. Bytes the daemon dropped before anyone read them (it keeps the last "
                + "\"processOutput\" bytes of settings.json, 1 MiB by default) are counted on stderr."},
        footer = {"", "Examples:", "  kosa8 attach ID p1", "  kosa8 attach --from 10240 ID p1   # go on where you left",
            "  kosa8 attach --no-follow ID p1    # what there is now, then return",
            "  kosa8 attach -i ID p2             # and type to it (started with exec -d -i)"})
final class AttachCommand implements Callable<Integer> {
    @ParentCommand
    Main main;

    @Parameters(index = "0", paramLabel = "ID", description = "The sandbox (its id or a unique prefix).")
    String id;

    @Parameters(index = "1", paramLabel = "PROC", description = "The process (p1, p2, ...; `kosa8 procs ID` lists them).")
    String proc;

    @Option(names = "--from", paramLabel = "OFFSET", description = "Start at this byte of its output (stdout and "
            + "stderr counted together; default: its first).")
    long from;

    @Option(names = "--no-follow", description = "Print what there is and return, without waiting for more.")
    boolean noFollow;

    @Option(names = {"-i", "--interactive"}, description = "Send this command's stdin to the process, and close its "
            + "stdin at the end of ours.")
    boolean interactive;

    @Override
    public Integer call() {
        ProcessCalls calls = new ProcessCalls(main.daemon(), id);
        ProcessCalls.checkProcess(proc);
        if (interactive) {
            StdinPump.start(calls, proc, System.in);
        }
        return new OutputFollower(calls, proc, new java.io.FileOutputStream(java.io.FileDescriptor.out),
                new java.io.FileOutputStream(java.io.FileDescriptor.err), System.err).run(from, !noFollow);
    }
}
