package dev.kosa8.cli;

import dev.kosa8.client.DaemonConnection;
import dev.kosa8.client.ExecChannel;
import dev.kosa8.client.Kosa8Exception;
import dev.kosa8.host.HostPaths;
import dev.kosa8.host.KosaException;
import dev.kosa8.mcp.McpBackend;
import dev.kosa8.protocol.Message;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * {@code kosa8 mcp}'s calls to the daemon, every one of them, over the CLI's {@link DaemonClient}: REST for the
 * sandboxes, processes, checkpoints and policy, the exec stream for commands and files (as {@code kosa8 exec} and
 * {@code kosa8 cp} use it). The one class to move onto the Java SDK's client when it lands.
 */
final class DaemonMcpBackend implements McpBackend {
    /** SIGKILL, sent to a command at its timeout. */
    private static final int SIGKILL = 9;
    /** How long after its SIGKILL a command's call is let go of. */
    private static final long GRACE_SECONDS = 10;

    private final DaemonClient daemon;
    private final HostPaths paths;
    private final ScheduledExecutorService timers = Executors.newSingleThreadScheduledExecutor(r -> {
        Thread t = new Thread(r, "mcp-timeouts");
        t.setDaemon(true);
        return t;
    });

    DaemonMcpBackend(DaemonClient daemon, HostPaths paths) {
        this.daemon = daemon;
        this.paths = paths;
    }

    private static String sandboxPath(String id) {
        return "/v1/sandboxes/" + Ids.check(id);
    }

    private static String enc(String s) {
        return SandboxOptions.enc(s);
    }

    @Override
    public Object create(CreateSpec spec) {
        SandboxOptions o = SandboxOptions.defaults();
        o.image = spec.image();
        o.memory = spec.memory();
        o.cpus = spec.cpus();
        o.workspace = spec.workspace() == null || spec.workspace().isEmpty() ? defaultWorkspace() : spec.workspace();
        o.net = spec.net();
        o.allow = new java.util.ArrayList<>(spec.allow());
        o.secrets = new java.util.ArrayList<>(spec.secrets());
        String query = o.query() + "&createdBy=" + enc(spec.createdBy());
        Images.ensure(paths, System.err);
        return daemon.call("POST", "/v1/sandboxes?" + query);
    }

    /**
     * The folder the server runs in, as for `kosa8 create`; but a client that starts servers in / or in the
     * user's home (desktop apps do) gets no folder rather than a refusal: both are never shared.
     */
    static String defaultWorkspace() {
        java.nio.file.Path cwd = java.nio.file.Path.of("").toAbsolutePath().normalize();
        java.nio.file.Path home = java.nio.file.Path.of(System.getProperty("user.home")).toAbsolutePath().normalize();
        return cwd.getNameCount() == 0 || cwd.equals(home) ? "none" : cwd.toString();
    }

    @Override
    public Object list() {
        return daemon.call("GET", "/v1/sandboxes");
    }

    @Override
    public Object inspect(String sandbox) {
        return daemon.call("GET", sandboxPath(sandbox));
    }

    @Override
    public Object remove(String sandbox) {
        return daemon.call("DELETE", sandboxPath(sandbox) + "?force=true");
    }

    @Override
    public ExecResult exec(String sandbox, ExecRequest r) {
        Message.ExecSpec spec;
        try {
            spec = new Message.ExecSpec(r.argv(), r.env(), r.cwd(), r.user(), false, 0, 0);
        } catch (dev.kosa8.protocol.ProtocolException e) {
            throw new KosaException(KosaException.Kind.USAGE, e.getMessage(), "");
        }
        DaemonConnection.Stream stream = daemon.upgrade(sandboxPath(sandbox) + "/exec");
        ExecChannel s = new ExecChannel(stream);
        Capped out = new Capped(r.maxOutputBytes());
        Capped err = new Capped(r.maxOutputBytes());
        AtomicBoolean timedOut = new AtomicBoolean();
        s.send(new Message.Exec(ExecChannel.CH, spec));
        s.pumpStdin(new ByteArrayInputStream(r.stdin()));
        var kill = timers.schedule(() -> {
            timedOut.set(true);
            s.send(new Message.Signal(ExecChannel.CH, SIGKILL));
        }, r.timeoutSeconds(), TimeUnit.SECONDS);
        // a command that outlives its SIGKILL (a guest that no longer answers) is let go of: the call ends
        var abandon = timers.schedule(() -> {
            try {
                stream.close();
            } catch (IOException ignored) {
                // closing anyway
            }
        }, r.timeoutSeconds() + GRACE_SECONDS, TimeUnit.SECONDS);
        try {
            int code = await(s, out, err, null);
            return new ExecResult(code, out.bytes(), err.bytes(), out.total, err.total, timedOut.get());
        } catch (KosaException e) {
            if (timedOut.get()) {
                return new ExecResult(128 + SIGKILL, out.bytes(), err.bytes(), out.total, err.total, true);
            }
            throw e;
        } finally {
            kill.cancel(false);
            abandon.cancel(false);
        }
    }

