package dev.kosa8.mcp;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;

/**
 * The sandboxes one MCP session made (created or forked), and whether the client asked to keep each. When the
 * session ends (the client closes stdin, or the server is stopped) those not kept are removed.
 */
public final class McpSession {
    private final Map<String, Boolean> made = new LinkedHashMap<>();

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
     * Removes each sandbox not kept, all at once (a client may kill the server a few seconds after closing its
     * stdin: each removal asked for is then carried out by the daemon regardless), reporting each failure to
     * {@code log}.
     */
    public void end(McpBackend backend, Consumer<String> log) {
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
