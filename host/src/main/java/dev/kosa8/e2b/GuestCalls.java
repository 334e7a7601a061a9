package dev.kosa8.e2b;

import dev.kosa8.processes.Guest;
import dev.kosa8.protocol.Limits;
import dev.kosa8.protocol.Message;
import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

/**
 * The agent's own requests as the listener makes them: a short command run to its end (setting up the E2B user),
 * a file read as a stream credited only as the client takes it, so nothing here holds more than a window of it.
 */
final class GuestCalls {
    static final Duration WAIT = Duration.ofSeconds(60);
    private static final int MAX_OUTPUT = 64 * 1024;

    /** A finished command. */
    record Result(int exitCode, String stdout, String stderr) {
    }

    /** The agent refused or failed a request. */
    static final class Refused extends RuntimeException {
        final Message.ErrorCode code;

        Refused(Message.ErrorCode code, String message) {
            super(message);
            this.code = code;
        }
    }

    private GuestCalls() {
    }

    /** Runs {@code argv} as {@code user} (empty: root) with no stdin, and waits for it. */
    static Result run(Guest g, List<String> argv, String user, Duration timeout) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        CompletableFuture<Result> done = new CompletableFuture<>();
        int[] ch = new int[1];
        ch[0] = g.open(m -> {
            switch (m) {
                case Message.Data d -> {
                    ByteArrayOutputStream t = d.stream() == Message.Stream.STDERR ? err : out;
                    synchronized (t) {
                        if (t.size() < MAX_OUTPUT) {
                            t.writeBytes(d.bytes());
                        }
                    }
                    g.send(new Message.Credit(d.channel(), d.stream(), d.bytes().length));
                }
                case Message.Exited x -> done.complete(new Result(x.exitCode(), out.toString(StandardCharsets.UTF_8),
                        err.toString(StandardCharsets.UTF_8)));
                case Message.Failed f -> done.completeExceptionally(new Refused(f.code(), f.message()));
                default -> { }
            }
        });
        g.send(new Message.Exec(ch[0], new Message.ExecSpec(argv, Map.of(), "/", user, false, 0, 0)));
        g.send(new Message.Eof(ch[0], Message.Stream.STDIN));
        return await(done, timeout, String.join(" ", argv));
    }

    /** Where a read file goes. */
    interface Sink {
        /** The file exists and is this long: called once, before any {@link #write}. */
        void begin(long size, int mode);

        /** The next part; returns once it is passed on, and may throw when the client went. */
        void write(byte[] bytes);
    }

    /** Reads the guest file {@code path} into {@code sink}. */
    static void get(Guest g, String path, Sink sink) {
        BlockingQueue<Message> q = new LinkedBlockingQueue<>();
        int ch = g.open(q::add);
        g.send(new Message.GetFile(ch, path));
        boolean begun = false;
        try {
            while (true) {
                Message m = q.poll(WAIT.toMillis(), TimeUnit.MILLISECONDS);
                if (m == null) {
                    throw new Refused(Message.ErrorCode.INTERNAL, "the sandbox sent nothing of " + path + " for "
                            + WAIT.toSeconds() + " s");
                }
                switch (m) {
                    case Message.FileInfo i -> {
                        sink.begin(i.size(), i.mode());
                        begun = true;
                    }
                    case Message.Data d -> {
                        if (!begun) {
                            throw new Refused(Message.ErrorCode.INTERNAL, "the sandbox sent data before its size");
                        }
                        sink.write(d.bytes());
                        g.send(new Message.Credit(ch, d.stream(), d.bytes().length));
                    }
                    case Message.Exited x -> {
                        return;
                    }
                    case Message.Failed f -> throw new Refused(f.code(), f.message());
                    default -> { }
                }
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            g.send(new Message.Signal(ch, 9));
            throw new Refused(Message.ErrorCode.INTERNAL, "interrupted");
        } catch (RuntimeException e) {
            if (!(e instanceof Refused)) {
                g.send(new Message.Signal(ch, 9));
            }
            throw e;
        }
    }

    private static <T> T await(CompletableFuture<T> f, Duration timeout, String what) {
        try {
            return f.get(timeout.toMillis(), TimeUnit.MILLISECONDS);
        } catch (java.util.concurrent.TimeoutException e) {
            throw new Refused(Message.ErrorCode.INTERNAL, what + " did not finish within " + timeout.toSeconds()
                    + " s");
        } catch (java.util.concurrent.ExecutionException e) {
            throw (RuntimeException) e.getCause();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new Refused(Message.ErrorCode.INTERNAL, "interrupted");
        }
    }
}
