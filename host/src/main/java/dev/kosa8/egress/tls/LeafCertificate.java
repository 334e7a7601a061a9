package dev.kosa8.egress.tls;

import io.netty.handler.ssl.SslContext;
import io.netty.handler.ssl.SslContextBuilder;
import java.security.PrivateKey;
import java.security.cert.X509Certificate;
import java.util.Objects;
import javax.net.ssl.SSLException;

/**
 * A certificate for one host name, issued by a {@link SandboxCa}, with the key the
 * broker presents it with and the CA that issued it.
 *
 * <p>{@code key} is the leaf key that every leaf of the same CA shares, held in
 * memory only; it is not the CA key, which no public type hands out.
 */
public record LeafCertificate(PrivateKey key, X509Certificate leaf, X509Certificate ca) {
    public LeafCertificate {
        Objects.requireNonNull(key, "key");
        Objects.requireNonNull(leaf, "leaf");
        Objects.requireNonNull(ca, "ca");
    }

    /**
     * Builds a new Netty server context presenting this leaf (and its CA) over
     * TLS 1.3 or 1.2 with ALPN {@code http/1.1}, on {@link TlsSettings#PROVIDER}. Each call
     * builds a new one; {@link SandboxCa#serverContextFor(String)} keeps one per
     * name.
     */
    public SslContext serverContext() {
        return serverContext(TlsSettings.ALPN_HTTP_1_1);
    }

    /**
     * As {@link #serverContext()}, offering ALPN {@code h2} first and {@code http/1.1}: for a guest that offers
     * HTTP/2, which the broker then reads frame by frame ({@code egress.GuestHttp2}).
     */
    public SslContext http2ServerContext() {
        return serverContext(TlsSettings.ALPN_H2_HTTP_1_1);
    }

    private SslContext serverContext(io.netty.handler.ssl.ApplicationProtocolConfig alpn) {
        try {
            return SslContextBuilder.forServer(new LeafKeyManager(key, leaf, ca))
                    .sslProvider(TlsSettings.PROVIDER)
                    .protocols(TlsSettings.PROTOCOLS)
                    .applicationProtocolConfig(alpn)
                    .build();
        } catch (SSLException e) {
            throw new IllegalStateException("cannot build a TLS server context for "
                    + leaf.getSubjectX500Principal(), e);
        }
    }

    /** Names the certificate, never the key. */
    @Override
    public String toString() {
        return "LeafCertificate[" + leaf.getSubjectX500Principal().getName() + ", until "
                + leaf.getNotAfter().toInstant() + "]";
    }
}
