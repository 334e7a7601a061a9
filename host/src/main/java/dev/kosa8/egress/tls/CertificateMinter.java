package dev.kosa8.egress.tls;

import java.math.BigInteger;
import java.security.GeneralSecurityException;
import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.security.PrivateKey;
import java.security.PublicKey;
import java.security.SecureRandom;
import java.security.cert.CertificateException;
import java.security.cert.X509Certificate;
import java.security.spec.ECGenParameterSpec;
import java.time.Instant;
import java.util.Date;
import org.bouncycastle.asn1.x500.X500Name;
import org.bouncycastle.asn1.x500.X500NameBuilder;
import org.bouncycastle.asn1.x500.style.BCStyle;
import org.bouncycastle.asn1.x509.BasicConstraints;
import org.bouncycastle.asn1.x509.ExtendedKeyUsage;
import org.bouncycastle.asn1.x509.Extension;
import org.bouncycastle.asn1.x509.GeneralName;
import org.bouncycastle.asn1.x509.GeneralNames;
import org.bouncycastle.asn1.x509.KeyPurposeId;
import org.bouncycastle.asn1.x509.KeyUsage;
import org.bouncycastle.cert.CertIOException;
import org.bouncycastle.cert.X509v3CertificateBuilder;
import org.bouncycastle.cert.jcajce.JcaX509CertificateConverter;
import org.bouncycastle.cert.jcajce.JcaX509ExtensionUtils;
import org.bouncycastle.cert.jcajce.JcaX509v3CertificateBuilder;
import org.bouncycastle.operator.ContentSigner;
import org.bouncycastle.operator.OperatorCreationException;
import org.bouncycastle.operator.jcajce.JcaContentSignerBuilder;

/**
 * Builds the two kinds of certificate a sandbox CA needs, as pure functions of
 * their inputs.
 *
 * <p>BouncyCastle is used only for its X.509 builders; no BC JCA provider is
 * registered or named. Every {@code Jca*} helper here falls back to
 * {@code KeyFactory/Signature/MessageDigest/CertificateFactory.getInstance(name)},
 * so the JDK's SunEC signs and the JDK parses. That keeps the crypto in the
 * JDK, and keeps working in the shaded jar, where BC's provider jar signature
 * is stripped.
 */
final class CertificateMinter {
    static final String SIGNATURE = "SHA256withECDSA";
    static final int MAX_COMMON_NAME = 64;

    private CertificateMinter() {
    }

    /** A fresh EC P-256 key pair from the JDK. */
    static KeyPair newP256KeyPair(SecureRandom random) {
        try {
            KeyPairGenerator g = KeyPairGenerator.getInstance("EC");
            g.initialize(new ECGenParameterSpec("secp256r1"), random);
            return g.generateKeyPair();
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("the JDK cannot make EC P-256 keys", e);
        }
    }

    /** A self-signed CA that may sign leaves but no further CAs (pathLen 0). */
    static X509Certificate selfSignedCa(KeyPair ca, String sandboxId, Instant notBefore, Instant notAfter,
            SecureRandom random) {
        X500Name subject = new X500NameBuilder(BCStyle.INSTANCE)
                .addRDN(BCStyle.O, "kosa8")
                .addRDN(BCStyle.CN, "kosa8 sandbox " + sandboxId + " CA")
                .build();
        try {
            JcaX509ExtensionUtils ext = new JcaX509ExtensionUtils();
            X509v3CertificateBuilder b = new JcaX509v3CertificateBuilder(subject, serial(random),
                    Date.from(notBefore), Date.from(notAfter), subject, ca.getPublic())
                    .addExtension(Extension.basicConstraints, true, new BasicConstraints(0))
                    .addExtension(Extension.keyUsage, true, new KeyUsage(KeyUsage.keyCertSign | KeyUsage.cRLSign))
                    .addExtension(Extension.subjectKeyIdentifier, false, ext.createSubjectKeyIdentifier(ca.getPublic()));
            return sign(b, ca.getPrivate());
        } catch (GeneralSecurityException | CertIOException e) {
            throw new IllegalStateException("cannot build the sandbox CA certificate", e);
        }
    }

    /**
     * A server certificate for exactly one DNS name, issued by {@code ca}: the name
     * is the only subject alternative name and, when it fits, the common name.
     */
    static X509Certificate leaf(DnsName name, PublicKey leafKey, X509Certificate ca, PrivateKey caKey,
            Instant notBefore, Instant notAfter, SecureRandom random) {
        // RFC 5280 caps a common name at 64 characters; a longer name goes in the SAN
        // alone, under an empty subject, which then makes the SAN critical.
        boolean fitsCommonName = name.value().length() <= MAX_COMMON_NAME;
        X500NameBuilder subject = new X500NameBuilder(BCStyle.INSTANCE);
        if (fitsCommonName) {
            subject.addRDN(BCStyle.CN, name.value());
        }
        try {
            JcaX509ExtensionUtils ext = new JcaX509ExtensionUtils();
            // Taking the issuer from the CA certificate copies its subject's encoding
            // byte for byte, which is what chain building compares.
            X509v3CertificateBuilder b = new JcaX509v3CertificateBuilder(ca, serial(random),
                    Date.from(notBefore), Date.from(notAfter), subject.build(), leafKey)
                    .addExtension(Extension.basicConstraints, true, new BasicConstraints(false))
                    .addExtension(Extension.keyUsage, true, new KeyUsage(KeyUsage.digitalSignature))
                    .addExtension(Extension.extendedKeyUsage, false, new ExtendedKeyUsage(KeyPurposeId.id_kp_serverAuth))
                    .addExtension(Extension.subjectAlternativeName, !fitsCommonName,
                            new GeneralNames(new GeneralName(GeneralName.dNSName, name.value())))
                    .addExtension(Extension.authorityKeyIdentifier, false,
                            ext.createAuthorityKeyIdentifier(ca.getPublicKey()))
                    .addExtension(Extension.subjectKeyIdentifier, false, ext.createSubjectKeyIdentifier(leafKey));
            return sign(b, caKey);
        } catch (GeneralSecurityException | CertIOException e) {
            throw new IllegalStateException("cannot build a leaf certificate for " + name, e);
        }
    }

    private static X509Certificate sign(X509v3CertificateBuilder b, PrivateKey key) throws CertificateException {
        try {
            ContentSigner signer = new JcaContentSignerBuilder(SIGNATURE).build(key);
            return new JcaX509CertificateConverter().getCertificate(b.build(signer));
        } catch (OperatorCreationException e) {
            throw new IllegalStateException("the JDK cannot sign with " + SIGNATURE, e);
        }
    }

    /** 128 random bits, never zero: RFC 5280 wants a positive serial of at most 20 octets. */
    private static BigInteger serial(SecureRandom random) {
        BigInteger s;
        do {
            s = new BigInteger(128, random);
        } while (s.signum() == 0);
        return s;
    }
}
