package dev.kosa8.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.Optional;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import picocli.CommandLine;

/**
 * The commands {@link HotPath} runs without picocli: every line it takes is
 * one picocli reads the same way, and it takes the plain forms an agent uses.
 */
class HotPathTest {
    /** One for all lines, as building it takes a while: picocli sets every option to its default before a parse. */
    private static final CommandLine PICOCLI = Main.commandLine();

    @ParameterizedTest
    @ValueSource(strings = {
        "--version", "-V", "ls", "ps", "ls -q", "ps --quiet",
        "exec ab12 -- true", "exec ab12 -- sh -c 'echo hi'", "exec -it ab12 -- bash", "exec ab12 -ti -- bash",
        "exec -i -t ab12 -- cat", "exec --interactive --tty ab12 -- cat", "exec -e A=1 -e B=2 -w /tmp -u nobody ab12 -- env",
        "exec --env=A=1 --workdir=/tmp --user=nobody ab12 -- env", "exec --checkpoint ab12 -- rm -rf /tmp/x",
        "exec ab12 --checkpoint -- make", "exec ab12 -- -dash-first", "exec ab12 -- --", "exec ab12 -- --debug",
        "run -- true", "run -e A=1 -w /tmp -- env", "run -it -- bash", "run -- python3 -c 'print(6*7)'",
        "checkpoint ab12", "checkpoint ab12 -m before", "checkpoint -m before ab12 --wait", "checkpoint ab12 --message=x",
        "checkpoint ab12 -m ''", "checkpoints ab12", "rewind ab12", "rewind ab12 c20261130T081500-1a2b",
    })
    void takesThePlainFormsAndReadsThemAsPicocliDoes(String line) {
        String[] args = split(line);
        assertThat(HotPath.parse(args)).as("taken: %s", line).isPresent();
        assertSameAsPicocli(args);
    }

    @ParameterizedTest
    @ValueSource(strings = {
        "", "--help", "-h", "--version extra", "ls --help", "ls -q -q", "ls --debug", "--debug ls", "ls extra",
        "exec ab12 true", "exec ab12", "exec ab12 --", "exec -- ab12 true", "exec ab12 extra -- true",
        "exec -i -i ab12 -- true", "exec -it -i ab12 -- true", "exec -e ab12 -- true", "exec -e -i A=1 ab12 -- true",
        "exec -w /a -w /b ab12 -- true", "exec -x ab12 -- true", "exec --checkpoint --checkpoint ab12 -- true",
        "exec @args", "exec ab12 @more -- true", "exec -e=A=1 ab12 -- true", "exec ab12 --help -- true",
        "run true", "run --", "run --memory 2G -- true", "run --no-rm -- true", "run --rm -- true", "run ab12 -- true",
        "run --net open -- true", "checkpoint", "checkpoint rm ab12 c1", "checkpoint ab12 -m", "checkpoint ab12 -m --wait",
        "checkpoint ab12 -m a -m b", "checkpoint ab12 --wait --wait", "checkpoint ab12 c1", "checkpoint ab12 -- x",
        "checkpoint -m rm ab12", "checkpoint ab12 --message rm",
        "checkpoints", "checkpoints ab12 c1", "rewind", "rewind ab12 c1 c2", "rewind -x ab12", "rm -f ab12",
        "create", "shell ab12", "inspect ab12", "fork ab12", "help", "daemon stop",
    })
    void leavesEveryOtherLineToPicocli(String line) {
        assertThat(HotPath.parse(split(line))).as("left to picocli: %s", line).isEmpty();
    }

    /** Any line made of the words these commands use: if the hot path takes it, picocli reads it the same way. */
    @Property(tries = 20000)
    void everyLineTakenIsReadAsPicocliReadsIt(@ForAll("lines") List<String> line) {
        assertSameAsPicocli(line.toArray(String[]::new));
    }

    /**
     * A verb, then pieces of lines in any order (options with and without their values, positionals, options
     * these commands do not take), then maybe {@code --} and a command: lines near the forms the hot path takes.
     */
    @Provide
    Arbitrary<List<String>> lines() {
        Arbitrary<String> verb = Arbitraries.of("--version", "-V", "ls", "ps", "exec", "run", "checkpoint",
                "checkpoints", "rewind", "rm", "--debug");
        Arbitrary<List<String>> piece = Arbitraries.of(List.of("ab12"), List.of("c1"), List.of("rm"), List.of("-i"),
                List.of("-t"), List.of("-it"), List.of("-ti"), List.of("--interactive"), List.of("--tty"),
                List.of("-e", "A=1"), List.of("--env", "B=2"), List.of("--env=C=3"), List.of("-e"), List.of("-e=A=1"),
                List.of("-w", "/tmp"), List.of("--workdir=/w"), List.of("-u", "nobody"), List.of("--user", "x"),
                List.of("--checkpoint"), List.of("-m", "msg"), List.of("--message", ""), List.of("--message=x"),
                List.of("-m"), List.of("-m=x"), List.of("--wait"), List.of("-q"), List.of("--quiet"),
                List.of("--help"), List.of("-h"), List.of("--debug"), List.of("@file"), List.of("-x", "v"),
                List.of("--rm"), List.of("--no-rm"), List.of("--memory", "2G"), List.of("--net", "open"),
                List.of(""), List.of("-"));
        Arbitrary<List<String>> tail = Arbitraries.of(List.of(), List.of("--"), List.of("--", "true"),
                List.of("--", "sh", "-c", "echo hi"), List.of("--", "-i"), List.of("--", "--"));
        return net.jqwik.api.Combinators.combine(verb, piece.list().ofMaxSize(5), tail).as((v, pieces, t) -> {
            List<String> all = new java.util.ArrayList<>();
            all.add(v);
            pieces.forEach(all::addAll);
            all.addAll(t);
            return all;
        });
    }

