package dev.kosa8.mcp;

import io.modelcontextprotocol.spec.McpStreamableServerSession;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Consumer;

/**
 * The MCP sessions of {@code kosa8 mcp --http}, by their {@code Mcp-Session-Id}: each an {@link McpSession} made
 * when the SDK starts the session (its factory is wrapped here), ended when the client deletes it, when the SDK
 * has forgotten it, when it has been idle for {@link #IDLE} (no request and no tool call under way: a client that
 * went away without deleting it), or when the server stops. At most {@code max} at once, counting initializations
 * under way: an initialize is let in only with a slot {@link #reserve}d, so two at once cannot pass the bound
 * together, and the SDK's factory refuses a session past it whatever the request said.
 */
final class HttpSessions {
    /** How long a session may go without a request before it is ended (its sandboxes not kept removed). */
    static final java.time.Duration IDLE = java.time.Duration.ofHours(8);

    private final Map<String, McpSession> live = new ConcurrentHashMap<>();
    /** When each live session last began or finished a request (System.nanoTime), and how many run now. */
    private final Map<String, long[]> activity = new ConcurrentHashMap<>();
    private final int max;
    private final McpBackend backend;
    private final Consumer<String> log;
    private final List<Thread> ending = new ArrayList<>();
    private int pending;

    HttpSessions(int max, McpBackend backend, Consumer<String> log) {
        this.max = max;
        this.backend = backend;
        this.log = log;
    }

    /** The SDK's session factory, each session it starts also recorded here. */
    McpStreamableServerSession.Factory wrap(McpStreamableServerSession.Factory sdk) {
        return request -> {
            synchronized (this) {
                if (live.size() >= max) {
                    throw new IllegalStateException("too many MCP sessions: at most " + max + " at once");
                }
                McpStreamableServerSession.McpStreamableServerSessionInit init = sdk.startSession(request);
                activity.put(init.session().getId(), new long[] {System.nanoTime(), 0});
                live.put(init.session().getId(), new McpSession());
                return init;
            }
        };
    }

    /** The session of this id, or null when there is none (never started, or ended). */
    McpSession of(String id) {
        return id == null ? null : live.get(id);
    }

    int open() {
        return live.size();
    }

    /** A request of session {@code id} begins; false when no such session is open here (ended, or never was). */
    boolean enter(String id) {
        long[] a = activity.get(id);
        if (a == null || !live.containsKey(id)) {
            return false;
        }
        synchronized (a) {
            a[0] = System.nanoTime();
            a[1]++;
        }
        return true;
    }

    /** A request {@link #enter}ed is answered (a stream it opened may go on). */
    void leave(String id) {
        long[] a = activity.get(id);
        if (a != null) {
            synchronized (a) {
                a[0] = System.nanoTime();
                a[1]--;
            }
        }
    }

    /** Ends the sessions that have had no request and no tool call under way for {@code idle}, as of {@code now}. */
    int sweep(long now, java.time.Duration idle) {
        int ended = 0;
        for (var e : List.copyOf(activity.entrySet())) {
            McpSession s = live.get(e.getKey());
            boolean quiet;
            synchronized (e.getValue()) {
                quiet = e.getValue()[1] == 0 && now - e.getValue()[0] >= idle.toNanos();
            }
            if (s != null && quiet && !s.busy()) {
                end(e.getKey(), "idle for " + idle.toMinutes() + " minutes");
                ended++;
            }
        }
        return ended;
    }

    /** Holds a slot for an initialization under way; false when {@code max} sessions are open or starting. */
    synchronized boolean reserve() {
        if (live.size() + pending >= max) {
            return false;
        }
        pending++;
        return true;
    }

    /** The initialization a {@link #reserve} was for is done (its session, if any, is now in {@link #open}). */
    synchronized void release() {
        pending--;
    }

    /** Ends the session of this id in the background (its calls waited for, its sandboxes removed), once. */
    void end(String id, String why) {
        activity.remove(id);
        McpSession s = live.remove(id);
        if (s == null) {
            return;
        }
        log.accept("MCP session " + shortId(id) + " ended (" + why + ")");
        Thread t = Thread.ofVirtual().name("mcp-session-end").start(() -> s.end(backend, log));
        synchronized (ending) {
            ending.removeIf(x -> !x.isAlive());
            ending.add(t);
        }
    }

    /** Ends every session, all at once, and waits for them and for those ending already. */
    void endAll(String why) {
        for (String id : List.copyOf(live.keySet())) {
            end(id, why);
        }
        List<Thread> all;
        synchronized (ending) {
            all = List.copyOf(ending);
        }
        for (Thread t : all) {
            try {
                t.join();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            }
        }
    }

    /** A session id as the log and the refusals show it: its first 8 characters. */
    static String shortId(String id) {
        return id.length() > 8 ? id.substring(0, 8) : id;
    }
}
