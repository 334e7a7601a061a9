package dev.kosa8.egress;

import io.netty.channel.Channel;
import io.netty.channel.ChannelException;
import io.netty.channel.ChannelOption;
import io.netty.channel.group.ChannelGroup;
import io.netty.channel.group.DefaultChannelGroup;
import io.netty.util.concurrent.GlobalEventExecutor;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * A broker's open guest connections, each listener's within its cap ({@link #cap}: DNS's counted apart from the
 * others'), a connection beyond it refused and the audit log told the first time; all closed with the broker.
 */
final class GuestConnections {
    private final AuditLog audit;
    /** Every open guest connection. */
    private final ChannelGroup all = new DefaultChannelGroup(GlobalEventExecutor.INSTANCE);
    /** The open guest connections to the DNS listener, also in {@link #all}: they have a cap of their own. */
    private final ChannelGroup dns = new DefaultChannelGroup(GlobalEventExecutor.INSTANCE);
    private final AtomicBoolean capWarned = new AtomicBoolean();
    private final AtomicBoolean dnsCapWarned = new AtomicBoolean();

    GuestConnections(AuditLog audit) {
        this.audit = audit;
    }

    /** The open connections a listener may have: DNS's are counted apart from the others'. */
    static int cap(Listener l) {
        return l == Listener.DNS ? Broker.DNS_CONNECTIONS : Broker.MAX_CONNECTIONS;
    }

    /** Counts {@code ch} as a connection to {@code l}; false, and it is closed, when {@code l} has its cap open. */
    boolean admit(Listener l, Channel ch) {
        int open = l == Listener.DNS ? dns.size() : all.size() - dns.size();
        if (open >= cap(l)) {
            refuseOverCap(l);
            ch.close();
            return false;
        }
        all.add(ch);
        if (l == Listener.DNS) {
            dns.add(ch);
        }
        return true;
    }

    /** A connection beyond its {@link #cap} is refused: the audit log says so the first time. */
    void refuseOverCap(Listener l) {
        boolean isDns = l == Listener.DNS;
        if ((isDns ? dnsCapWarned : capWarned).compareAndSet(false, true)) {
            audit.write(new AuditEvent(Instant.now(), l.label(), null, null, null, null, null,
                    "deny", "more than " + cap(l) + " open " + (isDns ? "DNS " : "") + "connections: closing new ones",
                    null, null, null));
        }
    }

    /** The number of open guest connections. */
    int open() {
        return all.size();
    }

    /** The send buffer of each open guest connection, as the kernel reports it (one closing meanwhile is left out). */
    List<Integer> sendBuffers() {
        List<Integer> sizes = new ArrayList<>();
        for (Channel c : all) {
            try {
                sizes.add(c.config().getOption(ChannelOption.SO_SNDBUF));
            } catch (ChannelException closed) {
                // its socket closed between the listing and the question
            }
        }
        return sizes;
    }

    /** Closes every open guest connection, waiting up to {@code millis} for them to close. */
    void closeAll(long millis) {
        all.close().awaitUninterruptibly(millis);
    }
}
