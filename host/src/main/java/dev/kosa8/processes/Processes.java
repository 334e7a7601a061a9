package dev.kosa8.processes;

import dev.kosa8.host.KosaException;
import dev.kosa8.protocol.Message;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

/**
 * Processes owned by the daemon rather than by a client's connection
 * (docs/processes.md): started in a sandbox, they run on and their output is
 * kept, within bounds, while no client is attached; a client reads it by
 * offset, writes stdin and sends signals by separate calls. One table per
 * sandbox; a process dies with its sandbox's machine (the agent connection
 * tells each its reason: rewound, stopped, lost), and its record stays,
 * ended, with that reason.
 */
public final class Processes implements AutoCloseable {
    /** The longest a read waits for output, and a write for the guest to take its stdin. */
    public static final Duration MAX_WAIT = Duration.ofSeconds(60);

    /** How long a start waits for the guest to say the process runs, so a program not found is answered at once. */
    static final Duration START_WAIT = Duration.ofSeconds(20);

    private final ProcessLimits limits;
    private final Map<String, ProcessTable> tables = new ConcurrentHashMap<>();
    private final ScheduledExecutorService timer = Executors.newSingleThreadScheduledExecutor(
            Thread.ofPlatform().name("process-timeouts").daemon().factory());

    public Processes(ProcessLimits limits) {
        this.limits = limits;
    }

    public ProcessLimits limits() {
        return limits;
    }

    /**
     * What to start.
     *
     * @param spec      the command, with its environment already merged
     * @param tag       the caller's label; may be empty
     * @param timeout   killed (SIGKILL to its group) once it has run this long; zero for never
     * @param keepStdin whether its stdin stays open for writes; otherwise it reads end of file at once
     */
    public record Start(Message.ExecSpec spec, String tag, Duration timeout, boolean keepStdin) {
        public Start {
            tag = tag == null ? "" : tag;
            if (tag.length() > 200 || tag.chars().anyMatch(c -> c < 0x20)) {
                throw new KosaException(KosaException.Kind.USAGE, "a tag is one line of at most 200 characters", "");
            }
            if (timeout.isNegative()) {
                throw new KosaException(KosaException.Kind.USAGE, "a timeout cannot be negative", "");
            }
            if (spec.tty() && !keepStdin) {
                throw new KosaException(KosaException.Kind.USAGE, "a process the daemon keeps has no terminal"
                        + " unless its stdin is kept open: a terminal is typed into",
                        "leave out -t, or run it attached: `kosa8 exec -it`");
            }
        }
    }

    /**
     * Starts a process and answers once the guest says it runs, or that it could not start (then its record says
     * {@code failed}, with exit code 127 for a program not found and 126 for one it may not run, as a shell
     * reports them), or after {@link #START_WAIT} with the process still starting.
     */
    public ProcessInfo start(String sandbox, Guest guest, Start s) {
        GuestProcess p = table(sandbox).add(s.spec(), s.tag(), s.timeout());
        p.start(guest, s.keepStdin());
        p.awaitBegun(START_WAIT);
        if (!s.timeout().isZero()) {
            // weakly: a process that ended and was forgotten must not stay in memory until its timeout
            var ref = new java.lang.ref.WeakReference<>(p);
            timer.schedule(() -> {
                GuestProcess x = ref.get();
                if (x != null) {
                    x.timeUp();
                }
            }, s.timeout().toMillis(), TimeUnit.MILLISECONDS);
        }
        return p.info();
    }

    public List<ProcessInfo> list(String sandbox) {
        return table(sandbox).all().stream().map(GuestProcess::info).toList();
    }

    public ProcessInfo get(String sandbox, String id) {
        return table(sandbox).get(id).info();
    }

    /** Output from {@code from}, at most {@code max} bytes, waiting up to {@code wait} for some. */
    public OutputBuffer.Slice read(String sandbox, String id, long from, int max, Duration wait) {
        GuestProcess p = table(sandbox).get(id);
        try {
            return p.output().read(from, max, Math.min(wait.toMillis(), MAX_WAIT.toMillis()));
        } catch (IllegalArgumentException e) {
            throw new KosaException(KosaException.Kind.USAGE, "process " + id + ": " + e.getMessage(),
                    "read from 0, or from the `next` of your last read");
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new KosaException(KosaException.Kind.DAEMON, "interrupted reading process " + id, "");
        }
    }

    public void write(String sandbox, String id, byte[] bytes) {
        try {
            table(sandbox).get(id).write(bytes, MAX_WAIT.toMillis());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new KosaException(KosaException.Kind.DAEMON, "interrupted writing to process " + id, "");
        }
    }

    public void closeStdin(String sandbox, String id) {
        table(sandbox).get(id).closeStdin();
    }

    /** Resizes a process's terminal; a process without one, or that has ended, is refused. */
    public void resize(String sandbox, String id, int rows, int columns) {
        table(sandbox).get(id).resize(rows, columns);
    }

    public void signal(String sandbox, String id, int signal) {
        table(sandbox).get(id).signal(signal);
    }

    /** Forgets an ended process and its output. */
    public void remove(String sandbox, String id) {
        table(sandbox).remove(id);
    }

    /** The sandbox is gone: its records go too (its processes ended with its machine). */
    public void forget(String sandbox) {
        tables.remove(sandbox);
    }

    private ProcessTable table(String sandbox) {
        return tables.computeIfAbsent(sandbox, id -> new ProcessTable(id, limits));
    }

    @Override
    public void close() {
        timer.shutdownNow();
    }
}
