package dev.kosa8.cli;

import dev.kosa8.host.HostPaths;
import dev.kosa8.host.KosaException;
import java.io.PrintWriter;
import java.util.Optional;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code kosa8}: run an AI agent's commands in a sealed microVM on your own
 * machine. One class per subcommand; errors are printed in one place
 * ({@link #handle}) as one line and a suggestion, with the stack trace only
 * under {@code --debug}.
 */
@Command(name = "kosa8", mixinStandardHelpOptions = true, versionProvider = Main.Version.class,
        description = {
            "Run commands in a sealed microVM: its own kernel, no network, nothing of the host but what you give it.",
            "",
            "Quick start:",
            "  kosa8 run -- python3 -c 'print(6*7)'  one command in a throw-away sandbox",
            "  id=$(kosa8 create)                    make a sandbox that stays",
            "  kosa8 exec $id -- git --version       run commands in it",
            "  kosa8 shell $id                       an interactive shell",
            "  kosa8 rm -f $id                       remove it",
            ""},
        subcommands = {RunCommand.class, CreateCommand.class, ExecCommand.class, ShellCommand.class,
            ProcsCommand.class, AttachCommand.class, SendCommand.class, KillCommand.class, EnvCommand.class,
            CpCommand.class, E2bCommand.class, LsCommand.class, InspectCommand.class, DfCommand.class, LogsCommand.class, StopCommand.class,
            StartCommand.class, RmCommand.class, ReviewCommand.class, DiffCommand.class, AcceptCommand.class,
            AdoptCommand.class, RejectCommand.class, NetCommand.class, AllowCommand.class, DenyCommand.class,
            PortCommand.class,
            SecretCommand.class, CheckpointCommand.class, CheckpointsCommand.class, RewindCommand.class, ForkCommand.class,
            DumpMemoryCommand.class, DoctorCommand.class, ImageCommand.class, ConfigCommand.class, AgentCommand.class,
            McpCommand.class, DaemonCommand.class,
            CommandLine.HelpCommand.class, picocli.AutoComplete.GenerateCompletion.class},
        footer = {"", "Files: images and sandboxes under $XDG_DATA_HOME/kosa8; the daemon's socket under "
                + "$XDG_RUNTIME_DIR/kosa8. KOSA8_HOME puts all of them in one folder."})
public final class Main {
    @Option(names = "--debug", scope = CommandLine.ScopeType.INHERIT, description = "Show stack traces of errors.")
    boolean debug;

    final HostPaths paths;

    /** Whether {@link #dispatch} ran the line on {@link HotPath}: then the CLI ends by {@link CliExit#halt}. */
    boolean ranHot;

    public Main() {
        this(HostPaths.fromEnvironment());
    }

    /** With another kosa8 home: the AOT training's ({@link AotTraining}). */
    Main(HostPaths paths) {
        this.paths = paths;
    }

    DaemonClient daemon() {
        StartTrace.step("to the daemon's client");
        DaemonClient c = new DaemonClient(paths);
        c.ensureRunning(build(), java.time.Duration.ofSeconds(20));
        StartTrace.step("daemon's version");
        return c;
    }

    /** What {@code kosa8 --version} prints. */
    static String versionLine() {
        return "kosa8 " + dev.kosa8.daemon.Daemon.VERSION + " (build " + build() + ")";
    }

    /** Identifies this build, so the CLI replaces a daemon started from another jar. */
    static String build() {
        return dev.kosa8.host.BuildId.current();
    }

    /** The commands an agent calls all day, in their plain forms, without picocli ({@link HotPath}); the rest with it. */
    public static void main(String[] args) {
        StartTrace.begin(); // off unless KOSA8_START_TRACE is set
        dev.kosa8.host.CrashPoints.install(System.getenv()); // tests only (secret set, image build); off unless set
        StartTrace.step("crash hook");
        Main main = new Main();
        int code = dispatch(args, main);
        StartTrace.end();
        if (main.ranHot) {
            CliExit.halt(code); // without System.exit's logger lookup: CliExit
        }
        System.exit(code);
    }

    /**
     * Runs a command line: {@link HotPath}'s forms without picocli, the rest
     * with it; its exit code. No lambda here: its class would be generated at
     * every start, the AOT cache holding only what the training ran
     * ({@link AotTraining} runs its lines through this method).
     */
    static int dispatch(String[] args, Main main) {
        Optional<Integer> hot = HotPath.run(args, main);
        main.ranHot = hot.isPresent();
        return hot.isPresent() ? hot.get() : run(args);
    }

    static int run(String... args) {
        CommandLine cl = commandLine();
        return cl.execute(args);
    }

    static CommandLine commandLine() {
        CommandLine cl = new CommandLine(new Main());
        cl.setExecutionExceptionHandler(Main::handle);
        cl.setCaseInsensitiveEnumValuesAllowed(true);
        cl.getSubcommands().get("generate-completion").getCommandSpec().usageMessage().hidden(true);
        return cl;
    }

    private static int handle(Exception e, CommandLine cl, CommandLine.ParseResult parsed) {
        boolean debug = parsed.matchedOption("--debug") != null
                || parsed.subcommands().stream().anyMatch(p -> p.matchedOption("--debug") != null);
        return report(e, cl.getErr(), debug);
    }

    /** Prints a command's failure as one line and a suggestion (the stack trace with {@code debug}); its exit code. */
    static int report(Exception e, PrintWriter err, boolean debug) {
        if (e instanceof dev.kosa8.client.Kosa8Exception k) {
            return report(DaemonClient.cli(k), err, debug);
        }
        if (e instanceof KosaException k) {
            err.println("kosa8: " + k.getMessage());
            if (!k.suggestion().isEmpty()) {
                err.println("  → " + k.suggestion());
            }
            if (debug) {
                k.printStackTrace(err);
            }
            err.flush();
            return k.exitCode();
        }
        err.println("kosa8: internal error: " + e);
        err.println("  → please report it with the output of `kosa8 --debug` and `kosa8 doctor`");
        if (debug) {
            e.printStackTrace(err);
        }
        err.flush();
        return KosaException.Kind.INTERNAL.exitCode();
    }

    static final class Version implements CommandLine.IVersionProvider {
        @Override
        public String[] getVersion() {
            return new String[] {versionLine()};
        }
    }
}
