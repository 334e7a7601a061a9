package dev.kosa8.vm;

import dev.kosa8.protocol.Limits;
import dev.kosa8.protocol.Message;
import java.io.IOException;
import java.io.InputStream;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

/**
 * Runs one command in the guest for the host's own work (an image build's
 * steps), streaming both ways: its output goes to consumers as it comes, and
 * its input is read from a stream and sent within the agent's credit, so a
 * large input (a COPY's files) never has to fit in memory or in one window.
 * Unlike {@link GuestCommand}, nothing is collected here.
 */
public final class GuestExec {
    /** How a command ended: its exit code, or the signal that killed it (0 when none). */
    public record Exit(int exitCode, int signal) {
    }

    private GuestExec() {
    }

    /**
     * Runs {@code spec}; {@code stdin} (null for none) is read to its end and sent, then closed.
     *
     * @throws AgentConnection.AgentException when the agent cannot start it, the connection ends, or it runs past
     *                                        {@code timeout} (it is then abandoned, which hangs it up)
     */
    public static Exit run(AgentConnection agent, Message.ExecSpec spec, InputStream stdin, Consumer<byte[]> stdout,
                           Consumer<byte[]> stderr, Duration timeout) {
        CompletableFuture<Exit> done = new CompletableFuture<>();
        Object window = new Object();
        long[] credit = {Limits.INITIAL_WINDOW};
        int channel = agent.open(m -> {
            switch (m) {
                case Message.Data d -> {
                    (d.stream() == Message.Stream.STDERR ? stderr : stdout).accept(d.bytes());
                    agent.send(new Message.Credit(d.channel(), d.stream(), d.bytes().length));
                }
                case Message.Credit c -> {
                    synchronized (window) {
                        credit[0] += c.bytes();
                        window.notifyAll();
                    }
                }
                case Message.Exited x -> done.complete(new Exit(x.exitCode(), x.signal()));
                case Message.Failed f -> done.completeExceptionally(new AgentConnection.AgentException(
                        String.join(" ", spec.argv()) + ": " + f.message()));
                default -> { }
            }
        });
        long deadline = System.nanoTime() + timeout.toNanos();
        agent.send(new Message.Exec(channel, spec));
        try {
            if (stdin != null) {
                byte[] buf = new byte[Limits.MAX_DATA];
                int n;
                while ((n = stdin.read(buf)) > 0) {
                    synchronized (window) {
                        while (credit[0] < n && !done.isDone()) {
                            long left = TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime());
                            if (left <= 0) {
                                throw new java.util.concurrent.TimeoutException();
                            }
                            window.wait(Math.min(left, 1000));
                        }
                        credit[0] -= n;
                    }
                    if (done.isDone()) {
                        break; // it ended without reading all of it: its exit says how
                    }
                    agent.send(new Message.Data(channel, Message.Stream.STDIN, java.util.Arrays.copyOf(buf, n)));
                }
            }
            if (!done.isDone()) {
                agent.send(new Message.Eof(channel, Message.Stream.STDIN));
            }
            long left = Math.max(1, TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime()));
            return done.get(left, TimeUnit.MILLISECONDS);
        } catch (java.util.concurrent.TimeoutException e) {
            agent.abandon(channel);
            throw new AgentConnection.AgentException(String.join(" ", spec.argv()) + " did not finish within "
                    + timeout.toSeconds() + " s");
        } catch (java.util.concurrent.ExecutionException e) {
            throw (RuntimeException) e.getCause();
        } catch (InterruptedException e) {
            agent.abandon(channel);
            Thread.currentThread().interrupt();
            throw new AgentConnection.AgentException("interrupted");
        } catch (IOException e) {
            agent.abandon(channel);
            throw new AgentConnection.AgentException("cannot read the input of " + String.join(" ", spec.argv())
                    + ": " + e.getMessage());
        }
    }
}
