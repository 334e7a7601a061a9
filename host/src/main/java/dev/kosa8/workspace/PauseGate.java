package dev.kosa8.workspace;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The gate every request of a {@link WorkspaceServer} passes before it is served: it counts the
 * requests in flight, holds new ones back between {@link #pause} and {@link #resume} (the instant of
 * a checkpoint, see docs/workspace.md), and once the server is closed lets everything through, so
 * nothing waits on a server that will serve no more.
 *
 * <p>Two monitors: the pause lock (whether paused; a request is admitted under it) and the
 * in-flight count's (idle is waited for on it). Only a pause that times out holds both, taking the
 * pause lock to resume inside the count's; nothing takes them the other way round.
 */
final class PauseGate {
    /** Null when QEMU gives the guest no read window. */
    private final ReadWindow window;
    private final AtomicInteger inFlight = new AtomicInteger();
    private final Object pauseLock = new Object();
    private boolean paused;
    private volatile boolean closed;

    PauseGate(ReadWindow window) {
        this.window = window;
    }

    /** Whether the server is closed: nothing waits at the gate any more. */
    boolean closed() {
        return closed;
    }

    /** Marks the server closed; the caller then {@link #resume}s, to let waiting requests through. */
    void markClosed() {
        closed = true;
    }

    /** Whether no request is being served right now. */
    boolean idle() {
        return inFlight.get() == 0;
    }

    /** As {@link WorkspaceServer#pause}. */
    boolean pause(Duration timeout) throws InterruptedException {
        synchronized (pauseLock) {
            paused = true;
        }
        long deadline = System.nanoTime() + timeout.toNanos();
        synchronized (inFlight) {
            while (inFlight.get() != 0) {
                long left = deadline - System.nanoTime();
                if (left <= 0) {
                    resume(); // not idle in time: serve on rather than leave the guest waiting
                    return false;
                }
                inFlight.wait(Math.max(1, left / 1_000_000));
            }
        }
        return true;
    }

    /** As {@link WorkspaceServer#pauseSettled}. */
    boolean pauseSettled(Duration timeout) throws InterruptedException {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (true) {
            if (window != null && !window.awaitReturned(deadline)) {
                return false;
            }
            if (!pause(Duration.ofNanos(Math.max(0, deadline - System.nanoTime())))) {
                return false;
            }
            if (window == null || window.lentOut() == 0) {
                return true;
            }
            resume(); // a read answered through the window just before the pause: its return comes behind it
        }
    }

    void resume() {
        synchronized (pauseLock) {
            paused = false;
            pauseLock.notifyAll();
        }
    }

    /**
     * Waits while paused, then counts the request in flight, both under the pause lock: a
     * {@link #pause} that returns idle has seen every request admitted before it, and no other
     * starts until {@link #resume}.
     */
    void admit() throws InterruptedException {
        synchronized (pauseLock) {
            while (paused && !closed) {
                pauseLock.wait();
            }
            inFlight.incrementAndGet();
        }
    }

    /** A request has answered (or needs none): one fewer in flight. */
    void done() {
        if (inFlight.decrementAndGet() == 0) {
            synchronized (inFlight) {
                inFlight.notifyAll();
            }
        }
    }

    /** Waits until no request is being served. */
    void awaitIdle() throws InterruptedException {
        synchronized (inFlight) {
            while (inFlight.get() != 0 && !closed) {
                inFlight.wait(100);
            }
        }
    }
}
