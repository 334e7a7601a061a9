package dev.kosa8.cli;

import dev.kosa8.host.KosaException;
import dev.kosa8.protocol.Message;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import picocli.CommandLine.Option;

/** How to run a command in a sandbox, shared by `run` and `exec`. */
final class ExecOptions {
    @Option(names = {"-i", "--interactive"}, description = "Pass this terminal's stdin to the command.")
    boolean interactive;

    @Option(names = {"-t", "--tty"}, description = "Run the command on a terminal (for shells and editors).")
    boolean tty;

    @Option(names = {"-e", "--env"}, paramLabel = "NAME=VALUE", description = "Set an environment variable (repeatable).")
    List<String> env = new ArrayList<>();

    @Option(names = {"-w", "--workdir"}, paramLabel = "DIR", description = "Working directory in the sandbox.")
    String workdir = "";

    @Option(names = {"-u", "--user"}, paramLabel = "USER", description = "User to run as (default: root).")
    String user = "";

    Message.ExecSpec spec(List<String> command) {
        if (command == null || command.isEmpty()) {
            throw new KosaException(KosaException.Kind.USAGE, "no command given",
                    "put the command after --, like: kosa8 run -- echo hello");
        }
        Map<String, String> vars = new LinkedHashMap<>();
        for (String e : env) {
            int eq = e.indexOf('=');
            if (eq <= 0) {
                throw new KosaException(KosaException.Kind.USAGE, "bad --env '" + e + "'", "write it as NAME=VALUE");
            }
            vars.put(e.substring(0, eq), e.substring(eq + 1));
        }
        int[] size = tty ? Terminal.size() : new int[] {0, 0};
        try {
            return new Message.ExecSpec(command, vars, workdir, user, tty, size[0], size[1]);
        } catch (dev.kosa8.protocol.ProtocolException e) {
            throw new KosaException(KosaException.Kind.USAGE, e.getMessage(), "");
        }
    }
}
