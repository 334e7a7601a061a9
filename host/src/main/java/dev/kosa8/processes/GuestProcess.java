package dev.kosa8.processes;

import dev.kosa8.host.KosaException;
import dev.kosa8.protocol.Limits;
import dev.kosa8.protocol.Message;
import java.time.Duration;
import java.time.Instant;
import java.util.Arrays;
import java.util.function.Consumer;

/**
 * One process the daemon owns: started on the daemon's own channel to the
 * agent, its output drained into an {@link OutputBuffer} whether or not a
 * client reads it (each chunk credited back at once, so the guest never
 * waits on a client), its stdin written within the protocol's window.
 * Messages from the guest arrive on the agent connection's reader thread
 * ({@link #received}) and never block it.
 */
final class GuestProcess {
    private final String id;
    private final Message.ExecSpec spec;
    private final String tag;
    private final Duration timeout;
    private final Instant started = Instant.now();
    private final OutputBuffer output;
    private final Consumer<GuestProcess> onEnd;
    private volatile Guest guest;
    private int channel;
    private long pid;
    private ProcessState state = ProcessState.RUNNING;
    private Integer exitCode;
    private int signal;
    private String reason = "";
    private Instant ended;
    private boolean stdinOpen;
    private long stdinUncredited;
    /** The last signal sent through the API, to say so when it is the one the process died of. */
    private int signalSent;
    private boolean timedOut;
    /** Done once the guest has said the process started, or it ended (it may never have started). */
    private final java.util.concurrent.CompletableFuture<Void> begun = new java.util.concurrent.CompletableFuture<>();

    GuestProcess(String id, Message.ExecSpec spec, String tag, Duration timeout, long outputBytes,
                 Consumer<GuestProcess> onEnd) {
        this.id = id;
        this.spec = spec;
        this.tag = tag;
        this.timeout = timeout;
        this.output = new OutputBuffer(outputBytes);
        this.onEnd = onEnd;
    }

    String id() {
        return id;
    }

    Duration timeout() {
        return timeout;
    }

    OutputBuffer output() {
        return output;
    }

    /** Starts it in the guest; with {@code keepStdin} its stdin stays open for {@link #write}, else it is closed. */
    void start(Guest g, boolean keepStdin) {
        int ch;
        synchronized (this) {
            guest = g;
            stdinOpen = keepStdin;
        }
        ch = g.open(this::received);
        synchronized (this) {
            channel = ch;
        }
        g.send(new Message.Exec(ch, spec));
        if (!keepStdin) {
            g.send(new Message.Eof(ch, Message.Stream.STDIN));
        }
    }

    /** A message from the guest on this process's channel. */
    void received(Message m) {
        switch (m) {
            case Message.Started s -> {
                synchronized (this) {
                    pid = s.pid();
                }
                begun.complete(null);
            }
            case Message.Data d -> {
                if (d.stream() != Message.Stream.STDIN && d.bytes().length > 0) {
                    output.append(d.stream(), d.bytes());
                    guest.send(new Message.Credit(d.channel(), d.stream(), d.bytes().length));
                }
            }
            case Message.Credit c -> {
                synchronized (this) {
                    stdinUncredited = Math.max(0, stdinUncredited - c.bytes());
                    notifyAll();
                }
            }
            case Message.Exited x -> end(ProcessState.EXITED, x.exitCode(), x.signal(), "");
            case Message.Failed f -> end(ProcessState.FAILED, switch (f.code()) {
                // as a shell reports a program it cannot run
                case NOT_FOUND -> 127;
                case PERMISSION -> 126;
                default -> null;
            }, 0, f.message());
            default -> {
                // Eof of a stream, FileInfo: nothing to keep
            }
        }
    }

    private void end(ProcessState how, Integer code, int sig, String why) {
        synchronized (this) {
            if (state != ProcessState.RUNNING) {
                return;
            }
            state = how;
            exitCode = code;
            signal = sig;
            if (timedOut) {
                reason = "timed out after " + timeout.toSeconds() + " s" + (why.isEmpty() ? "" : "; " + why);
            } else if (sig != 0 && sig == signalSent) {
                reason = "ended by " + SignalNames.name(sig) + ", sent through the API";
            } else {
                reason = why;
            }
            ended = Instant.now();
            stdinOpen = false;
            notifyAll();
        }
        output.close();
        begun.complete(null);
        onEnd.accept(this);
    }

