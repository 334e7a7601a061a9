package dev.kosa8.egress;

import io.netty.channel.Channel;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.Iterator;

/**
 * The idle upstream connections one guest connection's requests reuse while
 * both stay open and the requests go to the same host and port: a new TLS
 * handshake per request costs tens of milliseconds (measured,
 * bench/history/egress.md, run 2). An HTTP/1.1 guest connection has one
 * request at a time and keeps one; an HTTP/2 one keeps up to one per stream it
 * may have open. A connection is taken out while it carries a request and put
 * back when the response is complete. An HTTP/2 guest connection's requests
 * also share HTTP/2 upstream connections ({@link UpstreamHttp2}), one per host
 * while its server takes more streams: while the first is being dialed, the
 * requests for that host wait for it instead of dialing their own; once a
 * server has answered {@code http/1.1}, its host's requests dial at once.
 * Used only on the guest connection's event loop, which its upstreams and
 * streams share.
 */
final class UpstreamSlot {
    /** An idle connection to {@code key} ("host:port"), and where it goes, as the audit log says it. */
    record Idle(String key, Channel channel, Upstreams.Target target) {
    }

    private final Channel owner;
    private final int capacity;
    private final Deque<Idle> idle = new ArrayDeque<>();
    private final java.util.List<UpstreamHttp2.Session> shared = new java.util.ArrayList<>();
    /** Hosts whose HTTP/2-offering dial is under way, with the requests waiting for it. */
    private final java.util.Map<String, java.util.List<Runnable>> dialing = new java.util.HashMap<>();
    /** Hosts whose server chose HTTP/1.1 on this guest connection. */
    private final java.util.Set<String> http1 = new java.util.HashSet<>();

    /** @param owner the guest connection: upstream connections close with it */
    UpstreamSlot(Channel owner, int capacity) {
        this.owner = owner;
        this.capacity = capacity;
    }

    /** The guest connection these upstreams serve. */
    Channel owner() {
        return owner;
    }

    /** An idle, open connection to {@code key}, taken out; null when there is none. */
    Idle take(String key) {
        for (Iterator<Idle> it = idle.iterator(); it.hasNext(); ) {
            Idle i = it.next();
            if (!i.channel().isActive()) {
                it.remove();
            } else if (i.key().equals(key)) {
                it.remove();
                return i;
            }
        }
        return null;
    }

    /**
     * Puts a connection whose response is complete back for later requests to {@code key}; the oldest idle one
     * closes when there would be more than the capacity, and connections to another host close at once on a
     * guest connection that keeps one.
     */
    void keep(String key, Channel ch, Upstreams.Target target) {
        if (!ch.isActive() || !owner.isActive()) {
            ch.close();
            return;
        }
        if (capacity == 1) {
            idle.forEach(i -> i.channel().close());
            idle.clear();
        }
        idle.addFirst(new Idle(key, ch, target));
        while (idle.size() > capacity) {
            idle.removeLast().channel().close();
        }
    }

    void drop(Channel ch) {
        idle.removeIf(i -> i.channel() == ch);
    }

    /** An HTTP/2 connection to {@code key} that takes another stream; null when there is none. */
    UpstreamHttp2.Session session(String key) {
        shared.removeIf(s -> !s.channel().isActive());
        for (UpstreamHttp2.Session s : shared) {
            if (s.key().equals(key) && s.canOpen()) {
                return s;
            }
        }
        return null;
    }

    /** Shares {@code s} with later requests to its host, until it closes. */
    void share(UpstreamHttp2.Session s) {
        shared.add(s);
        s.channel().closeFuture().addListener(f -> shared.remove(s));
    }

    /** The HTTP/2 connections open now (tests). */
    int sessions() {
        return shared.size();
    }

    /** Whether a dial offering HTTP/2 to {@code key} is under way. */
    boolean dialing(String key) {
        return dialing.containsKey(key);
    }

    /** A dial offering HTTP/2 to {@code key} begins: requests for it wait ({@link #await}) until it ends. */
    void dialStarted(String key) {
        dialing.put(key, new java.util.ArrayList<>());
    }

    /** Runs {@code retry} once the dial to {@code key} under way has ended, whichever way. */
    void await(String key, Runnable retry) {
        dialing.get(key).add(retry);
    }

    /** The dial to {@code key} ended: the requests waiting for it try again, in the order they came. */
    void dialEnded(String key) {
        java.util.List<Runnable> waiting = dialing.remove(key);
        if (waiting != null) {
            waiting.forEach(Runnable::run);
        }
    }

    /** The server of {@code key} chose HTTP/1.1: its requests no longer wait for one another's dials. */
    void http1(String key) {
        http1.add(key);
    }

    boolean isHttp1(String key) {
        return http1.contains(key);
    }
}
