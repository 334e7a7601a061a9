package dev.kosa8.vm;

import dev.kosa8.protocol.Limits;
import dev.kosa8.protocol.Message;
import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/**
 * Runs a short command in the guest for the host's own purposes (sync before
 * stop, reading a value) and collects its output. Not for user commands, whose
 * output is streamed.
 */
public final class GuestCommand {
    /** A finished command. */
    public record Result(int exitCode, String stdout, String stderr) {
    }

    private static final int MAX_OUTPUT = 1 << 20;

    private GuestCommand() {
    }

    /**
     * Asks the agent to mount the workspace (its 9p server must already be
     * connected to the workspace's port) and waits for the answer; with
     * {@code afresh}, a mount already there is replaced (see
     * {@link Message.MountWorkspace}); through {@code transport}, cached or
     * not as it says ({@link WorkspaceTransport}).
     */
    public static void mountWorkspace(AgentConnection agent, String guestPath, int msize, boolean afresh,
            WorkspaceTransport transport, Duration timeout) {
        request(agent, channel -> new Message.MountWorkspace(channel, guestPath, msize, afresh,
                transport == WorkspaceTransport.RELAY, transport.cached()), timeout,
                "the workspace was not mounted");
    }

    /** Freezes the sandbox's processes and syncs (see {@link Message.Freeze}). */
    public static void freeze(AgentConnection agent, Duration timeout) {
        request(agent, channel -> new Message.Freeze(channel, (int) timeout.toMillis()), timeout.plusSeconds(5),
                "the guest did not freeze");
    }

    /** Sets the clock (0: leaves it), reseeds the random generator (empty: does not), thaws the processes. */
    public static void thaw(AgentConnection agent, long epochMillis, byte[] seed, Duration timeout) {
        thawLater(agent, epochMillis, seed).await(timeout, "the guest did not thaw");
    }

    /**
     * Sends {@link #thaw}'s request without waiting: a restore queues it
     * right behind its Hello, so the guest gets both in one go.
     */
    public static Pending thawLater(AgentConnection agent, long epochMillis, byte[] seed) {
        return send(agent, channel -> new Message.Thaw(channel, epochMillis, seed));
    }

    /** A request sent and not yet answered. */
    public record Pending(AgentConnection agent, int channel, CompletableFuture<Void> done) {
        /** Waits for the answer: returns on Exited, throws the agent's Failed or {@code late} after the timeout. */
        public void await(Duration timeout, String late) {
            try {
                done.get(timeout.toMillis(), TimeUnit.MILLISECONDS);
            } catch (java.util.concurrent.TimeoutException e) {
                agent.abandon(channel);
                throw new AgentConnection.AgentException(late + " within " + timeout.toSeconds() + " s");
            } catch (java.util.concurrent.ExecutionException e) {
                throw (RuntimeException) e.getCause();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new AgentConnection.AgentException("interrupted");
            }
        }
    }

    /** Sends a request on a new channel and waits for its Exited (done) or Failed (thrown). */
    private static void request(AgentConnection agent, java.util.function.IntFunction<Message> message, Duration timeout,
                                String late) {
        send(agent, message).await(timeout, late);
    }

    /** Sends a request on a new channel; its Exited completes the future, its Failed fails it. */
    private static Pending send(AgentConnection agent, java.util.function.IntFunction<Message> message) {
        CompletableFuture<Void> done = new CompletableFuture<>();
        int channel = agent.open(m -> {
            switch (m) {
                case Message.Exited x -> done.complete(null);
                case Message.Failed f -> done.completeExceptionally(new AgentConnection.AgentException(f.message()));
                default -> { }
            }
        });
        agent.send(message.apply(channel));
        return new Pending(agent, channel, done);
    }

    /** A file for {@link #putFiles}: its path in the guest, its permission bits, its content. */
    public record GuestFile(String path, int mode, byte[] content) {
    }

