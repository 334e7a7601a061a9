package dev.kosa8.client;

import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * A command to run in a sandbox: its arguments, and optionally environment,
 * working directory, user, standard input and a timeout. Immutable; each
 * {@code with}-style method returns a changed copy:
 * <pre>{@code
 * Command.of("python3", "-c", "import sys; print(sys.stdin.read().upper())")
 *        .stdin("hello".getBytes())
 *        .timeout(Duration.ofSeconds(30))
 * }</pre>
 *
 * @param argv    the program and its arguments (no shell: use {@code sh -c} for one)
 * @param env     variables over the image's and the sandbox's own
 * @param cwd     the working directory ("" for the user's home or the workspace, as the image says)
 * @param user    the user to run as ("" for the image's)
 * @param stdin   bytes for its standard input, which then ends (null: it reads end of file at once)
 * @param keepStdinOpen for a background process: keep its stdin open for {@link BackgroundProcess#write} (after
 *                {@code stdin}'s bytes, if any) until {@link BackgroundProcess#closeStdin}
 * @param timeout how long it may run before it is killed (SIGKILL to its process group); null for no limit
 * @param tag     a label shown in the sandbox's process list (background processes only; "" for none)
 */
public record Command(List<String> argv, Map<String, String> env, String cwd, String user, byte[] stdin,
                      boolean keepStdinOpen, Duration timeout, String tag) {

    public Command {
        argv = List.copyOf(argv);
        if (argv.isEmpty()) {
            throw new IllegalArgumentException("a command needs at least its program");
        }
        env = Map.copyOf(env);
        cwd = Objects.requireNonNullElse(cwd, "");
        user = Objects.requireNonNullElse(user, "");
        tag = Objects.requireNonNullElse(tag, "");
        if (timeout != null && (timeout.isNegative() || timeout.isZero())) {
            throw new IllegalArgumentException("a timeout must be positive, not " + timeout);
        }
    }

    /** The program and its arguments, run without a shell. */
    public static Command of(String... argv) {
        return new Command(List.of(argv), Map.of(), "", "", null, false, null, "");
    }

    /** {@code sh -c script}: for pipes, redirections and the like. */
    public static Command shell(String script) {
        return of("sh", "-c", script);
    }

    public Command env(String name, String value) {
        Map<String, String> m = new LinkedHashMap<>(env);
        m.put(name, value);
        return new Command(argv, m, cwd, user, stdin, keepStdinOpen, timeout, tag);
    }

    public Command cwd(String directory) {
        return new Command(argv, env, directory, user, stdin, keepStdinOpen, timeout, tag);
    }

    public Command user(String name) {
        return new Command(argv, env, cwd, name, stdin, keepStdinOpen, timeout, tag);
    }

    public Command stdin(byte[] bytes) {
        return new Command(argv, env, cwd, user, bytes.clone(), keepStdinOpen, timeout, tag);
    }

    /** Keeps a background process's stdin open for {@link BackgroundProcess#write}. */
    public Command openStdin() {
        return new Command(argv, env, cwd, user, stdin, true, timeout, tag);
    }

    public Command timeout(Duration limit) {
        return new Command(argv, env, cwd, user, stdin, keepStdinOpen, limit, tag);
    }

    public Command tag(String label) {
        return new Command(argv, env, cwd, user, stdin, keepStdinOpen, timeout, label);
    }
}
