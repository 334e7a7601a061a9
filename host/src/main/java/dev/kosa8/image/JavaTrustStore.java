package dev.kosa8.image;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.security.GeneralSecurityException;
import java.security.KeyStore;
import java.security.cert.CertificateException;
import java.security.cert.CertificateFactory;
import java.security.cert.X509Certificate;
import java.util.ArrayList;
import java.util.List;

/**
 * The guest's Java trust store: the certificates of a PEM bundle as trusted
 * entries of a PKCS#12 file with no password, no MAC and nothing encrypted,
 * the form of the JDK's own {@code cacerts} (JDK 18+ stores one so when
 * given a null password). Any JDK reads it with or without a password, and
 * Debian's {@code ca-certificates-java} updates it in place with its default
 * one ({@code changeit}), so a JDK a command installs later keeps the
 * sandbox's CA.
 *
 * <p>Why the host makes it: Java does not read PEM bundles, and the only
 * Java in the image is the agent's runtime, whose start under TCG would cost
 * every boot seconds; the host builds the few hundred kilobytes in
 * milliseconds from the image's own bundle, kept beside its root disk.
 *
 * <p>It belongs to the image, which owns the guest's files: the image build
 * ({@code RootfsPart}) writes the store of the bundle alone, and the daemon
 * writes each sandbox's store, the bundle plus its CA, into the guest.
 */
public final class JavaTrustStore {
    /** Where every Debian JDK finds its trust store ({@code lib/security/cacerts} links here), in the guest too. */
    public static final String GUEST_PATH = "/etc/ssl/certs/java/cacerts";
    /** The alias of the sandbox's CA; the bundle's certificates are {@code system-N}. */
    public static final String SANDBOX_ALIAS = "kosa8-sandbox";
    /** The host's CAs, when the sandbox trusts them, are {@code kosa8-host-N}. */
    public static final String HOST_ALIAS_PREFIX = "kosa8-host-";

    private JavaTrustStore() {
    }

    /**
     * The certificates of a PEM bundle such as {@code /etc/ssl/certs/ca-certificates.crt}.
     *
     * @throws CertificateException if a block is not a certificate, or there is none
     */
    public static List<X509Certificate> readPem(byte[] bundle) throws CertificateException {
        List<X509Certificate> certs = new ArrayList<>();
        for (var c : CertificateFactory.getInstance("X.509").generateCertificates(new ByteArrayInputStream(bundle))) {
            certs.add((X509Certificate) c);
        }
        if (certs.isEmpty()) {
            throw new CertificateException("the bundle holds no certificate");
        }
        return List.copyOf(certs);
    }

    /** The store holding {@code system} (as {@code system-N}) and, when not null, {@code sandboxCa}. */
    public static byte[] pkcs12(List<X509Certificate> system, X509Certificate sandboxCa) {
        return pkcs12(system, sandboxCa, List.of());
    }

    /**
     * As {@link #pkcs12(List, X509Certificate)}, with the host's locally added CAs as {@code kosa8-host-N} (a
     * sandbox that trusts them).
     */
    public static byte[] pkcs12(List<X509Certificate> system, X509Certificate sandboxCa, List<X509Certificate> host) {
        try {
            KeyStore store = KeyStore.getInstance("PKCS12");
            store.load(null, null);
            for (int i = 0; i < system.size(); i++) {
                store.setCertificateEntry("system-" + i, system.get(i));
            }
            if (sandboxCa != null) {
                store.setCertificateEntry(SANDBOX_ALIAS, sandboxCa);
            }
            for (int i = 0; i < host.size(); i++) {
                store.setCertificateEntry(HOST_ALIAS_PREFIX + i, host.get(i));
            }
            ByteArrayOutputStream out = new ByteArrayOutputStream(system.size() * 1600 + 4096);
            store.store(out, null);
            return out.toByteArray();
        } catch (GeneralSecurityException | IOException e) {
            throw new IllegalStateException("cannot make a Java trust store", e);
        }
    }
}
