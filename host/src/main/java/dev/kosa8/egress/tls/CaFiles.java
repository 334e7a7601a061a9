package dev.kosa8.egress.tls;

import dev.kosa8.host.AtomicFile;
import dev.kosa8.host.KosaException;
import java.io.IOException;
import java.io.InputStream;
import java.io.StringReader;
import java.io.StringWriter;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.GeneralSecurityException;
import java.security.KeyFactory;
import java.security.PrivateKey;
import java.security.Signature;
import java.security.cert.X509Certificate;
import java.security.spec.PKCS8EncodedKeySpec;
import java.util.Optional;
import java.util.Set;
import org.bouncycastle.asn1.pkcs.PrivateKeyInfo;
import org.bouncycastle.asn1.x9.X9ObjectIdentifiers;
import org.bouncycastle.cert.X509CertificateHolder;
import org.bouncycastle.cert.jcajce.JcaX509CertificateConverter;
import org.bouncycastle.openssl.PEMParser;
import org.bouncycastle.openssl.jcajce.JcaPEMWriter;
import org.bouncycastle.openssl.jcajce.JcaPKCS8Generator;

/**
 * A sandbox CA's two files: {@code ca.key} (the private key, PKCS#8 PEM, mode
 * 0600) and {@code ca.pem} (the certificate, PEM, mode 0644).
 *
 * <p>Each is written to a temporary name, synced and renamed ({@link
 * AtomicFile}), so a crash never leaves half a key. The key's temporary file
 * is created 0600, so the key is never readable by others, not even between
 * creation and a chmod. The key is renamed into place first and
 * {@code ca.pem} last: {@code ca.pem} present means the CA is complete and may
 * already be installed in the guest.
 *
 * <p>A damaged or mismatched pair is refused, never silently replaced: the guest
 * trusts the certificate it was given, and a new CA would make every TLS
 * connection in the guest fail with an error that points nowhere near here.
 */
final class CaFiles {
    static final String KEY = "ca.key";
    static final String CERT = "ca.pem";
    /** Both files are a few hundred bytes; anything much larger is not ours. */
    private static final long MAX_FILE_SIZE = 64 * 1024;
    private static final Set<PosixFilePermission> OWNER_ONLY = PosixFilePermissions.fromString("rw-------");
    private static final Set<PosixFilePermission> WORLD_READABLE = PosixFilePermissions.fromString("rw-r--r--");
    private static final Set<PosixFilePermission> PRIVATE_DIR = PosixFilePermissions.fromString("rwx------");

    /** A CA's key and certificate as read from or written to disk. */
    record Stored(PrivateKey key, X509Certificate certificate) {
        @Override
        public String toString() {
            return "Stored[" + certificate.getSubjectX500Principal() + ", key hidden]";
        }
    }

    private CaFiles() {
    }

    /**
     * The CA in {@code dir}, or empty when {@code ca.pem} is absent (never created,
     * or creation was interrupted before the certificate was written: then no guest
     * can have been given it, and a stray {@code ca.key} is simply replaced).
     */
    static Optional<Stored> read(Path dir) {
        Path certFile = dir.resolve(CERT);
        Path keyFile = dir.resolve(KEY);
        if (!Files.exists(certFile, LinkOption.NOFOLLOW_LINKS)) {
            return Optional.empty();
        }
        if (!Files.exists(keyFile, LinkOption.NOFOLLOW_LINKS)) {
            throw damaged(dir, keyFile, "the certificate " + CERT + " is there but its key is missing");
        }
        checkOwnerOnly(dir, keyFile);
        X509Certificate cert = readCertificate(dir, certFile);
        PrivateKey key = readKey(dir, keyFile);
        checkPair(dir, keyFile, key, cert);
        return Optional.of(new Stored(key, cert));
    }

    static void write(Path dir, Stored ca) {
        try {
            if (!Files.isDirectory(dir)) {
                Files.createDirectories(dir, PosixFilePermissions.asFileAttribute(PRIVATE_DIR));
            }
            // each renamed and its directory synced before the next: the key is in place before the certificate
            AtomicFile.write(dir.resolve(KEY), OWNER_ONLY, keyPem(ca.key()).getBytes(StandardCharsets.US_ASCII));
            AtomicFile.write(dir.resolve(CERT), WORLD_READABLE,
                    pem(ca.certificate()).getBytes(StandardCharsets.US_ASCII));
        } catch (IOException e) {
            throw new KosaException(KosaException.Kind.HOST,
                    "cannot write the sandbox CA into " + dir + ": " + e.getMessage(),
                    "check that " + dir + " is a writable directory of yours", e);
        }
    }

