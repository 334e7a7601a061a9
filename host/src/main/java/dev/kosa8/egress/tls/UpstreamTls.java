package dev.kosa8.egress.tls;

import dev.kosa8.host.KosaException;
import io.netty.buffer.ByteBufAllocator;
import io.netty.handler.ssl.SslContext;
import io.netty.handler.ssl.SslContextBuilder;
import io.netty.handler.ssl.SslHandler;
import io.netty.handler.ssl.SslProvider;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyStore;
import java.security.cert.Certificate;
import java.security.cert.CertificateFactory;
import java.util.Collection;
import java.util.List;
import java.util.Optional;
import javax.net.ssl.SNIHostName;
import javax.net.ssl.SSLEngine;
import javax.net.ssl.SSLException;
import javax.net.ssl.SSLParameters;
import javax.net.ssl.TrustManager;
import javax.net.ssl.TrustManagerFactory;
import javax.net.ssl.X509ExtendedTrustManager;

/**
 * How the broker verifies the servers it dials for the guest: the JDK's trust
 * store, PKIX path validation and HTTPS host name checking, as any careful
 * client would. A key is injected into a request only after this has succeeded
 * (see docs/design.md, "Security invariants"), so nothing here may be relaxed
 * to make a connection work.
 *
 * <p>The one addition is an extra CA file for tests, which trust a local server
 * whose certificate no public CA signed. It is off unless a host-side test
 * setting names a file, and it adds trust without removing any checks.
 */
public final class UpstreamTls {
    private static final String HTTPS = "HTTPS";

    private UpstreamTls() {
    }

    /**
     * A client context trusting the JDK's default trust store and, only when
     * given, the certificates in {@code extraTrustedCaPem}; TLS 1.3 or 1.2,
     * ALPN {@code http/1.1} (see {@link #http2ClientContext} for {@code h2}). Use it through {@link #handlerFor}.
     */
    public static SslContext clientContext(Optional<Path> extraTrustedCaPem) {
        return clientContext(extraTrustedCaPem, HostCas.NONE, TlsSettings.PROVIDER);
    }

    /**
     * As {@link #clientContext(Optional)}, also trusting the host's locally added CAs (a sandbox that trusts
     * them, {@code --trust-host-cas}: behind a TLS-inspecting proxy the broker must verify what the guest does).
     */
    public static SslContext clientContext(Optional<Path> extraTrustedCaPem, HostCas hostCas) {
        return clientContext(extraTrustedCaPem, hostCas, TlsSettings.PROVIDER);
    }

    /** As {@link #clientContext(Optional)} on the given TLS implementation; tests run both. */
    static SslContext clientContext(Optional<Path> extraTrustedCaPem, SslProvider provider) {
        return clientContext(extraTrustedCaPem, HostCas.NONE, provider);
    }

    static SslContext clientContext(Optional<Path> extraTrustedCaPem, HostCas hostCas, SslProvider provider) {
        return clientContext(extraTrustedCaPem, hostCas, provider, TlsSettings.ALPN_HTTP_1_1);
    }

    /**
     * As {@link #clientContext(Optional, HostCas)}, offering ALPN {@code h2, http/1.1}: the same trust, the same
     * checks. The broker dials with it for a guest that speaks HTTP/2 to it, and speaks whichever the server picks
     * (HTTP/1.1 when it picks nothing).
     */
    public static SslContext http2ClientContext(Optional<Path> extraTrustedCaPem, HostCas hostCas) {
        return clientContext(extraTrustedCaPem, hostCas, TlsSettings.PROVIDER, TlsSettings.ALPN_H2_HTTP_1_1);
    }

    static SslContext http2ClientContext(Optional<Path> extraTrustedCaPem, SslProvider provider) {
        return clientContext(extraTrustedCaPem, HostCas.NONE, provider, TlsSettings.ALPN_H2_HTTP_1_1);
    }

