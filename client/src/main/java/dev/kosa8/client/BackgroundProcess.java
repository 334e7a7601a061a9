package dev.kosa8.client;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonGenerator;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.time.Duration;
import java.util.List;
import java.util.Map;

/**
 * A command the daemon runs and keeps for you (docs/processes.md): it runs on
 * and its output keeps draining into a bounded buffer while nothing reads it,
 * and any client (this one later, another program, {@code kosa8 attach}) can
 * read it from where it left off. Made by {@link Sandbox#start(Command)}.
 */
public final class BackgroundProcess {
    /** The longest one read waits for output, as the daemon allows. */
    private static final int WAIT_SECONDS = 30;
    private static final int READ_BYTES = 4 << 20;

    private final DaemonConnection daemon;
    private final String base;
    private final String id;

    BackgroundProcess(DaemonConnection daemon, String sandbox, String id) {
        this.daemon = daemon;
        this.base = "/v1/sandboxes/" + sandbox + "/processes/" + id;
        this.id = id;
    }

    static BackgroundProcess start(DaemonConnection daemon, String sandbox, Command c) {
        Object p = daemon.call("POST", "/v1/sandboxes/" + sandbox + "/processes", body(c), "application/json");
        ProcessInfo info = ProcessInfo.of(p);
        BackgroundProcess proc = new BackgroundProcess(daemon, sandbox, info.id());
        if (c.stdin() != null && c.stdin().length > 0) {
            proc.write(c.stdin());
        }
        if (c.stdin() != null && !c.keepStdinOpen()) {
            proc.closeStdin();
        }
        return proc;
    }

    /** The JSON body of {@code POST .../processes} for {@code c}. */
    static byte[] body(Command c) {
        return startBody(c.argv(), c.env(), c.cwd(), c.user(), c.tag(),
                c.timeout() == null ? 0 : Math.max(1, c.timeout().toSeconds()), c.stdin() != null || c.keepStdinOpen());
    }

    /**
     * The JSON body of {@code POST /v1/sandboxes/ID/processes} (docs/api.md): the SDK's, and the CLI's
     * {@code exec -d}.
     *
     * @param timeoutSeconds 0 for none
     * @param keepStdin      whether its stdin stays open for writes (else it reads end of file at once)
     */
    public static byte[] startBody(List<String> argv, Map<String, String> env, String cwd, String user, String tag,
                                   long timeoutSeconds, boolean keepStdin) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        try (JsonGenerator g = new JsonFactory().createGenerator(out)) {
            g.writeStartObject();
            g.writeArrayFieldStart("command");
            for (String a : argv) {
                g.writeString(a);
            }
            g.writeEndArray();
            g.writeObjectFieldStart("env");
            for (Map.Entry<String, String> e : env.entrySet()) {
                g.writeStringField(e.getKey(), e.getValue());
            }
            g.writeEndObject();
            g.writeStringField("cwd", cwd);
            g.writeStringField("user", user);
            g.writeStringField("tag", tag);
            g.writeNumberField("timeoutSeconds", timeoutSeconds);
            g.writeBooleanField("stdin", keepStdin);
            g.writeEndObject();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return out.toByteArray();
    }

    public String id() {
        return id;
    }

    /** Its record now: state, exit code, why it ended. */
    public ProcessInfo info() {
        return ProcessInfo.of(daemon.call("GET", base));
    }

    /**
     * Its output from byte {@code from}, at most {@code maxBytes}, waiting up to {@code wait} (at most 60 s)
     * while there is nothing past {@code from} yet and it runs.
     */
    public ProcessOutput read(long from, int maxBytes, Duration wait) {
        return ProcessOutput.of(daemon.call("GET", base + "/output?from=" + from + "&max=" + maxBytes + "&wait="
                + Math.min(60, wait.toSeconds())));
    }

    /**
     * Follows its output from byte {@code from} into {@code out} and {@code err} until it ends: its final record.
     * Bytes the daemon dropped before they were read (its buffer is bounded) are skipped.
     */
    public ProcessInfo follow(long from, OutputStream out, OutputStream err) {
        long next = from;
        while (true) {
            ProcessOutput o = read(next, READ_BYTES, Duration.ofSeconds(WAIT_SECONDS));
            for (ProcessOutput.Chunk c : o.chunks()) {
                try {
                    (c.stderr() ? err : out).write(c.bytes());
                } catch (IOException e) {
                    throw new UncheckedIOException(e);
                }
            }
            next = o.next();
            if (o.complete()) {
                return o.process();
            }
        }
    }

    /** Waits for it to end and returns what it wrote (from the start, as far as the daemon still keeps it). */
    public ExecResult waitFor() {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        ProcessInfo end = follow(0, out, err);
        return new ExecResult(end.exitCode() == null ? -1 : end.exitCode(), out.toByteArray(), err.toByteArray(),
                end.reason().startsWith("timed out"));
    }

    /** Writes to its stdin (which it must have been started with: {@link Command#stdin}). */
    public void write(byte[] bytes) {
        daemon.call("POST", base + "/stdin", bytes, "application/octet-stream");
    }

    /** Closes its stdin: it reads end of file. */
    public void closeStdin() {
        daemon.call("POST", base + "/close-stdin");
    }

    /** Sends a signal ({@code TERM}, {@code KILL}, {@code HUP}, {@code 10}...) to its process group. */
    public void signal(String signal) {
        daemon.call("POST", base + "/signal?signal=" + signal);
    }

    /** SIGKILL to its process group. */
    public void kill() {
        signal("KILL");
    }

    /** Forgets an ended process and its output. */
    public void forget() {
        daemon.call("DELETE", base);
    }

    @Override
    public String toString() {
        return "BackgroundProcess[" + id + "]";
    }
}
