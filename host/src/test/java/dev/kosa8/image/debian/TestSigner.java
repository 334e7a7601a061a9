package dev.kosa8.image.debian;

import org.bouncycastle.bcpg.ArmoredOutputStream;
import org.bouncycastle.bcpg.HashAlgorithmTags;
import org.bouncycastle.bcpg.PublicKeyAlgorithmTags;
import org.bouncycastle.crypto.AsymmetricCipherKeyPair;
import org.bouncycastle.crypto.generators.Ed25519KeyPairGenerator;
import org.bouncycastle.crypto.generators.RSAKeyPairGenerator;
import org.bouncycastle.crypto.params.Ed25519KeyGenerationParameters;
import org.bouncycastle.crypto.params.RSAKeyGenerationParameters;
import org.bouncycastle.openpgp.PGPKeyPair;
import org.bouncycastle.openpgp.PGPPublicKeyRing;
import org.bouncycastle.openpgp.PGPPublicKeyRingCollection;
import org.bouncycastle.openpgp.PGPSignature;
import org.bouncycastle.openpgp.PGPSignatureGenerator;
import org.bouncycastle.openpgp.operator.bc.BcPGPContentSignerBuilder;
import org.bouncycastle.openpgp.operator.bc.BcPGPKeyPair;

import java.io.ByteArrayOutputStream;
import java.math.BigInteger;
import java.nio.charset.StandardCharsets;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.Date;
import java.util.List;

/** A throwaway OpenPGP key made in the test, and clear-signed messages made with it, as Debian's InRelease is. */
public final class TestSigner {
    final PGPKeyPair pair;

    private TestSigner(PGPKeyPair pair) {
        this.pair = pair;
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
            rings.add(new PGPPublicKeyRing(List.of(s.pair.getPublicKey())));
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
        try {
            PGPSignatureGenerator g = new PGPSignatureGenerator(
                    new BcPGPContentSignerBuilder(pair.getPublicKey().getAlgorithm(), hash), pair.getPublicKey());
            g.init(type, pair.getPrivateKey());
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
