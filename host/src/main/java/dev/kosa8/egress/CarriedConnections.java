package dev.kosa8.egress;

import io.netty.channel.Channel;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The guest connections a broker carries to a host, each remembered until it closes, so that a change of policy or
 * of secrets reaches the connections already open: one no longer allowed, or passed through unread to a host that
 * now has a key, is closed at once.
 */
final class CarriedConnections {
    private final Set<Carried> carried = ConcurrentHashMap.newKeySet();

    private record Carried(String host, int port, Channel guest, boolean passedThrough) {
    }

    /** @param passedThrough TLS relayed unread, which a newly bound key cannot reach */
    void add(String host, int port, Channel guest, boolean passedThrough) {
        Carried c = new Carried(host, port, guest, passedThrough);
        if (carried.add(c)) { // once per guest connection and host: keep-alive connections carry many requests
            guest.closeFuture().addListener(f -> carried.remove(c));
        }
    }

    /** Closes each connection {@code policy} does not allow. */
    void closeDisallowed(EgressPolicy policy) {
        for (Carried c : carried) {
            if (!policy.connect(c.host(), c.port()).allowed()) {
                c.guest().close();
            }
        }
    }

    /** Closes each connection passed through unread to a host {@code secrets} binds a key to. */
    void closePassedThroughToKeyedHosts(SecretBindings secrets) {
        for (Carried c : carried) {
            if (c.passedThrough() && !secrets.boundTo(c.host(), c.port()).isEmpty()) {
                c.guest().close();
            }
        }
    }
}
