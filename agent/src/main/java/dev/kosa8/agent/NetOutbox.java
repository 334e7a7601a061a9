package dev.kosa8.agent;

import dev.kosa8.protocol.Codec;
import dev.kosa8.protocol.Message;
import java.io.BufferedOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.atomic.AtomicLong;

/**
 * What the agent sends the host on the network link, written by one thread
 * of its own: the port's writes block while the host does not read (or, after
 * a daemon restart, is not there at all), and nothing else in the relay may
 * wait on that. Frames queued together are written together and flushed once.
 *
 * <p>The relay's thread queues what it sends in one turn of its loop with {@link #later} and hands it over
 * with {@link #flush} at the turn's end: one wake-up of the writer and one write to the port for all of it (each
 * write to the port is an exit to the machine monitor), where a message each was a wake-up and a write each.
 *
 * <p>The bytes of queued Data are counted: above {@link #BUDGET} the relay
 * stops reading guest sockets until the queue drains below half of it
 * ({@code drained}), so guests sending faster than the host takes it cost a
 * bounded amount of the agent's memory, whatever the streams' windows add up to.
 */
final class NetOutbox {
    /** Queued Data bytes above which the relay stops reading the guest's connections. */
    static final long BUDGET = 4L << 20;

    /** Each element a turn's batch of messages. */
    private final LinkedBlockingQueue<java.util.List<Message>> queue = new LinkedBlockingQueue<>();
    /** The relay's turn's messages, not yet handed to the writer: used by the relay's thread alone. */
    private java.util.List<Message> turn = new java.util.ArrayList<>();
    private final AtomicLong queuedBytes = new AtomicLong();
    private final OutputStream out;
    private final Runnable drained;
    private volatile boolean overBudget;

    /** @param drained called (on the outbox's thread) when the queue falls below half the budget after exceeding it */
    NetOutbox(OutputStream port, Runnable drained) {
        this.out = new BufferedOutputStream(port, 1 << 18);
        this.drained = drained;
        Thread t = new Thread(this::writeLoop, "net-out");
        t.setDaemon(true);
        t.start();
    }

    /** Queues {@code m} with the relay's turn, sent at its {@link #flush}; counted in the budget at once. */
    void later(Message m) {
        count(m);
        turn.add(m);
    }

    /** Hands the turn's messages to the writer, all in one. */
    void flush() {
        if (!turn.isEmpty()) {
            queue.add(turn);
            turn = new java.util.ArrayList<>();
        }
    }

    private void count(Message m) {
        if (m instanceof Message.Data d && queuedBytes.addAndGet(d.bytes().length) > BUDGET) {
            overBudget = true;
        }
    }

    /** Whether the queued Data exceed the budget: the relay reads no guest socket until {@code drained}. */
    boolean overBudget() {
        return overBudget;
    }

    private void writeLoop() {
        try {
            while (true) {
                java.util.List<Message> batch = queue.take();
                do {
                    for (Message m : batch) {
                        write(m);
                    }
                } while ((batch = queue.poll()) != null);
                out.flush();
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (IOException e) {
            Log.info("network link: cannot write to the port (" + e.getMessage() + "); the sandbox's network is gone");
        }
    }

    private void write(Message m) throws IOException {
        out.write(Codec.encode(m));
        if (m instanceof Message.Data d) {
            long left = queuedBytes.addAndGet(-d.bytes().length);
            if (overBudget && left < BUDGET / 2) {
                overBudget = false;
                drained.run();
            }
        }
    }
}
