package dev.kosa8.e2b;

import com.fasterxml.jackson.databind.JsonNode;
import dev.kosa8.host.KosaException;
import dev.kosa8.processes.OutputBuffer;
import dev.kosa8.processes.ProcessInfo;
import dev.kosa8.processes.ProcessState;
import dev.kosa8.processes.Processes;
import dev.kosa8.processes.SignalNames;
import dev.kosa8.protocol.Message;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * envd's {@code process.Process} service over the daemon's kept processes (docs/processes.md): Start (with a
 * terminal when asked, {@code pty}) and Connect stream a process's output (from the daemon's buffer, by offset,
 * so nothing is lost between reads) with keepalives, then its end; List, SendInput, CloseStdin, SendSignal and
 * Update (a terminal's size) act on it by its pid in the guest or its tag. A process dies when its command's
 * timeout ({@code timeoutMs}, Connect's deadline) passes, as in E2B.
 */
final class ProcessService {
    private static final int READ = 256 * 1024;

    private final E2bBackend backend;

    ProcessService(E2bBackend backend) {
        this.backend = backend;
    }

    void call(String method, E2bSandbox s, ConnectCall c, String user) throws IOException {
        switch (method) {
            case "Start" -> start(s, c, user);
            case "Connect" -> connect(s, c);
            case "List" -> c.reply(list(s, c.request()));
            case "SendInput" -> sendInput(s, c.request(), c);
            case "CloseStdin" -> {
                Found f = select(s, c.request());
                backend.processes().closeStdin(s.id, f.info().id());
                c.reply(Map.of());
            }
            case "SendSignal" -> sendSignal(s, c.request(), c);
            case "Update" -> update(s, c.request(), c);
            case "StreamInput" -> throw new ConnectError(ConnectError.Code.UNIMPLEMENTED, "client streams need"
                    + " HTTP/2; send stdin with SendInput");
            default -> throw new ConnectError(ConnectError.Code.UNIMPLEMENTED, "process.Process has no method "
                    + Json.quote(method));
        }
    }

    private void start(E2bSandbox s, ConnectCall c, String user) throws IOException {
        Json req = c.request();
        if (!c.streaming) {
            throw ConnectError.invalid("Start is a server stream: send application/connect+json");
        }
        boolean pty = req.has("pty");
        Json size = req.object("pty").object("size");
        int rows = pty ? (int) size.number("rows", 24, 1, 0xffff) : 0;
        int cols = pty ? (int) size.number("cols", 80, 1, 0xffff) : 0;
        Json proc = req.object("process");
        String cmd = proc.string("cmd", "");
        if (cmd.isEmpty()) {
            throw ConnectError.invalid("\"process.cmd\" is required");
        }
        List<String> args = proc.strings("args");
        Map<String, String> envs = proc.stringMap("envs");
        String cwd = proc.string("cwd", "");
        String tag = req.string("tag", "");
        boolean stdin = req.bool("stdin", false);
        String u = user.isEmpty() ? s.defaultUser : user;
        if (cwd.isEmpty()) {
            cwd = E2bSandbox.home(u);
        } else if (!cwd.startsWith("/")) {
            cwd = E2bSandbox.home(u) + "/" + cwd;
        }
        List<String> argv = new ArrayList<>();
        argv.add(cmd);
        argv.addAll(args);
        Map<String, String> env = new LinkedHashMap<>(s.envs);
        env.putAll(envs);
        Message.ExecSpec spec;
        try {
            spec = new Message.ExecSpec(argv, env, cwd, u.equals("root") ? "" : u, pty, rows, cols);
        } catch (RuntimeException e) {
            throw ConnectError.invalid("cannot run it: " + e.getMessage());
        }
        Duration timeout = deadline(c);
        ProcessInfo info;
        try {
            info = backend.start(s.id, new Processes.Start(spec, tag, timeout, stdin || pty));
        } catch (KosaException e) {
            throw kosa(e);
        }
        if (info.state() == ProcessState.FAILED && info.pid() == 0) {
            throw new ConnectError(info.exitCode() != null && info.exitCode() == 127 ? ConnectError.Code.NOT_FOUND
                    : ConnectError.Code.INVALID_ARGUMENT, "cannot start " + cmd + ": " + info.reason());
        }
        s.processes.put(info.pid(), new E2bSandbox.Started(info.id(), cmd, args, envs, cwd, tag, pty));
        stream(s, c, info, 0, pty);
    }

    private void connect(E2bSandbox s, ConnectCall c) throws IOException {
        Json req = c.request();
        if (!c.streaming) {
            throw ConnectError.invalid("Connect is a server stream: send application/connect+json");
        }
        Found f = select(s, req);
        E2bSandbox.Started st = s.processes.get(f.info().pid());
        stream(s, c, f.info(), f.info().output().end(), st != null && st.pty());
    }

    /** The process's events from output offset {@code from}: start, data, keepalives, end. */
    private void stream(E2bSandbox s, ConnectCall c, ProcessInfo info, long from, boolean pty) {
        long keepalive = keepalive(c);
        c.send(Map.of("event", Map.of("start", Map.of("pid", info.pid()))));
        long next = from;
        while (c.x.open()) {
            OutputBuffer.Slice slice;
            try {
                slice = backend.processes().read(s.id, info.id(), next, READ, Duration.ofMillis(keepalive));
            } catch (KosaException e) {
                c.end(kosa(e));
                return;
            }
            for (OutputBuffer.Chunk ch : slice.chunks()) {
                String stream = pty ? "pty" : ch.stream() == Message.Stream.STDERR ? "stderr" : "stdout";
                c.send(Map.of("event", Map.of("data", Map.of(stream, Base64.getEncoder().encodeToString(ch.bytes())))));
            }
            next = slice.next();
            if (slice.complete()) {
                ProcessInfo done = backend.processes().get(s.id, info.id());
                s.processes.remove(info.pid());
                c.send(Map.of("event", Map.of("end", end(done))));
                c.end(null);
                return;
            }
            if (slice.chunks().isEmpty()) {
                c.send(Map.of("event", Map.of("keepalive", Map.of())));
            }
        }
    }

    /** envd's end event: a signal's death is exit code -1, {@code exited} false, as Go's ProcessState says. */
    static Map<String, Object> end(ProcessInfo p) {
        Map<String, Object> e = new LinkedHashMap<>();
        if (p.signal() != 0) {
            e.put("exitCode", -1);
            e.put("exited", false);
            e.put("status", "signal: " + signalWord(p.signal()));
        } else {
            int code = p.exitCode() == null ? -1 : p.exitCode();
            e.put("exitCode", code);
            e.put("exited", p.state() == ProcessState.EXITED);
            e.put("status", p.state() == ProcessState.EXITED ? "exit status " + code : "failed");
        }
        if (!p.reason().isEmpty()) {
            e.put("error", p.reason());
        }
        return e;
    }

    private static String signalWord(int sig) {
        return switch (sig) {
            case 9 -> "killed";
            case 15 -> "terminated";
            case 2 -> "interrupt";
            case 1 -> "hangup";
            default -> SignalNames.name(sig).toLowerCase();
        };
    }

    private Map<String, Object> list(E2bSandbox s, Json req) {
        List<Object> out = new ArrayList<>();
        for (ProcessInfo p : backend.processes().list(s.id)) {
            if (p.state() != ProcessState.RUNNING || p.pid() == 0) {
                continue;
            }
            E2bSandbox.Started st = s.processes.get(p.pid());
            Map<String, Object> config = new LinkedHashMap<>();
            if (st != null && st.processId().equals(p.id())) {
                config.put("cmd", st.cmd());
                config.put("args", st.args());
                config.put("envs", st.envs());
                config.put("cwd", st.cwd());
            } else {
                config.put("cmd", p.command().getFirst());
                config.put("args", p.command().subList(1, p.command().size()));
                config.put("envs", Map.of());
            }
            Map<String, Object> v = new LinkedHashMap<>();
            v.put("config", config);
            v.put("pid", p.pid());
            if (!p.tag().isEmpty()) {
                v.put("tag", p.tag());
            }
            out.add(v);
        }
        return Map.of("processes", out);
    }

    private void sendInput(E2bSandbox s, Json req, ConnectCall c) {
        Found f = select(s, req);
        Json input = req.object("input");
        byte[] bytes = input.has("pty") ? input.bytes("pty") : input.bytes("stdin");
        try {
            backend.processes().write(s.id, f.info().id(), bytes);
        } catch (KosaException e) {
            throw kosa(e);
        }
        c.reply(Map.of());
    }

    /** Update: a terminal's new size. */
    private void update(E2bSandbox s, Json req, ConnectCall c) {
        Found f = select(s, req);
        if (!req.has("pty")) {
            c.reply(Map.of()); // nothing to change
            return;
        }
        Json size = req.object("pty").object("size");
        try {
            backend.processes().resize(s.id, f.info().id(), (int) size.number("rows", 24, 1, 0xffff),
                    (int) size.number("cols", 80, 1, 0xffff));
        } catch (KosaException e) {
            throw kosa(e);
        }
        c.reply(Map.of());
    }

    private void sendSignal(E2bSandbox s, Json req, ConnectCall c) {
        Found f = select(s, req);
        int sig = signal(req.raw("signal"));
        try {
            backend.processes().signal(s.id, f.info().id(), sig);
        } catch (KosaException e) {
            throw e.kind() == KosaException.Kind.STATE ? ConnectError.notFound("process " + f.info().pid()
                    + " has ended") : kosa(e);
        }
        c.reply(Map.of());
    }

    /** envd's Signal enum: by name ({@code SIGNAL_SIGKILL}) or number; only SIGKILL and SIGTERM are in it. */
    static int signal(JsonNode v) {
        if (v == null || v.isNull()) {
            throw ConnectError.invalid("\"signal\" is required");
        }
        String s = v.isTextual() ? v.asText() : v.isIntegralNumber() ? Long.toString(v.asLong()) : "";
        return switch (s) {
            case "SIGNAL_SIGKILL", "9" -> 9;
            case "SIGNAL_SIGTERM", "15" -> 15;
            default -> throw ConnectError.invalid("\"signal\" is SIGNAL_SIGKILL or SIGNAL_SIGTERM, not "
                    + Json.quote(s));
        };
    }

    /** A running process named by a request's {@code process} selector. */
    private record Found(ProcessInfo info) {
    }

    private Found select(E2bSandbox s, Json req) {
        Json sel = req.object("process");
        boolean byPid = sel.has("pid");
        boolean byTag = sel.has("tag");
        if (byPid == byTag) {
            throw ConnectError.invalid("\"process\" names a process by \"pid\" or by \"tag\"");
        }
        long pid = byPid ? sel.number("pid", 0, 1, 0xffffffffL) : 0;
        String tag = byTag ? sel.string("tag", "") : "";
        Optional<ProcessInfo> p = backend.processes().list(s.id).stream()
                .filter(i -> i.state() == ProcessState.RUNNING && i.pid() != 0)
                .filter(i -> byPid ? i.pid() == pid : i.tag().equals(tag))
                .reduce((a, b) -> b);
        return new Found(p.orElseThrow(() -> ConnectError.notFound("process with " + (byPid ? "pid " + pid
                : "tag " + Json.quote(tag)) + " not found")));
    }

    /** Connect's deadline for the call: the command's {@code timeoutMs}; none for 0 or absent. */
    private static Duration deadline(ConnectCall c) {
        String t = c.x.headers.get("Connect-Timeout-Ms");
        if (t == null || t.isEmpty()) {
            return Duration.ZERO;
        }
        if (!t.matches("[0-9]{1,10}")) {
            throw ConnectError.invalid("Connect-Timeout-Ms must be a number of milliseconds");
        }
        return Duration.ofMillis(Long.parseLong(t));
    }

    private static long keepalive(ConnectCall c) {
        String k = c.x.headers.get("Keepalive-Ping-Interval");
        long seconds = 50;
        if (k != null && k.matches("[0-9]{1,6}")) {
            seconds = Math.max(1, Math.min(60, Long.parseLong(k)));
        }
        return seconds * 1000;
    }

    static ConnectError kosa(KosaException e) {
        String msg = e.getMessage() + (e.suggestion().isEmpty() ? "" : " (" + e.suggestion() + ")");
        return new ConnectError(switch (e.kind()) {
            case USAGE -> ConnectError.Code.INVALID_ARGUMENT;
            case STATE -> ConnectError.Code.FAILED_PRECONDITION;
            case LIMIT -> ConnectError.Code.RESOURCE_EXHAUSTED;
            default -> ConnectError.Code.INTERNAL;
        }, msg);
    }
}