    /** The SDK's exec channel to its end, its failures as the CLI's own (with their kinds and suggestions). */
    private static int await(ExecChannel s, OutputStream out, OutputStream err, ExecChannel.FileSink sink) {
        try {
            return s.await(out, err, sink);
        } catch (Kosa8Exception e) {
            throw DaemonClient.cli(e);
        }
    }

    /** Keeps the first {@code max} bytes written and counts all of them. */
    private static final class Capped extends OutputStream {
        private final ByteArrayOutputStream kept = new ByteArrayOutputStream();
        private final int max;
        long total;

        Capped(int max) {
            this.max = max;
        }

        @Override
        public void write(int b) {
            write(new byte[] {(byte) b}, 0, 1);
        }

        @Override
        public void write(byte[] b, int off, int len) {
            int room = (int) Math.max(0, Math.min(len, max - kept.size()));
            kept.write(b, off, room);
            total += len;
        }

        byte[] bytes() {
            return kept.toByteArray();
        }
    }

    private ProcessCalls calls(String sandbox) {
        return new ProcessCalls(daemon, sandbox);
    }

    @Override
    public Object startProcess(String sandbox, List<String> argv, Map<String, String> env, String cwd, String tag,
                               long timeoutSeconds, boolean keepStdin) {
        Message.ExecSpec spec;
        try {
            spec = new Message.ExecSpec(argv, env, cwd, "", false, 0, 0);
        } catch (dev.kosa8.protocol.ProtocolException e) {
            throw new KosaException(KosaException.Kind.USAGE, e.getMessage(), "");
        }
        return calls(sandbox).start(spec, tag, timeoutSeconds, keepStdin);
    }

    @Override
    public Object processes(String sandbox) {
        return calls(sandbox).list();
    }

    @Override
    public Object output(String sandbox, String process, long from, int max, int waitSeconds) {
        return calls(sandbox).output(ProcessCalls.checkProcess(process), from, max, waitSeconds);
    }

    @Override
    public void writeStdin(String sandbox, String process, byte[] bytes) {
        ProcessCalls p = calls(sandbox);
        for (int off = 0; off < bytes.length; off += ProcessCalls.STDIN_CHUNK) {
            p.write(process, java.util.Arrays.copyOfRange(bytes, off,
                    Math.min(bytes.length, off + ProcessCalls.STDIN_CHUNK)));
        }
    }

    @Override
    public void closeStdin(String sandbox, String process) {
        calls(sandbox).closeStdin(process);
    }

    @Override
    public Object signal(String sandbox, String process, String signal) {
        return calls(sandbox).signal(process, signal);
    }

    @Override
    public void writeFile(String sandbox, String path, byte[] content, int mode) {
        ExecChannel s = new ExecChannel(daemon.upgrade(sandboxPath(sandbox) + "/exec"));
        s.send(new Message.PutFile(ExecChannel.CH, path, mode));
        s.pumpStdin(new ByteArrayInputStream(content));
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        int code = await(s, OutputStream.nullOutputStream(), err, null);
        if (code != 0) {
            throw new KosaException(KosaException.Kind.STATE, "could not write " + path + ": "
                    + err.toString(java.nio.charset.StandardCharsets.UTF_8).strip(), "check that its folder exists");
        }
    }

    /** Ends a download once the bytes asked for are in. */
    private static final class Enough extends IOException {
        private static final long serialVersionUID = 1L;

        Enough() {
            super("enough");
        }
    }