    private static SslContext clientContext(Optional<Path> extraTrustedCaPem, HostCas hostCas, SslProvider provider,
                                            io.netty.handler.ssl.ApplicationProtocolConfig alpn) {
        X509ExtendedTrustManager jdk = trustManager(null);
        List<Certificate> extra = new java.util.ArrayList<>();
        List<String> names = new java.util.ArrayList<>();
        extraTrustedCaPem.ifPresent(p -> {
            extra.addAll(readCas(p));
            names.add(p.toString());
        });
        if (!hostCas.isEmpty()) {
            extra.addAll(hostCas.certificates());
            names.add("the host's local CAs (" + hostCas.describe() + ")");
        }
        X509ExtendedTrustManager trust = extra.isEmpty() ? jdk
                : new EitherTrustManager(jdk, trustManager(keyStore(extra)), String.join(" and ", names));
        try {
            return SslContextBuilder.forClient()
                    .sslProvider(provider)
                    .trustManager(trust)
                    .endpointIdentificationAlgorithm(HTTPS)
                    .protocols(TlsSettings.PROTOCOLS)
                    .applicationProtocolConfig(alpn)
                    .build();
        } catch (SSLException e) {
            throw new IllegalStateException("cannot build the upstream TLS client context", e);
        }
    }

    /**
     * A handler for a connection to {@code host}: the engine sends {@code host}
     * as SNI and checks the server's certificate names {@code host} (endpoint
     * identification "HTTPS"), whatever the context was built with.
     * {@code host} is the DNS name the guest asked for, not the address the
     * broker resolved it to; SNI may not carry an IP address.
     */
    public static SslHandler handlerFor(SslContext ctx, ByteBufAllocator alloc, String host, int port) {
        if (!ctx.isClient()) {
            throw new IllegalArgumentException("not a client context");
        }
        SslHandler handler = ctx.newHandler(alloc, host, port);
        SSLEngine engine = handler.engine();
        SSLParameters params = engine.getSSLParameters();
        params.setEndpointIdentificationAlgorithm(HTTPS);
        params.setServerNames(List.of(new SNIHostName(host)));
        engine.setSSLParameters(params);
        return handler;
    }

    /** The PKIX trust manager over {@code cas}, or over the JDK's default trust store when null. */
    private static X509ExtendedTrustManager trustManager(KeyStore cas) {
        try {
            TrustManagerFactory f = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
            f.init(cas);
            for (TrustManager tm : f.getTrustManagers()) {
                if (tm instanceof X509ExtendedTrustManager x) {
                    return x;
                }
            }
            throw new IllegalStateException("the JDK's " + f.getAlgorithm() + " trust manager factory made no X.509 trust manager");
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("cannot load the JDK's trust store", e);
        }
    }

    private static Collection<? extends Certificate> readCas(Path pem) {
        Collection<? extends Certificate> certs;
        try (InputStream in = Files.newInputStream(pem)) {
            certs = CertificateFactory.getInstance("X.509").generateCertificates(in);
        } catch (IOException | GeneralSecurityException e) {
            throw extraCaProblem(pem, e.getMessage(), e);
        }
        if (certs.isEmpty()) {
            throw extraCaProblem(pem, "it holds no certificate", null);
        }
        return certs;
    }

    private static KeyStore keyStore(Collection<? extends Certificate> certs) {
        try {
            KeyStore ks = KeyStore.getInstance(KeyStore.getDefaultType());
            ks.load(null, null);
            int i = 0;
            for (Certificate c : certs) {
                ks.setCertificateEntry("extra-" + i++, c);
            }
            return ks;
        } catch (IOException | GeneralSecurityException e) {
            throw new IllegalStateException("cannot make a key store in memory", e);
        }
    }

    private static KosaException extraCaProblem(Path pem, String why, Exception cause) {
        return new KosaException(KosaException.Kind.HOST,
                "cannot read the extra trusted CA file " + pem + ": " + why,
                "it must hold one or more PEM certificates; it is a test setting, so unset it unless testing",
                cause);
    }
}
