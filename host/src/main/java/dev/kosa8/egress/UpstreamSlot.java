package dev.kosa8.egress;

import io.netty.channel.Channel;

/**
 * The upstream connection a guest connection's requests reuse while both stay
 * open and the requests go to the same host and port: a new TLS handshake per
 * request costs tens of milliseconds (measured, bench/history/egress.md, run 2). Used only on
 * the guest connection's event loop, which its upstreams share.
 */
final class UpstreamSlot {
    private Channel channel;
    private String key;
    private Upstreams.Target target;

    /** The kept connection to {@code key} if it is still open, else null. */
    Channel take(String key) {
        return channel != null && channel.isActive() && key.equals(this.key) ? channel : null;
    }

    /** Where the kept connection goes, as the audit log says it. */
    Upstreams.Target target() {
        return target;
    }

    /** Keeps {@code ch} for later requests to {@code key}, closing a kept connection to another host. */
    void keep(String key, Channel ch, Upstreams.Target target) {
        if (channel != null && channel != ch) {
            channel.close();
        }
        this.channel = ch;
        this.key = key;
        this.target = target;
    }

    void drop(Channel ch) {
        if (channel == ch) {
            channel = null;
        }
    }
}
