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
 * back when the response is complete. Used only on the guest connection's
 * event loop, which its upstreams and streams share.
 */
final class UpstreamSlot {
    /** An idle connection to {@code key} ("host:port"), and where it goes, as the audit log says it. */
    record Idle(String key, Channel channel, Upstreams.Target target) {
    }

    private final Channel owner;
    private final int capacity;
    private final Deque<Idle> idle = new ArrayDeque<>();

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
}
