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
 * <p>The bytes of queued Data are counted: above {@link #BUDGET} the relay
 * stops reading guest sockets until the queue drains below half of it
 * ({@code drained}), so guests sending faster than the host takes it cost a
 * bounded amount of the agent's memory, whatever the streams' windows add up to.
 */
final class NetOutbox {
    /** Queued Data bytes above which the relay stops reading the guest's connections. */
    static final long BUDGET = 4L << 20;

    private final LinkedBlockingQueue<Message> queue = new LinkedBlockingQueue<>();
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

    void send(Message m) {
        if (m instanceof Message.Data d && queuedBytes.addAndGet(d.bytes().length) > BUDGET) {
            overBudget = true;
        }
        queue.add(m);
    }

    /** Whether the queued Data exceed the budget: the relay reads no guest socket until {@code drained}. */
    boolean overBudget() {
        return overBudget;
    }

    private void writeLoop() {
        try {
            while (true) {
                Message m = queue.take();
                do {
                    out.write(Codec.encode(m));
                    if (m instanceof Message.Data d) {
                        long left = queuedBytes.addAndGet(-d.bytes().length);
                        if (overBudget && left < BUDGET / 2) {
                            overBudget = false;
                            drained.run();
                        }
                    }
                } while ((m = queue.poll()) != null);
                out.flush();
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (IOException e) {
            Log.info("network link: cannot write to the port (" + e.getMessage() + "); the sandbox's network is gone");
        }
    }
}
