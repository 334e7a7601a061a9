package dev.kosa8.mcp;

import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/** run_command, and the background processes the daemon keeps: start, read output, send stdin, kill, list. */
final class CommandTools {
    /** The most output run_command answers per stream (the rest is counted, not sent). */
    static final int MAX_OUTPUT = 1024 * 1024;
    static final long MAX_TIMEOUT = 24 * 3600;
    static final long DEFAULT_TIMEOUT = 120;

    private final McpBackend backend;

    CommandTools(McpBackend backend) {
        this.backend = backend;
    }

    List<ToolDef> tools() {
        return List.of(
                new ToolDef("run_command", """
                        Run a command in a sandbox and wait for it to end: answers exit_code, stdout and stderr \
                        (each up to 1 MiB; *_bytes counts all of it) and timed_out. Give 'command' as one shell \
                        line (run with sh -c: pipes, &&, quotes work), or 'argv' as a list. It starts in \
                        /workspace when the sandbox has a folder, else in the user's home. For servers or \
                        anything longer than the timeout use start_process.""",
                        Schema.object().sandbox()
                                .string("command", "A shell command line, like: python3 -c 'print(6*7)'",
                                        Args.MAX_TEXT, false)
                                .strings("argv", "The program and its arguments, instead of 'command'.", false)
                                .string("stdin", "Text (or base64, with encoding) given to its standard input.",
                                        false)
                                .choice("encoding", "How stdin is written: utf-8 (default) or base64.",
                                        List.of("utf-8", "base64"))
                                .string("cwd", "Working directory in the sandbox (absolute).", Args.MAX_PATH, false)
                                .env("env", "Extra environment variables, NAME: value.")
                                .integer("timeout_seconds", "Kill it after this many seconds (default 120).", 1,
                                        MAX_TIMEOUT),
                        this::run),
                new ToolDef("start_process", """
                        Start a command in the background and answer at once with its process id (like p3). It \
                        keeps running and its output is kept (within a bound) while nobody reads it; read it with \
                        read_process_output, write to it with send_process_stdin (start it with stdin: true), stop \
                        it with kill_process. For servers, watchers and long builds.""",
                        Schema.object().sandbox()
                                .string("command", "A shell command line (run with sh -c).", Args.MAX_TEXT, false)
                                .strings("argv", "The program and its arguments, instead of 'command'.", false)
                                .string("cwd", "Working directory in the sandbox (absolute).", Args.MAX_PATH, false)
                                .env("env", "Extra environment variables, NAME: value.")
                                .string("tag", "A label of yours, shown by list_processes.", 128, false)
                                .integer("timeout_seconds", "Kill it after this many seconds (default: never).", 0,
                                        MAX_TIMEOUT)
                                .bool("stdin", "Keep its standard input open for send_process_stdin (default false:"
                                        + " it reads end of file)."),
                        this::start),
                new ToolDef("read_process_output", """
                        Read a background process's output from byte offset 'from' (0 at first, then the 'next' \
                        of the previous answer, so each byte comes once). Answers output (stdout and stderr in the \
                        order written), stdout, stderr, next, complete (true once it ended and all was read), \
                        state and exit_code. wait_seconds waits for new output while it runs.""",
                        Schema.object().sandbox().process()
                                .integer("from", "Byte offset to read from (default 0).", 0, Long.MAX_VALUE)
                                .integer("max_bytes", "At most this many bytes (default and most 1 MiB).", 1,
                                        MAX_OUTPUT)
                                .integer("wait_seconds", "Wait up to this long for output (default 0, most 60).", 0,
                                        60),
                        this::read),
                new ToolDef("send_process_stdin", """
                        Write text (or base64) to a background process's standard input; close: true then \
                        closes it so the process reads end of file. The process must have been started with \
                        stdin: true.""",
                        Schema.object().sandbox().process()
                                .string("data", "What to write.", false)
                                .choice("encoding", "utf-8 (default) or base64.", List.of("utf-8", "base64"))
                                .bool("close", "Close its stdin after writing."),
                        this::stdin),
                new ToolDef("kill_process", """
                        Send a signal to a background process and its children: TERM by default, KILL to end \
                        it at once, or INT, HUP, ... Answers once sent; read_process_output shows when it ended.""",
                        Schema.object().sandbox().process()
                                .string("signal", "TERM (default), KILL, INT, HUP, USR1, ... or a number.", 16,
                                        false),
                        (a, c) -> backend.signal(a.sandbox(), a.process(), signal(a))),
                new ToolDef("list_processes", """
                        List a sandbox's background processes, running and recently ended: id, command, tag, \
                        state, exit code, start and end.""",
                        Schema.object().sandbox(), (a, c) -> Map.of("processes", backend.processes(a.sandbox()))));
    }

