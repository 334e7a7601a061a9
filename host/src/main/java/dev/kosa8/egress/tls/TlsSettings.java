package dev.kosa8.egress.tls;

import io.netty.handler.ssl.ApplicationProtocolConfig;
import io.netty.handler.ssl.ApplicationProtocolConfig.Protocol;
import io.netty.handler.ssl.ApplicationProtocolConfig.SelectedListenerFailureBehavior;
import io.netty.handler.ssl.ApplicationProtocolConfig.SelectorFailureBehavior;
import io.netty.handler.ssl.ApplicationProtocolNames;
import io.netty.handler.ssl.OpenSsl;
import io.netty.handler.ssl.SslProvider;
import java.util.List;

/** What both sides of the broker offer in TLS: the same versions and one application protocol. */
final class TlsSettings {
    /** TLS 1.3, and 1.2 for the servers and clients that have nothing newer. */
    static final List<String> PROTOCOLS = List.of("TLSv1.3", "TLSv1.2");

    /**
     * ALPN offering {@code http/1.1} only: the upstream leg of an HTTP/1.1 guest connection (and of a WebSocket
     * handshake), and the guest leg for a client that offers nothing else. A peer that offers nothing we
     * speak gets no ALPN answer (NO_ADVERTISE) and falls back to HTTP/1.1.
     */
    static final ApplicationProtocolConfig ALPN_HTTP_1_1 = new ApplicationProtocolConfig(Protocol.ALPN,
            SelectorFailureBehavior.NO_ADVERTISE, SelectedListenerFailureBehavior.ACCEPT,
            ApplicationProtocolNames.HTTP_1_1);

    /**
     * ALPN offering {@code h2}, then {@code http/1.1}: the guest-facing side of an
     * intercepted connection whose client offers HTTP/2, and the upstream side of
     * such a connection, which speaks whichever the server picks.
     */
    static final ApplicationProtocolConfig ALPN_H2_HTTP_1_1 = new ApplicationProtocolConfig(Protocol.ALPN,
            SelectorFailureBehavior.NO_ADVERTISE, SelectedListenerFailureBehavior.ACCEPT,
            ApplicationProtocolNames.HTTP_2, ApplicationProtocolNames.HTTP_1_1);

    /**
     * Whose TLS the broker runs: BoringSSL (netty-tcnative, bundled for Linux
     * x86-64 and macOS arm64) wherever its library loads, else the JDK's.
     *
     * <p>Why: an intercepted connection is terminated twice (guest leg and
     * upstream leg), and with the JDK's engine those two record layers bound
     * throughput at 0.39x of a direct download (bench/history/egress.md,
     * run 3). BoringSSL uses the CPU's AES-GCM instructions without the JDK's
     * per-record copies. The checks are the same on both: the JDK's trust
     * manager decides trust either way (see {@link UpstreamTls}).
     */
    static final SslProvider PROVIDER = OpenSsl.isAvailable() ? SslProvider.OPENSSL : SslProvider.JDK;

    private TlsSettings() {
    }
}