    /** Waits until the guest has started it, or it ended, at most {@code limit}. */
    void awaitBegun(Duration limit) {
        try {
            begun.get(limit.toMillis(), java.util.concurrent.TimeUnit.MILLISECONDS);
        } catch (java.util.concurrent.TimeoutException | java.util.concurrent.ExecutionException e) {
            // still starting: the record says running, with no pid yet
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    synchronized boolean running() {
        return state == ProcessState.RUNNING;
    }

    /** Sends {@code sig} to the process's group; a process that has ended is left alone. */
    void signal(int sig) {
        Guest g;
        int ch;
        synchronized (this) {
            if (state != ProcessState.RUNNING) {
                throw new KosaException(KosaException.Kind.STATE, "process " + id + " is not running: it "
                        + describeEnd(), "");
            }
            signalSent = sig;
            g = guest;
            ch = channel;
        }
        g.send(new Message.Signal(ch, sig));
    }

    /** Resizes its terminal. */
    void resize(int rows, int columns) {
        Guest g;
        int ch;
        synchronized (this) {
            if (!spec.tty()) {
                throw new KosaException(KosaException.Kind.USAGE, "process " + id + " has no terminal to resize", "");
            }
            if (state != ProcessState.RUNNING) {
                throw new KosaException(KosaException.Kind.STATE, "process " + id + " is not running: it "
                        + describeEnd(), "");
            }
            g = guest;
            ch = channel;
        }
        Message.Resize r;
        try {
            r = new Message.Resize(ch, rows, columns);
        } catch (dev.kosa8.protocol.ProtocolException e) {
            throw new KosaException(KosaException.Kind.USAGE, "a terminal of " + rows + " rows and " + columns
                    + " columns: " + e.getMessage(), "");
        }
        g.send(r);
    }

    /** The timeout passed: the process is killed, and says why. */
    void timeUp() {
        Guest g;
        int ch;
        synchronized (this) {
            if (state != ProcessState.RUNNING) {
                return;
            }
            timedOut = true;
            g = guest;
            ch = channel;
        }
        g.send(new Message.Signal(ch, 9));
    }

    /**
     * Writes {@code bytes} to the process's stdin, waiting while the guest has a window's worth not yet
     * consumed (at most {@code waitMillis} in all).
     */
    void write(byte[] bytes, long waitMillis) throws InterruptedException {
        long deadline = System.nanoTime() + waitMillis * 1_000_000;
        for (int at = 0; at < bytes.length; ) {
            int n = Math.min(Limits.MAX_DATA, bytes.length - at);
            Guest g;
            int ch;
            synchronized (this) {
                while (true) {
                    checkStdinOpen();
                    if (stdinUncredited + n <= Limits.INITIAL_WINDOW) {
                        break;
                    }
                    long left = deadline - System.nanoTime();
                    if (left <= 0) {
                        throw new KosaException(KosaException.Kind.LIMIT, "process " + id + " has not read the "
                                + stdinUncredited + " bytes of stdin already sent to it (" + at + " of these "
                                + bytes.length + " were sent)", "send the rest once it reads; `kosa8 attach` "
                                + "shows what it is doing");
                    }
                    wait(Math.max(1, left / 1_000_000));
                }
                stdinUncredited += n;
                g = guest;
                ch = channel;
            }
            g.send(new Message.Data(ch, Message.Stream.STDIN, Arrays.copyOfRange(bytes, at, at + n)));
            at += n;
        }
    }

    private void checkStdinOpen() {
        if (state != ProcessState.RUNNING) {
            throw new KosaException(KosaException.Kind.STATE, "process " + id + " takes no more stdin: it "
                    + describeEnd(), "");
        }
        if (!stdinOpen) {
            throw new KosaException(KosaException.Kind.STATE, "the stdin of process " + id + " is closed",
                    "start it with stdin kept open (`kosa8 exec -d -i`) to write to it");
        }
    }

    /** Closes the process's stdin; closing it again does nothing. */
    void closeStdin() {
        Guest g;
        int ch;
        synchronized (this) {
            if (!stdinOpen || state != ProcessState.RUNNING) {
                return;
            }
            stdinOpen = false;
            g = guest;
            ch = channel;
        }
        g.send(new Message.Eof(ch, Message.Stream.STDIN));
    }

    private String describeEnd() {
        return switch (state) {
            case RUNNING -> "is running";
            case EXITED -> "exited with " + exitCode + (reason.isEmpty() ? "" : " (" + reason + ")");
            case FAILED -> "failed: " + reason;
        };
    }

    synchronized ProcessInfo info() {
        return new ProcessInfo(id, spec.argv(), tag, started, pid, state, exitCode, signal, reason, ended,
                output.stats(), stdinOpen, timeout.toSeconds());
    }
}
