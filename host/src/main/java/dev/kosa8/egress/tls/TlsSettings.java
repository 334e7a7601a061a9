package dev.kosa8.egress.tls;

import io.netty.handler.ssl.ApplicationProtocolConfig;
import io.netty.handler.ssl.ApplicationProtocolConfig.Protocol;
import io.netty.handler.ssl.ApplicationProtocolConfig.SelectedListenerFailureBehavior;
import io.netty.handler.ssl.ApplicationProtocolConfig.SelectorFailureBehavior;
import io.netty.handler.ssl.ApplicationProtocolNames;
import java.util.List;

/** What both sides of the broker offer in TLS: the same versions and one application protocol. */
final class TlsSettings {
    /** TLS 1.3, and 1.2 for the servers and clients that have nothing newer. */
    static final List<String> PROTOCOLS = List.of("TLSv1.3", "TLSv1.2");

    /**
     * ALPN offering {@code http/1.1} only: the broker parses HTTP/1.1 on both legs,
     * so a peer must not be talked into HTTP/2. A peer that offers nothing we
     * speak gets no ALPN answer (NO_ADVERTISE) and falls back to HTTP/1.1.
     */
    static final ApplicationProtocolConfig ALPN_HTTP_1_1 = new ApplicationProtocolConfig(Protocol.ALPN,
            SelectorFailureBehavior.NO_ADVERTISE, SelectedListenerFailureBehavior.ACCEPT,
            ApplicationProtocolNames.HTTP_1_1);

    private TlsSettings() {
    }
}
