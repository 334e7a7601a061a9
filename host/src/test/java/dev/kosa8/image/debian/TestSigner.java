package dev.kosa8.image.debian;

import org.bouncycastle.bcpg.ArmoredOutputStream;
import org.bouncycastle.bcpg.HashAlgorithmTags;
import org.bouncycastle.bcpg.PublicKeyAlgorithmTags;
import org.bouncycastle.crypto.AsymmetricCipherKeyPair;
import org.bouncycastle.crypto.generators.Ed25519KeyPairGenerator;
import org.bouncycastle.crypto.generators.RSAKeyPairGenerator;
import org.bouncycastle.crypto.params.Ed25519KeyGenerationParameters;
import org.bouncycastle.crypto.params.RSAKeyGenerationParameters;
import org.bouncycastle.bcpg.sig.KeyFlags;
import org.bouncycastle.openpgp.PGPKeyPair;
import org.bouncycastle.openpgp.PGPKeyRingGenerator;
import org.bouncycastle.openpgp.PGPPublicKey;
import org.bouncycastle.openpgp.PGPPublicKeyRing;
import org.bouncycastle.openpgp.PGPPublicKeyRingCollection;
import org.bouncycastle.openpgp.PGPSignature;
import org.bouncycastle.openpgp.PGPSignatureGenerator;
import org.bouncycastle.openpgp.PGPSignatureSubpacketGenerator;
import org.bouncycastle.openpgp.operator.bc.BcPGPContentSignerBuilder;
import org.bouncycastle.openpgp.operator.bc.BcPGPDigestCalculatorProvider;
import org.bouncycastle.openpgp.operator.bc.BcPGPKeyPair;

import java.io.ByteArrayOutputStream;
import java.math.BigInteger;
import java.nio.charset.StandardCharsets;
import java.security.SecureRandom;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Date;
import java.util.List;

/** A throwaway OpenPGP key made in the test, and clear-signed messages made with it, as Debian's InRelease is. */
public final class TestSigner {
    /** The key that signs: the primary key, or the signing subkey of {@link #ring}. */
    final PGPKeyPair pair;
    /** The public keys a verifier trusts; null: {@link #pair}'s alone. */
    private final PGPPublicKeyRing ring;

    private TestSigner(PGPKeyPair pair) {
        this(pair, null);
    }

    private TestSigner(PGPKeyPair pair, PGPPublicKeyRing ring) {
        this.pair = pair;
        this.ring = ring;
    }

