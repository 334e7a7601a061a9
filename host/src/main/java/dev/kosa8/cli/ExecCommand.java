package dev.kosa8.cli;

import dev.kosa8.client.Json;
import dev.kosa8.host.KosaException;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.ParentCommand;

@Command(name = "exec", mixinStandardHelpOptions = true, sortOptions = false,
        description = {"Run a command in a running sandbox. The exit code is the command's.",
            "",
            "With -d the daemon keeps the command: it runs on when this command returns (or its terminal closes), "
                + "its output is kept for `kosa8 attach`, and its id (p1, p2, ...) is printed. "
                + "`kosa8 procs ID` lists such processes, `kosa8 send` writes to their stdin (start them with -i), "
                + "`kosa8 kill` signals them."},
        footer = {"", "Examples:", "  kosa8 exec ID -- ls -la /", "  kosa8 exec -it ID -- python3",
            "  kosa8 exec -e DEBUG=1 -w /tmp ID -- env",
            "  kosa8 exec --checkpoint ID -- rm -rf build   # undo with: kosa8 rewind ID",
            "  p=$(kosa8 exec -d --tag web ID -- python3 -m http.server)  # prints p1",
            "  kosa8 attach ID $p                        # its output so far, then more",
            "  kosa8 exec --timeout 30s ID -- make test  # killed (137) past 30 s",
            "  p=$(kosa8 exec -d -i ID -- cat)           # stdin kept open:",
            "  kosa8 send ID $p hello; kosa8 send --close ID $p"})
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

    @Option(names = {"-d", "--detach"}, description = "Let the daemon keep the command: print its process id and "
            + "return at once; the command runs on, its output kept for `kosa8 attach` (within \"processOutput\" "
            + "of settings.json, 1 MiB each by default; older bytes are dropped and counted). With -i its stdin "
            + "stays open for `kosa8 send`; without, it reads end of file.")
    boolean detach;

    @Option(names = "--tag", paramLabel = "TEXT", description = "A label for the process, shown by `kosa8 procs` "
            + "(with -d or --timeout).")
    String tag = "";

    @Option(names = "--timeout", paramLabel = "DURATION", description = "Kill the command (SIGKILL to its process "
            + "group) once it has run this long: 90, 90s, 5m, 2h. The daemon keeps it, so the timeout holds even "
            + "if this command is gone.")
    String timeout;

    @Override
    public Integer call() {
        if (detach || timeout != null) {
            return kept(main.daemon());
        }
        if (!tag.isEmpty()) {
            throw new KosaException(KosaException.Kind.USAGE, "--tag labels a process the daemon keeps",
                    "add -d (or --timeout)");
        }
        return run(main.daemon(), id, exec, command, checkpoint);
    }

    /** The command as a process the daemon keeps: detached, or followed here until it ends. */
    private int kept(DaemonClient daemon) {
        if (exec.tty) {
            throw new KosaException(KosaException.Kind.USAGE, "a process the daemon keeps has no terminal",
                    "leave out -t; `kosa8 exec -it` runs an attached command on a terminal");
        }
        long seconds = timeout == null ? 0 : ProcessCalls.seconds(timeout);
        var spec = exec.spec(command);
        if (checkpoint) {
            checkpointFirst(daemon, id, command);
        }
        ProcessCalls calls = new ProcessCalls(daemon, id);
        Object p = calls.start(spec, tag, seconds, exec.interactive);
        String proc = Json.text(p, "id");
        if (detach) {
            OutputFollower.checkStarted(p);
            System.out.println(proc);
            return 0;
        }
        // attached: Ctrl-C and the like go to the command, as for any exec
        Signals.forward(sig -> {
            try {
                calls.signal(proc, String.valueOf(sig));
            } catch (KosaException e) {
                // it has just ended: the output's end says how
            }
        }, null);
        if (exec.interactive) {
            StdinPump.start(calls, proc, System.in);
        }
        return new OutputFollower(calls, proc, new java.io.FileOutputStream(java.io.FileDescriptor.out),
                new java.io.FileOutputStream(java.io.FileDescriptor.err), System.err).run(0, true);
    }

    private static void checkpointFirst(DaemonClient daemon, String id, List<String> command) {
        Object c = daemon.call("POST", "/v1/sandboxes/" + Ids.check(id) + "/checkpoints?message="
                + SandboxOptions.enc("before: " + String.join(" ", command)));
        System.err.println("kosa8: checkpoint " + Json.text(c, "id") + " (kosa8 rewind " + id + " undoes this)");
    }

    /** Runs the command (after a checkpoint, if asked); shared with {@link HotPath}. */
    static int run(DaemonClient daemon, String id, ExecOptions exec, List<String> command, boolean checkpoint) {
        var spec = exec.spec(command);
        if (checkpoint) {
            checkpointFirst(daemon, id, command);
        }
        return Exec.run(daemon.upgrade("/v1/sandboxes/" + Ids.check(id) + "/exec"), spec, exec.interactive);
    }
}
