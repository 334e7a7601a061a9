package dev.kosa8.cli;

import dev.kosa8.host.KosaException;
import dev.kosa8.protocol.Message;
import java.io.IOException;
import java.io.InputStream;

/** The daemon's process endpoints as the CLI calls them (docs/api.md, "Processes"). */
final class ProcessCalls {
    /** The most stdin one request carries (the daemon takes requests of up to 1 MiB). */
    static final int STDIN_CHUNK = 256 * 1024;

    private final DaemonClient daemon;
    private final String sandbox;

    ProcessCalls(DaemonClient daemon, String sandbox) {
        this.daemon = daemon;
        this.sandbox = Ids.check(sandbox);
    }

    String sandbox() {
        return sandbox;
    }

    /** Checks a process id before it goes into a request path. */
    static String checkProcess(String proc) {
        if (proc == null || !proc.matches("p[0-9]{1,18}")) {
            throw new KosaException(KosaException.Kind.USAGE, "'" + proc + "' is not a process id",
                    "process ids look like p3; `kosa8 procs ID` lists them");
        }
        return proc;
    }

    /** A duration as a user writes it: 90 (seconds), 90s, 5m, 2h; positive. */
    static long seconds(String s) {
        java.util.regex.Matcher m = java.util.regex.Pattern.compile("([0-9]{1,9})([smh]?)").matcher(s.strip());
        if (m.matches() && Long.parseLong(m.group(1)) > 0) {
            long n = Long.parseLong(m.group(1));
            return switch (m.group(2)) {
                case "m" -> n * 60;
                case "h" -> n * 3600;
                default -> n;
            };
        }
        throw new KosaException(KosaException.Kind.USAGE, "'" + s + "' is not a duration",
                "write a positive number of seconds, or one with s, m or h after it: 90, 90s, 5m, 2h");
    }

    private String base() {
        return "/v1/sandboxes/" + sandbox + "/processes";
    }

    private String of(String proc) {
        return base() + "/" + checkProcess(proc);
    }

    /** Starts a process the daemon keeps: its record. */
    Object start(Message.ExecSpec spec, String tag, long timeoutSeconds, boolean keepStdin) {
        return daemon.call("POST", base(), startBody(spec, tag, timeoutSeconds, keepStdin), "application/json");
    }

    static byte[] startBody(Message.ExecSpec spec, String tag, long timeoutSeconds, boolean keepStdin) {
        return dev.kosa8.client.BackgroundProcess.startBody(spec.argv(), spec.env(), spec.cwd(), spec.user(), tag,
                timeoutSeconds, keepStdin);
    }

    Object list() {
        return daemon.call("GET", base());
    }

    Object get(String proc) {
        return daemon.call("GET", of(proc));
    }

    /** Output from {@code from}, at most {@code max} bytes, waiting up to {@code waitSeconds} for some. */
    Object output(String proc, long from, int max, int waitSeconds) {
        return daemon.call("GET", of(proc) + "/output?from=" + from + "&max=" + max + "&wait=" + waitSeconds);
    }

    void write(String proc, byte[] bytes) {
        daemon.call("POST", of(proc) + "/stdin", bytes, "application/octet-stream");
    }

    /** Sends what {@code in} holds until its end, in chunks as they come; the bytes sent. */
    long writeAll(String proc, InputStream in) throws IOException {
        byte[] buf = new byte[STDIN_CHUNK];
        long sent = 0;
        int n;
        while ((n = in.read(buf)) >= 0) {
            if (n > 0) {
                write(proc, java.util.Arrays.copyOf(buf, n));
                sent += n;
            }
        }
        return sent;
    }

    void closeStdin(String proc) {
        daemon.call("POST", of(proc) + "/close-stdin");
    }

    Object signal(String proc, String signal) {
        return daemon.call("POST", of(proc) + "/signal?signal=" + SandboxOptions.enc(signal));
    }
}