    /** If the hot path takes {@code args}, picocli parses them without error into the same command and values. */
    private static void assertSameAsPicocli(String[] args) {
        Optional<HotPath.Call> taken = HotPath.parse(args);
        if (taken.isEmpty()) {
            return;
        }
        String line = String.join(" ", args);
        CommandLine.ParseResult parsed;
        try {
            parsed = PICOCLI.parseArgs(args);
        } catch (CommandLine.ParameterException e) {
            throw new AssertionError("the hot path took '" + line + "' as " + taken.get()
                    + " but picocli refuses it: " + e.getMessage(), e);
        }
        switch (taken.get()) {
            case HotPath.Version v -> {
                assertThat(parsed.isVersionHelpRequested()).as(line).isTrue();
                assertThat(parsed.hasSubcommand()).as(line).isFalse();
            }
            case HotPath.Ls ls -> {
                LsCommand c = command(parsed, LsCommand.class, line);
                assertThat(c.quiet).as(line).isEqualTo(ls.quiet());
            }
            case HotPath.Exec e -> {
                ExecCommand c = command(parsed, ExecCommand.class, line);
                assertThat(c.id).as(line).isEqualTo(e.id());
                assertThat(c.command).as(line).isEqualTo(e.command());
                assertThat(c.checkpoint).as(line).isEqualTo(e.checkpoint());
                assertSameOptions(c.exec, e.exec(), line);
            }
            case HotPath.Run r -> {
                RunCommand c = command(parsed, RunCommand.class, line);
                assertThat(c.command).as(line).isEqualTo(r.command());
                assertThat(c.rm).as(line).isTrue();
                assertThat(c.sandbox.query()).as(line).isEqualTo(SandboxOptions.defaults().query());
                assertSameOptions(c.exec, r.exec(), line);
            }
            case HotPath.Checkpoint cp -> {
                CheckpointCommand c = command(parsed, CheckpointCommand.class, line);
                assertThat(c.id).as(line).isEqualTo(cp.id());
                assertThat(c.message).as(line).isEqualTo(cp.message());
                assertThat(c.await).as(line).isEqualTo(cp.await());
            }
            case HotPath.Checkpoints cs -> {
                CheckpointsCommand c = command(parsed, CheckpointsCommand.class, line);
                assertThat(c.id).as(line).isEqualTo(cs.id());
            }
            case HotPath.Rewind rw -> {
                RewindCommand c = command(parsed, RewindCommand.class, line);
                assertThat(c.id).as(line).isEqualTo(rw.id());
                assertThat(c.checkpoint).as(line).isEqualTo(rw.checkpoint());
            }
        }
    }

    /** The command picocli would run for the line: its last subcommand, with no help asked for. */
    private static <T> T command(CommandLine.ParseResult parsed, Class<T> type, String line) {
        CommandLine.ParseResult last = parsed;
        while (last.hasSubcommand()) {
            last = last.subcommand();
        }
        assertThat(last.isUsageHelpRequested() || last.isVersionHelpRequested()).as("help asked for: %s", line)
                .isFalse();
        Object command = last.commandSpec().userObject();
        assertThat(command).as("the command of '%s'", line).isInstanceOf(type);
        return type.cast(command);
    }

    private static void assertSameOptions(ExecOptions picocli, ExecOptions hot, String line) {
        assertThat(hot.interactive).as("interactive: %s", line).isEqualTo(picocli.interactive);
        assertThat(hot.tty).as("tty: %s", line).isEqualTo(picocli.tty);
        assertThat(hot.env).as("env: %s", line).isEqualTo(picocli.env);
        assertThat(hot.workdir).as("workdir: %s", line).isEqualTo(picocli.workdir);
        assertThat(hot.user).as("user: %s", line).isEqualTo(picocli.user);
    }

    @Test
    void anEmptyMessageIsAnEmptyMessage() {
        assertThat(HotPath.parse(split("checkpoint ab12 -m ''"))).contains(new HotPath.Checkpoint("ab12", "", false));
    }

    /** Splits a line on spaces; '' is an empty word, and a quoted word keeps its spaces. */
    private static String[] split(String line) {
        List<String> words = new java.util.ArrayList<>();
        var m = java.util.regex.Pattern.compile("'([^']*)'|(\\S+)").matcher(line);
        while (m.find()) {
            words.add(m.group(1) != null ? m.group(1) : m.group(2));
        }
        return words.toArray(String[]::new);
    }
}