    /** The command as argv: 'argv' as given, or 'command' run by sh -c; exactly one of them. */
    static List<String> argv(Args a) {
        boolean line = a.has("command");
        boolean list = a.has("argv");
        if (line == list) {
            throw new ToolError("give exactly one of 'command' (a shell line) and 'argv' (a list)",
                    "like command: \"ls -la /workspace\", or argv: [\"ls\", \"-la\", \"/workspace\"]");
        }
        if (line) {
            return List.of("sh", "-c", a.text("command", Args.MAX_TEXT));
        }
        List<String> argv = a.texts("argv");
        if (argv.isEmpty() || argv.getFirst().isEmpty()) {
            throw new ToolError("'argv' needs at least the program's name", "");
        }
        return argv;
    }

    private static String cwd(Args a) {
        return a.has("cwd") ? a.guestPath("cwd") : "";
    }

    private Object run(Args a, Caller caller) {
        String sandbox = a.sandbox();
        List<String> argv = argv(a);
        byte[] stdin = a.content("stdin", false);
        long timeout = a.number("timeout_seconds", 1, MAX_TIMEOUT, DEFAULT_TIMEOUT);
        McpBackend.ExecResult r = backend.exec(sandbox, new McpBackend.ExecRequest(argv, stdin, cwd(a), "",
                a.env("env"), timeout, MAX_OUTPUT));
        Map<String, Object> out = new LinkedHashMap<>();
        out.put("exit_code", r.exitCode());
        out.put("stdout", new String(r.stdout(), StandardCharsets.UTF_8));
        out.put("stderr", new String(r.stderr(), StandardCharsets.UTF_8));
        out.put("stdout_bytes", r.stdoutBytes());
        out.put("stderr_bytes", r.stderrBytes());
        out.put("timed_out", r.timedOut());
        return out;
    }

    private Object start(Args a, Caller caller) {
        String sandbox = a.sandbox();
        return backend.startProcess(sandbox, argv(a), a.env("env"), cwd(a), a.optionalText("tag", 128, ""),
                a.number("timeout_seconds", 0, MAX_TIMEOUT, 0), a.flag("stdin", false));
    }

    private Object read(Args a, Caller caller) {
        Object answer = backend.output(a.sandbox(), a.process(), a.number("from", 0, Long.MAX_VALUE, 0),
                (int) a.number("max_bytes", 1, MAX_OUTPUT, MAX_OUTPUT), (int) a.number("wait_seconds", 0, 60, 0));
        return outputView(answer);
    }

    /** The daemon's output answer (chunks in base64) as text an agent reads. */
    static Map<String, Object> outputView(Object answer) {
        Map<?, ?> m = answer instanceof Map<?, ?> x ? x : Map.of();
        StringBuilder all = new StringBuilder();
        StringBuilder out = new StringBuilder();
        StringBuilder err = new StringBuilder();
        List<?> chunks = m.get("chunks") instanceof List<?> l ? l : List.of();
        for (Object c : chunks) {
            if (c instanceof Map<?, ?> chunk && chunk.get("data") instanceof String data) {
                String text = new String(Base64.getDecoder().decode(data), StandardCharsets.UTF_8);
                all.append(text);
                ("stderr".equals(chunk.get("stream")) ? err : out).append(text);
            }
        }
        Map<?, ?> process = m.get("process") instanceof Map<?, ?> p ? p : Map.of();
        Map<String, Object> v = new LinkedHashMap<>();
        v.put("output", all.toString());
        v.put("stdout", out.toString());
        v.put("stderr", err.toString());
        v.put("from", m.get("from"));
        v.put("next", m.get("next"));
        v.put("dropped", m.get("dropped"));
        v.put("complete", m.get("complete"));
        v.put("state", process.get("state"));
        v.put("exit_code", process.get("exitCode"));
        v.put("reason", process.get("reason"));
        return v;
    }

    private Object stdin(Args a, Caller caller) {
        String sandbox = a.sandbox();
        String proc = a.process();
        byte[] data = a.content("data", false);
        boolean close = a.flag("close", false);
        if (data.length == 0 && !close) {
            throw new ToolError("send_process_stdin needs 'data', or close: true", "");
        }
        if (data.length > 0) {
            backend.writeStdin(sandbox, proc, data);
        }
        if (close) {
            backend.closeStdin(sandbox, proc);
        }
        Map<String, Object> out = new LinkedHashMap<>();
        out.put("written", data.length);
        out.put("closed", close);
        return out;
    }

    static String signal(Args a) {
        String s = a.optionalText("signal", 16, "TERM");
        if (!s.matches("(?i)(SIG)?[A-Z0-9+-]{1,10}")) {
            throw new ToolError("kill_process: '" + s + "' is not a signal", "TERM, KILL, INT, HUP or a number");
        }
        return s;
    }
}