    static String pem(X509Certificate cert) {
        StringWriter out = new StringWriter();
        try (JcaPEMWriter w = new JcaPEMWriter(out)) {
            w.writeObject(cert);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return out.toString();
    }

    private static String keyPem(PrivateKey key) throws IOException {
        StringWriter out = new StringWriter();
        try (JcaPEMWriter w = new JcaPEMWriter(out)) {
            // PKCS#8 ("PRIVATE KEY"), not the writer's default for EC keys (SEC 1, "EC PRIVATE KEY").
            w.writeObject(new JcaPKCS8Generator(key, null));
        }
        return out.toString();
    }

    private static void checkOwnerOnly(Path dir, Path keyFile) {
        Set<PosixFilePermission> mode;
        try {
            mode = Files.getPosixFilePermissions(keyFile, LinkOption.NOFOLLOW_LINKS);
        } catch (IOException e) {
            throw damaged(dir, keyFile, e.toString());
        }
        if (mode.stream().anyMatch(p -> !p.name().startsWith("OWNER_"))) {
            throw new KosaException(KosaException.Kind.HOST,
                    "the sandbox CA key " + keyFile + " is open to other users (mode "
                            + PosixFilePermissions.toString(mode) + ")",
                    "anyone who read it can impersonate any site to this sandbox: delete " + KEY + " and " + CERT
                            + " in " + dir + " and recreate the sandbox so its guest trusts a new CA");
        }
    }

    private static X509Certificate readCertificate(Path dir, Path file) {
        Object o = readPem(dir, file);
        if (!(o instanceof X509CertificateHolder holder)) {
            throw damaged(dir, file, "it holds no PEM certificate");
        }
        try {
            X509Certificate cert = new JcaX509CertificateConverter().getCertificate(holder);
            if (cert.getBasicConstraints() < 0) {
                throw damaged(dir, file, "the certificate is not a CA");
            }
            cert.verify(cert.getPublicKey());
            return cert;
        } catch (GeneralSecurityException e) {
            throw damaged(dir, file, e.toString());
        }
    }

    private static PrivateKey readKey(Path dir, Path file) {
        Object o = readPem(dir, file);
        if (!(o instanceof PrivateKeyInfo info)) {
            throw damaged(dir, file, "it holds no PKCS#8 (\"PRIVATE KEY\") PEM block");
        }
        if (!X9ObjectIdentifiers.id_ecPublicKey.equals(info.getPrivateKeyAlgorithm().getAlgorithm())) {
            throw damaged(dir, file, "the key is not an EC key");
        }
        try {
            return KeyFactory.getInstance("EC").generatePrivate(new PKCS8EncodedKeySpec(info.getEncoded()));
        } catch (GeneralSecurityException | IOException e) {
            throw damaged(dir, file, e.toString());
        }
    }

    private static Object readPem(Path dir, Path file) {
        byte[] bytes;
        try (InputStream in = Files.newInputStream(file, LinkOption.NOFOLLOW_LINKS)) {
            bytes = in.readNBytes((int) MAX_FILE_SIZE + 1);
        } catch (IOException e) {
            throw damaged(dir, file, e.toString());
        }
        if (bytes.length > MAX_FILE_SIZE) {
            throw damaged(dir, file, "it is larger than " + MAX_FILE_SIZE + " bytes");
        }
        Object o;
        try (PEMParser p = new PEMParser(new StringReader(new String(bytes, StandardCharsets.US_ASCII)))) {
            o = p.readObject();
        } catch (IOException | RuntimeException e) {
            // PEMParser reports bad base64 and bad DER as IOException or IllegalArgumentException.
            throw damaged(dir, file, e.toString());
        }
        if (o == null) {
            throw damaged(dir, file, "it holds no PEM block");
        }
        return o;
    }

    /** Proves the key is the certificate's: sign with one, verify with the other. */
    private static void checkPair(Path dir, Path keyFile, PrivateKey key, X509Certificate cert) {
        byte[] probe = "kosa8 sandbox CA key check".getBytes(StandardCharsets.US_ASCII);
        try {
            Signature s = Signature.getInstance(CertificateMinter.SIGNATURE);
            s.initSign(key);
            s.update(probe);
            byte[] sig = s.sign();
            Signature v = Signature.getInstance(CertificateMinter.SIGNATURE);
            v.initVerify(cert.getPublicKey());
            v.update(probe);
            if (!v.verify(sig)) {
                throw damaged(dir, keyFile, "the key does not belong to the certificate " + CERT);
            }
        } catch (GeneralSecurityException e) {
            throw damaged(dir, keyFile, "the key does not belong to the certificate " + CERT + ": " + e);
        }
    }

    private static KosaException damaged(Path dir, Path file, String why) {
        return new KosaException(KosaException.Kind.HOST,
                "the sandbox CA is damaged: cannot use " + file + ": " + why,
                "kosa8 does not replace a CA on its own, because the guest trusts the old one: delete " + KEY
                        + " and " + CERT + " in " + dir + " and recreate the sandbox so its guest trusts the new CA");
    }
}