    @Override
    public FileContent readFile(String sandbox, String path, int maxBytes) {
        ExecChannel s = new ExecChannel(daemon.upgrade(sandboxPath(sandbox) + "/exec"));
        s.send(new Message.GetFile(ExecChannel.CH, path));
        ByteArrayOutputStream kept = new ByteArrayOutputStream();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        long[] info = {0, 0644};
        boolean[] enough = {false};
        int code;
        try {
            code = await(s, OutputStream.nullOutputStream(), err, new ExecChannel.FileSink() {
                @Override
                public void info(long size, int mode) {
                    info[0] = size;
                    info[1] = mode;
                }

                @Override
                public void write(byte[] bytes) throws IOException {
                    int room = Math.min(bytes.length, maxBytes - kept.size());
                    kept.write(bytes, 0, room);
                    if (kept.size() >= maxBytes && info[0] > maxBytes) {
                        enough[0] = true;
                        throw new Enough();
                    }
                }
            });
        } catch (KosaException e) {
            if (enough[0]) {
                return new FileContent(kept.toByteArray(), info[0], (int) info[1], true);
            }
            throw e;
        }
        if (code != 0) {
            throw new KosaException(KosaException.Kind.STATE, "could not read " + path + ": "
                    + err.toString(java.nio.charset.StandardCharsets.UTF_8).strip(), "check the path");
        }
        return new FileContent(kept.toByteArray(), info[0], (int) info[1], false);
    }

    /**
     * A call to the daemon's file endpoints: a failure keeps the guest's code (NOT_FOUND, EXISTS, NOT_EMPTY...) at
     * the head of its message, so an agent can act on it.
     */
    private Object fileCall(String method, String path) {
        try {
            return daemon.connection().call(method, path, new byte[0], "");
        } catch (dev.kosa8.client.SandboxFileException e) {
            KosaException k = DaemonClient.cli(e);
            throw new KosaException(k.kind(), e.code() + ": " + e.getMessage(), k.suggestion());
        } catch (Kosa8Exception e) {
            throw DaemonClient.cli(e);
        }
    }

    @Override
    public Object stat(String sandbox, String path, boolean follow) {
        return fileCall("GET", sandboxPath(sandbox) + "/files/stat?path=" + enc(path) + "&follow=" + follow);
    }

    @Override
    public Object listFiles(String sandbox, String path, int depth, int max) {
        return fileCall("GET", sandboxPath(sandbox) + "/files/list?path=" + enc(path) + "&depth=" + depth
                + "&max=" + max);
    }

    @Override
    public Object makeDirectory(String sandbox, String path, boolean existOk) {
        return fileCall("POST", sandboxPath(sandbox) + "/files/mkdir?path=" + enc(path) + "&existOk=" + existOk);
    }

    @Override
    public Object removeFile(String sandbox, String path, boolean recursive) {
        return fileCall("DELETE", sandboxPath(sandbox) + "/files?path=" + enc(path) + "&recursive=" + recursive);
    }

    @Override
    public Object rename(String sandbox, String from, String to, boolean replace) {
        return fileCall("POST", sandboxPath(sandbox) + "/files/rename?from=" + enc(from) + "&to=" + enc(to)
                + "&replace=" + replace);
    }

    @Override
    public Object checkpoint(String sandbox, String message) {
        return daemon.call("POST", sandboxPath(sandbox) + "/checkpoints?message=" + enc(message));
    }

    @Override
    public Object checkpoints(String sandbox) {
        return daemon.call("GET", sandboxPath(sandbox) + "/checkpoints");
    }

    @Override
    public Object rewind(String sandbox, String checkpoint) {
        return daemon.call("POST", sandboxPath(sandbox) + "/rewind"
                + (checkpoint.isEmpty() ? "" : "?checkpoint=" + enc(checkpoint)));
    }

    @Override
    public Object fork(String sandbox, String checkpoint, String createdBy) {
        return daemon.call("POST", sandboxPath(sandbox) + "/fork?checkpoint=" + enc(checkpoint) + "&createdBy="
                + enc(createdBy));
    }

    @Override
    public Object diff(String sandbox, String checkpoint) {
        return daemon.call("GET", sandboxPath(sandbox) + "/diff"
                + (checkpoint.isEmpty() ? "" : "?checkpoint=" + enc(checkpoint)));
    }

    @Override
    public Object network(String sandbox) {
        Object net = daemon.call("GET", sandboxPath(sandbox) + "/net");
        Object secrets = daemon.call("GET", sandboxPath(sandbox) + "/secrets");
        return Map.of("network", net, "secrets", secrets);
    }

    @Override
    public Object allow(String sandbox, List<String> rules) {
        StringBuilder q = new StringBuilder();
        for (String r : rules) {
            q.append(q.isEmpty() ? "?" : "&").append("rule=").append(enc(r));
        }
        return daemon.call("POST", sandboxPath(sandbox) + "/net/allow" + q);
    }

    @Override
    public Object deny(String sandbox, String host) {
        return daemon.call("POST", sandboxPath(sandbox) + "/net/deny?host=" + enc(host));
    }

    @Override
    public Object grantSecret(String sandbox, String name) {
        return daemon.call("POST", sandboxPath(sandbox) + "/secrets/grant?name=" + enc(name));
    }
}
