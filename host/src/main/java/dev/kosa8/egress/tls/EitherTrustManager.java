package dev.kosa8.egress.tls;

import java.net.Socket;
import java.security.cert.CertificateException;
import java.security.cert.X509Certificate;
import java.util.Arrays;
import javax.net.ssl.SSLEngine;
import javax.net.ssl.X509ExtendedTrustManager;

/**
 * Trusts a peer when either of two trust managers does. Both are extended trust
 * managers and get the engine or socket, so each one still checks the host name
 * against the endpoint identification algorithm set on the engine: accepting
 * the chain through the second never skips the name check.
 */
final class EitherTrustManager extends X509ExtendedTrustManager {
    private final X509ExtendedTrustManager first;
    private final X509ExtendedTrustManager second;
    private final String secondName;

    /** {@code secondName} says in error messages what the second one trusts. */
    EitherTrustManager(X509ExtendedTrustManager first, X509ExtendedTrustManager second, String secondName) {
        this.first = first;
        this.second = second;
        this.secondName = secondName;
    }

    @FunctionalInterface
    private interface Check {
        void apply(X509ExtendedTrustManager tm) throws CertificateException;
    }

    private void either(Check check) throws CertificateException {
        try {
            check.apply(first);
        } catch (CertificateException e1) {
            try {
                check.apply(second);
            } catch (CertificateException e2) {
                CertificateException both = new CertificateException("not trusted by the JDK's trust store ("
                        + e1.getMessage() + ") nor by " + secondName + " (" + e2.getMessage() + ")", e1);
                both.addSuppressed(e2);
                throw both;
            }
        }
    }

    @Override
    public void checkServerTrusted(X509Certificate[] chain, String authType, SSLEngine engine)
            throws CertificateException {
        either(tm -> tm.checkServerTrusted(chain, authType, engine));
    }

    @Override
    public void checkServerTrusted(X509Certificate[] chain, String authType, Socket socket)
            throws CertificateException {
        either(tm -> tm.checkServerTrusted(chain, authType, socket));
    }

    @Override
    public void checkServerTrusted(X509Certificate[] chain, String authType) throws CertificateException {
        either(tm -> tm.checkServerTrusted(chain, authType));
    }

    @Override
    public void checkClientTrusted(X509Certificate[] chain, String authType, SSLEngine engine)
            throws CertificateException {
        either(tm -> tm.checkClientTrusted(chain, authType, engine));
    }

    @Override
    public void checkClientTrusted(X509Certificate[] chain, String authType, Socket socket)
            throws CertificateException {
        either(tm -> tm.checkClientTrusted(chain, authType, socket));
    }

    @Override
    public void checkClientTrusted(X509Certificate[] chain, String authType) throws CertificateException {
        either(tm -> tm.checkClientTrusted(chain, authType));
    }

    @Override
    public X509Certificate[] getAcceptedIssuers() {
        X509Certificate[] a = first.getAcceptedIssuers();
        X509Certificate[] b = second.getAcceptedIssuers();
        X509Certificate[] all = Arrays.copyOf(a, a.length + b.length);
        System.arraycopy(b, 0, all, a.length, b.length);
        return all;
    }
}
