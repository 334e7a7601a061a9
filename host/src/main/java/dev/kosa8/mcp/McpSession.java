package dev.kosa8.mcp;

import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Phaser;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Consumer;

/**
 * One MCP session: the sandboxes it made (created or forked), whether the client asked to keep each, and its tool
 * calls under way. A stdio server has one, ended when the client closes stdin or the server is stopped; an HTTP
 * server one per {@code Mcp-Session-Id}, ended when the client deletes it or the server stops. At its end the
 * calls under way are waited for (a create under way is then removed too), then the sandboxes not kept are removed.
 */
public final class McpSession {
    /** How long the end of a session waits for the calls under way (a create under TCG takes a minute). */
    static final Duration CALLS_AT_END = Duration.ofMinutes(3);

    private final Map<String, Boolean> made = new LinkedHashMap<>();
    /** Tool calls under way: the session's end waits for them, so a sandbox being created is removed too. */
    private final Phaser calls = new Phaser(1);
    private final AtomicBoolean ended = new AtomicBoolean();
    private final CountDownLatch endDone = new CountDownLatch(1);

    /** A tool call begins; false when the session is ending, and the call must not run. */
    boolean enter() {
        return calls.register() >= 0;
    }

    /** A tool call {@link #enter}ed ended. */
    void leave() {
        calls.arriveAndDeregister();
    }

    /** Whether a tool call runs now. */
    boolean busy() {
        return calls.getRegisteredParties() > 1;
    }

    synchronized void made(String id, boolean keep) {
        made.put(id, keep);
    }

    /** The full id of a sandbox made here that {@code idOrPrefix} names, or null when none or several. */
    synchronized String madeHere(String idOrPrefix) {
        List<String> hits = made.keySet().stream().filter(id -> id.startsWith(idOrPrefix)).toList();
        return hits.size() == 1 ? hits.getFirst() : null;
    }

    synchronized void forget(String id) {
        made.remove(id);
    }

    /** The sandboxes to remove at the end: those made here and not kept, oldest first. */
    public synchronized List<String> toRemove() {
        List<String> out = new ArrayList<>();
        made.forEach((id, keep) -> {
            if (!keep) {
                out.add(id);
            }
        });
        return out;
    }

    /**
     * Ends the session, once: waits for the calls under way (at most {@link #CALLS_AT_END}), then removes each
     * sandbox not kept. A second caller (stdin's end racing a stop signal) waits for the first to finish.
     */
    public void end(McpBackend backend, Consumer<String> log) {
        if (!ended.compareAndSet(false, true)) {
            try {
                endDone.await(CALLS_AT_END.toSeconds() + 60, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            return;
        }
        try {
            int phase = calls.arriveAndDeregister();
            try {
                calls.awaitAdvanceInterruptibly(phase, CALLS_AT_END.toSeconds(), TimeUnit.SECONDS);
            } catch (InterruptedException | TimeoutException e) {
                log.accept("tool calls still under way at the end of the session; removing its sandboxes anyway");
            }
            removeMade(backend, log);
        } finally {
            endDone.countDown();
        }
    }

    /**
     * Removes each sandbox not kept, all at once (a client may kill the server a few seconds after closing its
     * stdin: each removal asked for is then carried out by the daemon regardless), reporting each failure to
     * {@code log}.
     */
    void removeMade(McpBackend backend, Consumer<String> log) {
        List<Thread> removals = new ArrayList<>();
        for (String id : toRemove()) {
            removals.add(Thread.ofVirtual().start(() -> {
                try {
                    backend.remove(id);
                    forget(id);
                    log.accept("removed sandbox " + id + " (made by this MCP session)");
                } catch (RuntimeException e) {
                    log.accept("could not remove sandbox " + id + ": " + e.getMessage() + " (`kosa8 rm -f " + id
                            + "` removes it)");
                }
            }));
        }
        for (Thread t : removals) {
            try {
                t.join();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            }
        }
    }
}
