package dev.kosa8.image.debian;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.Date;
import org.bouncycastle.bcpg.ArmoredOutputStream;
import org.bouncycastle.bcpg.HashAlgorithmTags;
import org.bouncycastle.openpgp.PGPSignature;
import org.bouncycastle.openpgp.PGPSignatureGenerator;
import org.bouncycastle.openpgp.PGPSignatureSubpacketGenerator;
import org.bouncycastle.openpgp.operator.bc.BcPGPContentSignerBuilder;
import org.junit.jupiter.api.Test;

/**
 * review47: an InRelease carries several signatures (Debian signs with more than one key). apt counts a signature by
 * an expired key as worthless and still accepts the file on another good signature by a trusted key; ClearSigned
 * throws on the first known key that has expired, so one stale shipped key beside a good one refuses the file.
 */
class ClearSignedExpiredBesideGoodTest {
    static final Instant NOW = Instant.parse("2026-12-05T12:00:00Z");
    static final long DAY = 86_400;

    @Test
    void aGoodSignatureBesideOneByAKnownKeyThatHasSinceExpiredIsAccepted() throws Exception {
        TestSigner good = TestSigner.withSubkey(NOW.minusSeconds(10 * DAY), 0, 0, false, false);
        TestSigner expired = TestSigner.withSubkey(NOW.minusSeconds(10 * DAY), 0, 5 * DAY, false, false);
        Instant made = NOW.minusSeconds(6 * DAY); // both keys valid when it was signed
        byte[] data = TestSigner.signed(ClearSignedTest.TEXT);
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        try (ArmoredOutputStream a = ArmoredOutputStream.builder().clearHeaders().build(out)) {
            sign(expired, data, made).encode(a);
            sign(good, data, made).encode(a);
        }
        byte[] msg = TestSigner.message(ClearSignedTest.TEXT, out.toString(StandardCharsets.US_ASCII));
        ClearSigned.Verified v = ClearSigned.verify(msg, TestSigner.keysOf(expired, good), "InRelease", NOW);
        assertThat(v.signers()).hasSize(1);
    }

    private static PGPSignature sign(TestSigner s, byte[] data, Instant made) throws Exception {
        PGPSignatureGenerator g = new PGPSignatureGenerator(new BcPGPContentSignerBuilder(
                s.pair.getPublicKey().getAlgorithm(), HashAlgorithmTags.SHA512), s.pair.getPublicKey());
        g.init(PGPSignature.CANONICAL_TEXT_DOCUMENT, s.pair.getPrivateKey());
        PGPSignatureSubpacketGenerator h = new PGPSignatureSubpacketGenerator();
        h.setSignatureCreationTime(false, Date.from(made));
        h.setIssuerKeyID(false, s.pair.getKeyID());
        g.setHashedSubpackets(h.generate());
        g.update(data);
        return g.generate();
    }
}