    /**
     * A primary key and a signing subkey, as Debian's automatic keys are, both made at {@code created}: the primary
     * valid for {@code primaryValid} seconds, the subkey for {@code subkeyValid} (0: no expiry), either revoked by
     * the primary when asked. Signatures are made by the subkey.
     */
    static TestSigner withSubkey(Instant created, long primaryValid, long subkeyValid, boolean revokePrimary,
                                 boolean revokeSubkey) {
        try {
            PGPKeyPair primary = ed25519At(created);
            PGPKeyPair sub = ed25519At(created);
            PGPSignatureSubpacketGenerator ph = new PGPSignatureSubpacketGenerator();
            ph.setKeyFlags(false, KeyFlags.CERTIFY_OTHER | KeyFlags.SIGN_DATA);
            ph.setSignatureCreationTime(false, Date.from(created));
            if (primaryValid > 0) {
                ph.setKeyExpirationTime(false, primaryValid);
            }
            PGPKeyRingGenerator g = new PGPKeyRingGenerator(PGPSignature.POSITIVE_CERTIFICATION, primary,
                    "kosa8 test archive key", new BcPGPDigestCalculatorProvider().get(HashAlgorithmTags.SHA1),
                    ph.generate(), null, new BcPGPContentSignerBuilder(primary.getPublicKey().getAlgorithm(),
                    HashAlgorithmTags.SHA512), null);
            PGPSignatureSubpacketGenerator sh = new PGPSignatureSubpacketGenerator();
            sh.setKeyFlags(false, KeyFlags.SIGN_DATA);
            sh.setSignatureCreationTime(false, Date.from(created));
            if (subkeyValid > 0) {
                sh.setKeyExpirationTime(false, subkeyValid);
            }
            g.addSubKey(sub, sh.generate(), null);
            PGPPublicKeyRing ring = g.generatePublicKeyRing();
            PGPPublicKey primaryPub = ring.getPublicKey();
            PGPPublicKey subPub = ring.getPublicKey(sub.getKeyID());
            if (revokePrimary) {
                PGPSignatureGenerator r = new PGPSignatureGenerator(new BcPGPContentSignerBuilder(
                        primaryPub.getAlgorithm(), HashAlgorithmTags.SHA512), primaryPub);
                r.init(PGPSignature.KEY_REVOCATION, primary.getPrivateKey());
                ring = PGPPublicKeyRing.insertPublicKey(ring, PGPPublicKey.addCertification(primaryPub,
                        r.generateCertification(primaryPub)));
            }
            if (revokeSubkey) {
                PGPSignatureGenerator r = new PGPSignatureGenerator(new BcPGPContentSignerBuilder(
                        primaryPub.getAlgorithm(), HashAlgorithmTags.SHA512), primaryPub);
                r.init(PGPSignature.SUBKEY_REVOCATION, primary.getPrivateKey());
                ring = PGPPublicKeyRing.insertPublicKey(ring, PGPPublicKey.addCertification(subPub,
                        r.generateCertification(primaryPub, subPub)));
            }
            return new TestSigner(new PGPKeyPair(ring.getPublicKey(sub.getKeyID()), sub.getPrivateKey()), ring);
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }

    private static PGPKeyPair ed25519At(Instant created) throws Exception {
        Ed25519KeyPairGenerator g = new Ed25519KeyPairGenerator();
        g.init(new Ed25519KeyGenerationParameters(new SecureRandom()));
        return new BcPGPKeyPair(PublicKeyAlgorithmTags.EDDSA_LEGACY, g.generateKeyPair(), Date.from(created));
    }

    public static TestSigner ed25519() {
        try {
            Ed25519KeyPairGenerator g = new Ed25519KeyPairGenerator();
            g.init(new Ed25519KeyGenerationParameters(new SecureRandom()));
            AsymmetricCipherKeyPair kp = g.generateKeyPair();
            return new TestSigner(new BcPGPKeyPair(PublicKeyAlgorithmTags.EDDSA_LEGACY, kp, new Date()));
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }

    static TestSigner rsa() {
        try {
            RSAKeyPairGenerator g = new RSAKeyPairGenerator();
            g.init(new RSAKeyGenerationParameters(BigInteger.valueOf(65537), new SecureRandom(), 2048, 80));
            return new TestSigner(new BcPGPKeyPair(PublicKeyAlgorithmTags.RSA_SIGN, g.generateKeyPair(),
                    new Date()));
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }

    /** The keys a verifier trusts: this key alone. */
    public ArchiveKeys keys() {
        return keysOf(this);
    }

    static ArchiveKeys keysOf(TestSigner... signers) {
        List<PGPPublicKeyRing> rings = new ArrayList<>();
        for (TestSigner s : signers) {
            rings.add(s.ring != null ? s.ring : new PGPPublicKeyRing(List.of(s.pair.getPublicKey())));
        }
        return new ArchiveKeys(new PGPPublicKeyRingCollection(rings));
    }

    /** {@code text} clear-signed with SHA-512, as Debian's InRelease is. */
    byte[] clearSign(String text) {
        return clearSign(text, HashAlgorithmTags.SHA512, PGPSignature.CANONICAL_TEXT_DOCUMENT);
    }

    byte[] clearSign(String text, int hash, int type) {
        return message(text, armouredSignature(signed(text), hash, type));
    }

    /** The bytes a clear signature covers: lines without trailing blanks, CR LF between them, no last line end. */
    static byte[] signed(String text) {
        List<String> lines = text.lines().map(l -> l.replaceAll("[ \t]+$", "")).toList();
        return String.join("\r\n", lines).getBytes(StandardCharsets.UTF_8);
    }

    String armouredSignature(byte[] data, int hash, int type) {
        return armouredSignature(data, hash, type, null, 0);
    }

    /** {@code text} clear-signed as if at {@code made}, the signature valid {@code lifetime} seconds (0: always). */
    byte[] clearSignAt(String text, Instant made, long lifetime) {
        return message(text, armouredSignature(signed(text), HashAlgorithmTags.SHA512,
                PGPSignature.CANONICAL_TEXT_DOCUMENT, made, lifetime));
    }

    private String armouredSignature(byte[] data, int hash, int type, Instant made, long lifetime) {
        try {
            PGPSignatureGenerator g = new PGPSignatureGenerator(
                    new BcPGPContentSignerBuilder(pair.getPublicKey().getAlgorithm(), hash), pair.getPublicKey());
            g.init(type, pair.getPrivateKey());
            if (made != null) {
                PGPSignatureSubpacketGenerator h = new PGPSignatureSubpacketGenerator();
                h.setSignatureCreationTime(false, Date.from(made));
                h.setIssuerKeyID(false, pair.getKeyID());
                if (lifetime > 0) {
                    h.setSignatureExpirationTime(false, lifetime);
                }
                g.setHashedSubpackets(h.generate());
            }
            g.update(data);
            ByteArrayOutputStream out = new ByteArrayOutputStream();
            try (ArmoredOutputStream a = ArmoredOutputStream.builder().clearHeaders().build(out)) {
                g.generate().encode(a);
            }
            return out.toString(StandardCharsets.US_ASCII);
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }

    /** A clear-signed message of {@code text} with {@code armouredSignature} (any signer's, any text's). */
    static byte[] message(String text, String armouredSignature) {
        StringBuilder b = new StringBuilder("-----BEGIN PGP SIGNED MESSAGE-----\nHash: SHA512\n\n");
        text.lines().forEach(l -> b.append(l.startsWith("-") ? "- " + l : l).append('\n'));
        b.append(armouredSignature);
        return b.toString().getBytes(StandardCharsets.UTF_8);
    }
}