    /**
     * Writes files in the guest through the agent (each to a temporary name beside it, then renamed over it), all
     * requests sent at once, then waits for every answer: no process is started in the guest. Each file must fit
     * the protocol's first window ({@link Limits#INITIAL_WINDOW}). Throws the first failure, naming the file.
     */
    public static void putFiles(AgentConnection agent, List<GuestFile> files, Duration timeout) {
        List<Pending> sent = new java.util.ArrayList<>();
        for (GuestFile f : files) {
            requireOneWindow(f.path(), f.content());
            Pending p = send(agent, channel -> new Message.PutFile(channel, f.path(), f.mode()));
            sendStdin(agent, p.channel(), f.content());
            sent.add(p);
        }
        long deadline = System.nanoTime() + timeout.toNanos();
        for (int i = 0; i < sent.size(); i++) {
            Duration left = Duration.ofNanos(Math.max(0, deadline - System.nanoTime()));
            try {
                sent.get(i).await(left, files.get(i).path() + " was not written");
            } catch (AgentConnection.AgentException e) {
                throw new AgentConnection.AgentException(files.get(i).path() + ": " + e.getMessage());
            }
        }
    }

    /** Input sent all at once, without waiting for credit, must fit the protocol's first window. */
    private static void requireOneWindow(String what, byte[] bytes) {
        if (bytes.length > Limits.INITIAL_WINDOW) {
            throw new IllegalArgumentException(what + " of " + bytes.length + " bytes is more than one window ("
                    + Limits.INITIAL_WINDOW + ")");
        }
    }

    /** Sends {@code bytes} as a channel's stdin, in messages of at most {@link Limits#MAX_DATA}, then its end. */
    private static void sendStdin(AgentConnection agent, int channel, byte[] bytes) {
        for (int at = 0; at < bytes.length; at += Limits.MAX_DATA) {
            agent.send(new Message.Data(channel, Message.Stream.STDIN,
                    java.util.Arrays.copyOfRange(bytes, at, Math.min(bytes.length, at + Limits.MAX_DATA))));
        }
        agent.send(new Message.Eof(channel, Message.Stream.STDIN));
    }

    public static Result run(AgentConnection agent, List<String> argv, Duration timeout) {
        return run(agent, argv, new byte[0], timeout);
    }

    /**
     * Runs {@code argv} in the guest with {@code stdin} as its input, which
     * must fit the protocol's first window ({@link Limits#INITIAL_WINDOW}):
     * this sends it all at once, without waiting for credit.
     */
    public static Result run(AgentConnection agent, List<String> argv, byte[] stdin, Duration timeout) {
        requireOneWindow("stdin", stdin);
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        CompletableFuture<Result> done = new CompletableFuture<>();
        int[] channel = new int[1];
        channel[0] = agent.open(m -> {
            switch (m) {
                case Message.Data d -> {
                    ByteArrayOutputStream target = d.stream() == Message.Stream.STDERR ? err : out;
                    if (target.size() < MAX_OUTPUT) {
                        target.writeBytes(d.bytes());
                    }
                    agent.send(new Message.Credit(d.channel(), d.stream(), d.bytes().length));
                }
                case Message.Exited x -> done.complete(new Result(x.exitCode(),
                        out.toString(StandardCharsets.UTF_8), err.toString(StandardCharsets.UTF_8)));
                case Message.Failed f -> done.completeExceptionally(
                        new AgentConnection.AgentException(String.join(" ", argv) + ": " + f.message()));
                default -> { }
            }
        });
        agent.send(new Message.Exec(channel[0], new Message.ExecSpec(argv, java.util.Map.of(), "/", "", false, 0, 0)));
        sendStdin(agent, channel[0], stdin);
        try {
            return done.get(timeout.toMillis(), TimeUnit.MILLISECONDS);
        } catch (java.util.concurrent.TimeoutException e) {
            agent.abandon(channel[0]);
            throw new AgentConnection.AgentException(String.join(" ", argv) + " did not finish within "
                    + timeout.toSeconds() + " s");
        } catch (java.util.concurrent.ExecutionException e) {
            throw (RuntimeException) e.getCause();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AgentConnection.AgentException("interrupted");
        }
    }
}
