package dev.kosa8.mcp;

import java.util.List;
import java.util.Map;

/**
 * Every daemon call the MCP tools make, in one place. The tools never speak to the daemon themselves: the CLI
 * implements this over its {@code DaemonClient} ({@code cli.DaemonMcpBackend}), and a Java SDK client can take its
 * place without a tool changing. Answers are the daemon's JSON as plain values (maps, lists, strings, numbers,
 * booleans); failures are the daemon's own {@code KosaException}s, which {@link ToolResults} turns into tool errors.
 */
public interface McpBackend {
    /**
     * A new sandbox, as the create tool asks for it; null or empty fields take the user's settings (the project's
     * {@code .kosa8/config.toml}, else kosa8's defaults).
     *
     * @param workspace the host folder to share, absolute; empty for the folder {@code kosa8 mcp} runs in;
     *                  {@code none} for no folder
     * @param createdBy who makes it, {@code mcp:CLIENT}, shown by {@code kosa8 ls}
     */
    record CreateSpec(String image, String memory, Integer cpus, String workspace, String net, List<String> allow,
                      List<String> secrets, String createdBy) {
        public CreateSpec {
            allow = allow == null ? List.of() : List.copyOf(allow);
            secrets = secrets == null ? List.of() : List.copyOf(secrets);
        }
    }

    /** One command run to its end: its argv, stdin (may be empty), working directory, variables and timeout. */
    record ExecRequest(List<String> argv, byte[] stdin, String cwd, String user, Map<String, String> env,
                       long timeoutSeconds, int maxOutputBytes) {
        public ExecRequest {
            argv = List.copyOf(argv);
            env = Map.copyOf(env);
        }
    }

    /**
     * What a command left: its exit code, and its output up to the request's bound per stream.
     *
     * @param stdoutBytes every byte it wrote to stdout, kept or not
     * @param timedOut    true when it was killed at its timeout
     */
    record ExecResult(int exitCode, byte[] stdout, byte[] stderr, long stdoutBytes, long stderrBytes,
                      boolean timedOut) {
    }

    /** A file read from a sandbox: up to the bound asked for, with its whole size. */
    record FileContent(byte[] bytes, long size, int mode, boolean truncated) {
    }

    Object create(CreateSpec spec);

    Object list();

    Object inspect(String sandbox);

    Object remove(String sandbox);

    ExecResult exec(String sandbox, ExecRequest request);

    Object startProcess(String sandbox, List<String> argv, Map<String, String> env, String cwd, String tag,
                        long timeoutSeconds, boolean keepStdin);

    Object processes(String sandbox);

    Object output(String sandbox, String process, long from, int max, int waitSeconds);

    void writeStdin(String sandbox, String process, byte[] bytes);

    void closeStdin(String sandbox, String process);

    Object signal(String sandbox, String process, String signal);

    void writeFile(String sandbox, String path, byte[] content, int mode);

    FileContent readFile(String sandbox, String path, int maxBytes);

    Object stat(String sandbox, String path, boolean follow);

    Object listFiles(String sandbox, String path, int depth, int max);

    Object makeDirectory(String sandbox, String path, boolean existOk);

    Object removeFile(String sandbox, String path, boolean recursive);

    Object rename(String sandbox, String from, String to, boolean replace);

    Object checkpoint(String sandbox, String message);

    Object checkpoints(String sandbox);

    Object rewind(String sandbox, String checkpoint);

    Object fork(String sandbox, String checkpoint, String createdBy);

    Object diff(String sandbox, String checkpoint);

    Object network(String sandbox);

    Object allow(String sandbox, List<String> rules);

    Object deny(String sandbox, String host);

    Object grantSecret(String sandbox, String name);
}
