package dev.kosa8.files;

import dev.kosa8.protocol.Message;
import dev.kosa8.protocol.WatchEvent;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;

/**
 * A watch on a guest directory ({@link GuestFiles#watch}): the agent's inotify events, kept here until taken by
 * {@link #poll}, at most {@code capacity} of them; events beyond are dropped and counted, and the next poll returns
 * an {@code OVERFLOW} event where they were lost. So a watch no one reads costs at most its capacity.
 */
public final class FileWatch implements AutoCloseable {
    private final String id;
    private final String path;
    private final boolean recursive;
    private final Instant started = Instant.now();
    private final int capacity;
    private final ArrayDeque<WatchEvent> queue = new ArrayDeque<>();
    private long lostNow;
    private long lostTotal;
    private boolean ended;
    private String reason = "";
    private Runnable closer = () -> { };

    FileWatch(String id, String path, boolean recursive, int capacity) {
        this.id = id;
        this.path = path;
        this.recursive = recursive;
        this.capacity = capacity;
    }

    public String id() {
        return id;
    }

    /** The directory watched. */
    public String path() {
        return path;
    }

    public boolean recursive() {
        return recursive;
    }

    public Instant started() {
        return started;
    }

    /** Events dropped so far because no one took them (each run of them reported once as {@code OVERFLOW}). */
    public synchronized long lost() {
        return lostTotal;
    }

    public synchronized boolean ended() {
        return ended;
    }

    /** Events waiting to be taken. */
    public synchronized int pending() {
        return queue.size();
    }

    /**
     * Takes up to {@code max} events, waiting up to {@code wait} for the first when there are none (long poll).
     * Returns at once, with what is left, once the watch has ended.
     */
    public synchronized WatchBatch poll(int max, Duration wait) throws InterruptedException {
        long deadline = System.nanoTime() + wait.toNanos();
        while (queue.isEmpty() && lostNow == 0 && !ended) {
            long left = deadline - System.nanoTime();
            if (left <= 0) {
                break;
            }
            java.util.concurrent.TimeUnit.NANOSECONDS.timedWait(this, left);
        }
        List<WatchEvent> out = new ArrayList<>();
        while (out.size() < Math.max(1, max) && !queue.isEmpty()) {
            out.add(queue.poll());
        }
        if (queue.isEmpty() && lostNow > 0 && out.size() < Math.max(1, max)) {
            out.add(new WatchEvent(WatchEvent.Kind.OVERFLOW, path));
            lostNow = 0;
        }
        return new WatchBatch(out, ended && queue.isEmpty() && lostNow == 0, reason);
    }

    /** Ends the watch: the guest is told to stop it; what was seen and not taken is still there to poll. */
    @Override
    public void close() {
        Runnable c;
        synchronized (this) {
            c = closer;
            closer = () -> { };
        }
        c.run();
        end("closed");
    }

    synchronized void onClose(Runnable r) {
        closer = r;
    }

    /** From the agent's connection: must not block. */
    synchronized void accept(Message m) {
        switch (m) {
            case Message.WatchEvents e -> {
                for (WatchEvent v : e.events()) {
                    if (queue.size() < capacity && lostNow == 0) {
                        queue.add(v);
                    } else {
                        lostNow++;
                        lostTotal++;
                    }
                }
            }
            case Message.Exited x -> end(reason.isEmpty() ? "ended in the guest" : reason);
            case Message.Failed f -> end(f.message());
            default -> { }
        }
        notifyAll();
    }

    synchronized void end(String why) {
        if (!ended) {
            ended = true;
            reason = why;
        }
        notifyAll();
    }
}
