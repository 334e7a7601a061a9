package dev.kosa8.cli;

import java.io.PrintWriter;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * The commands an agent calls all day, in their plain forms, run without
 * picocli: {@code --version}, {@code ls}, {@code exec}, {@code run},
 * {@code checkpoint}, {@code checkpoints} and {@code rewind}. Picocli builds
 * the model of every command (annotations read, options and help laid out)
 * before it runs one, and that was most of {@code kosa8 --version}'s
 * 320-470 ms (BENCHMARKS.md, "CLI start-up").
 *
 * <p>Only the forms listed on {@link #parse} are taken here ({@link Call}),
 * each then run by the same code as its picocli command (the commands'
 * static {@code run} methods); anything else — help, an option not listed,
 * an option given twice, a value or an id that starts with '-', an
 * {@code @file}, a missing argument, {@code --debug} — is left to picocli
 * (an empty parse), which then does exactly what it always did, messages
 * and exit codes included. {@code HotPathTest} checks that every line taken
 * here is one picocli reads the same way. Errors are printed as {@link Main}
 * prints them.
 */
final class HotPath {
    private HotPath() {
    }

    /** A command line of one of the forms taken here, read. */
    sealed interface Call {
        /** Runs it; its exit code. */
        int run(Main main);
    }

    /** {@code --version}. */
    record Version() implements Call {
        @Override
        public int run(Main main) {
            System.out.println(Main.versionLine());
            return 0;
        }
    }

    /** {@code ls} or {@code ps}. */
    record Ls(boolean quiet) implements Call {
        @Override
        public int run(Main main) {
            return LsCommand.run(main.daemon(), quiet, System.out);
        }
    }

    /** {@code exec}. */
    record Exec(String id, ExecOptions exec, List<String> command, boolean checkpoint) implements Call {
        @Override
        public int run(Main main) {
            return ExecCommand.run(main.daemon(), id, exec, command, checkpoint);
        }
    }

    /** {@code run}, with every sandbox option at its default and the sandbox removed at the end. */
    record Run(ExecOptions exec, List<String> command) implements Call {
        @Override
        public int run(Main main) {
            return RunCommand.run(main, SandboxOptions.defaults(), exec, command, true);
        }
    }

    /** {@code checkpoint ID}. */
    record Checkpoint(String id, String message, boolean await) implements Call {
        @Override
        public int run(Main main) {
            return CheckpointCommand.run(main.daemon(), id, message, await);
        }
    }

    /** {@code checkpoints ID}. */
    record Checkpoints(String id) implements Call {
        @Override
        public int run(Main main) {
            return CheckpointsCommand.run(main.daemon(), id);
        }
    }

    /** {@code rewind ID [CHECKPOINT]}; a null checkpoint is the latest. */
    record Rewind(String id, String checkpoint) implements Call {
        @Override
        public int run(Main main) {
            return RewindCommand.run(main.daemon(), id, checkpoint);
        }
    }

    /**
     * Runs {@code args} when they are one of the forms of {@link #parse},
     * returning the exit code; empty, having done nothing, when they are not.
     */
    static Optional<Integer> run(String[] args, Main main) {
        Optional<Call> call = parse(args);
        StartTrace.step(call.isEmpty() ? "hot path: not taken" : "hot path: parsed");
        if (call.isEmpty()) {
            return Optional.empty();
        }
        try {
            return Optional.of(call.get().run(main));
        } catch (Exception e) {
            return Optional.of(Main.report(e, new PrintWriter(System.err, true), false));
        }
    }

    /**
     * {@code args} read when they are one of these forms; else empty:
     * <pre>
     * --version | -V
     * ls|ps [-q|--quiet]
     * exec [EXEC-OPTION]... [--checkpoint] ID -- COMMAND...
     * run [EXEC-OPTION]... -- COMMAND...
     * checkpoint ID [-m|--message MSG] [--wait]
     * checkpoints ID
     * rewind ID [CHECKPOINT]
     * </pre>
     * where an EXEC-OPTION is {@code -i}, {@code --interactive}, {@code -t},
     * {@code --tty}, {@code -it}, {@code -ti}, or {@code -e}, {@code --env},
     * {@code -w}, {@code --workdir}, {@code -u}, {@code --user} followed by
     * its value as the next argument (or after '=' for the long names).
     * Options and positionals may come in any order before {@code --}.
     */
    static Optional<Call> parse(String[] args) {
        if (args.length == 0) {
            return Optional.empty();
        }
        String[] rest = java.util.Arrays.copyOfRange(args, 1, args.length);
        Call call = switch (args[0]) {
            case "--version", "-V" -> Line.of(rest, Map.of(), Map.of()) instanceof Line l && l.plain(0, 0)
                    ? new Version() : null;
            case "ls", "ps" -> Line.of(rest, Map.of("-q", QUIET, "--quiet", QUIET), Map.of()) instanceof Line l
                    && l.plain(0, 0) ? new Ls(l.has("quiet")) : null;
            case "exec" -> {
                Map<String, List<String>> flags = new HashMap<>(EXEC_FLAGS);
                flags.put("--checkpoint", List.of("checkpoint"));
                Line l = Line.of(rest, flags, EXEC_VALUES);
                yield l != null && l.commandAfter(1) ? new Exec(l.positionals().getFirst(),
                        l.execOptions(), l.after(), l.has("checkpoint")) : null;
            }
            case "run" -> {
                Line l = Line.of(rest, EXEC_FLAGS, EXEC_VALUES);
                yield l != null && l.commandAfter(0) ? new Run(l.execOptions(), l.after()) : null;
            }
            case "checkpoint" -> {
                Line l = Line.of(rest, Map.of("--wait", List.of("wait")), Map.of("-m", "message", "--message", "message"));
                // `checkpoint rm` is a subcommand of its own, and picocli reads "rm" anywhere as it, an option's
                // value included (`checkpoint -m rm ID`): such a line is left to picocli
                yield l != null && l.plain(1, 1) && !java.util.Arrays.asList(rest).contains("rm")
                        ? new Checkpoint(l.positionals().getFirst(), l.value("message", ""), l.has("wait")) : null;
            }
            case "checkpoints" -> Line.of(rest, Map.of(), Map.of()) instanceof Line l && l.plain(1, 1)
                    ? new Checkpoints(l.positionals().getFirst()) : null;
            case "rewind" -> Line.of(rest, Map.of(), Map.of()) instanceof Line l && l.plain(1, 2)
                    ? new Rewind(l.positionals().getFirst(), l.positionals().size() > 1 ? l.positionals().get(1) : null)
                    : null;
            default -> null;
        };
        return Optional.ofNullable(call);
    }

    private static final List<String> QUIET = List.of("quiet");

    /** exec's and run's flags, each with what it sets: {@code -it} sets two. */
    private static final Map<String, List<String>> EXEC_FLAGS = Map.of(
            "-i", List.of("interactive"), "--interactive", List.of("interactive"),
            "-t", List.of("tty"), "--tty", List.of("tty"),
            "-it", List.of("interactive", "tty"), "-ti", List.of("interactive", "tty"));

    /** exec's and run's options with a value, each with its name. */
    private static final Map<String, String> EXEC_VALUES = Map.of("-e", "env", "--env", "env",
            "-w", "workdir", "--workdir", "workdir", "-u", "user", "--user", "user");

    /** The options that may be given more than once. */
    private static final Set<String> REPEATABLE = Set.of("env");

    /**
     * A command line after its verb, read left to right against the options
     * its command takes: the flags set, the values given, the positionals
     * (before {@code --}) and what came after {@code --} (null when there was
     * no {@code --}).
     */
    private record Line(Map<String, Integer> flags, Map<String, List<String>> values, List<String> positionals,
                        List<String> after) {
        /**
         * The line read; null when it is not one of ours: an option not in
         * {@code flags} or {@code valued}, an option's value missing or
         * starting with '-', an option given twice that may be given once,
         * an {@code @file} or {@code --debug} anywhere before {@code --}.
         */
        static Line of(String[] args, Map<String, List<String>> flags, Map<String, String> valued) {
            Map<String, Integer> set = new HashMap<>();
            Map<String, List<String>> values = new HashMap<>();
            List<String> positionals = new ArrayList<>();
            for (int i = 0; i < args.length; i++) {
                String arg = args[i];
                if (arg.equals("--")) {
                    return new Line(set, values, positionals, List.of(args).subList(i + 1, args.length));
                }
                if (arg.startsWith("@")) {
                    return null;
                }
                if (flags.containsKey(arg)) {
                    for (String name : flags.get(arg)) {
                        if (set.merge(name, 1, Integer::sum) > 1) {
                            return null;
                        }
                    }
                    continue;
                }
                String name;
                String value;
                int eq = arg.indexOf('=');
                if (arg.startsWith("--") && eq > 0 && valued.containsKey(arg.substring(0, eq))) {
                    name = valued.get(arg.substring(0, eq));
                    value = arg.substring(eq + 1);
                } else if (valued.containsKey(arg)) {
                    if (i + 1 >= args.length || args[i + 1].startsWith("-") || args[i + 1].startsWith("@")) {
                        return null;
                    }
                    name = valued.get(arg);
                    value = args[++i];
                } else if (arg.startsWith("-")) {
                    return null;
                } else {
                    positionals.add(arg);
                    continue;
                }
                List<String> given = values.computeIfAbsent(name, n -> new ArrayList<>());
                if (!given.isEmpty() && !REPEATABLE.contains(name)) {
                    return null;
                }
                given.add(value);
            }
            return new Line(set, values, positionals, null);
        }

        /** Whether it has {@code min} to {@code max} positionals and no {@code --}. */
        boolean plain(int min, int max) {
            return after == null && positionals.size() >= min && positionals.size() <= max;
        }

        /** Whether it has {@code count} positionals, then {@code --} and a command. */
        boolean commandAfter(int count) {
            return positionals.size() == count && command();
        }

        private boolean command() {
            return after != null && !after.isEmpty();
        }

        boolean has(String flag) {
            return flags.containsKey(flag);
        }

        String value(String name, String otherwise) {
            List<String> v = values.get(name);
            return v == null ? otherwise : v.getFirst();
        }

        ExecOptions execOptions() {
            ExecOptions o = new ExecOptions();
            o.interactive = has("interactive");
            o.tty = has("tty");
            o.env.addAll(values.getOrDefault("env", List.of()));
            o.workdir = value("workdir", "");
            o.user = value("user", "");
            return o;
        }
    }
}
