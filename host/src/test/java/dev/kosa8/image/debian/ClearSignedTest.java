package dev.kosa8.image.debian;

import dev.kosa8.host.KosaException;
import org.bouncycastle.bcpg.HashAlgorithmTags;
import org.bouncycastle.openpgp.PGPSignature;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class ClearSignedTest {
    static final TestSigner KEY = TestSigner.ed25519();
    static final String TEXT = """
            Origin: Debian
            Codename: bookworm
            Date: Sat, 11 Jul 2026 10:16:37 UTC
            SHA256:
             0ed6d4c8891eb86358b94bb35d9e4da40ed6d4c8891eb86358b94bb35d9e4da4  1484322 main/binary-amd64/Packages.xz
            -dash line: escaped on the wire
            """;

    @Test
    void aGoodSignatureIsAcceptedAndTheSignedTextReturned() {
        ClearSigned.Verified v = ClearSigned.verify(KEY.clearSign(TEXT), KEY.keys(), "InRelease");
        assertThat(v.text()).isEqualTo(TEXT);
        assertThat(v.signers()).containsExactly(ArchiveKeys.hex(KEY.pair.getPublicKey().getFingerprint()));
    }

    @Test
    void anRsaSignatureAsDebiansAutomaticKeysMakeIsAccepted() {
        TestSigner rsa = TestSigner.rsa();
        assertThat(ClearSigned.verify(rsa.clearSign(TEXT), rsa.keys(), "InRelease").text()).isEqualTo(TEXT);
    }

    @Test
    void trailingBlanksAreNotPartOfTheSignedText() {
        byte[] msg = KEY.clearSign("A: b   \nC: d\t\n");
        assertThat(ClearSigned.verify(msg, KEY.keys(), "x").text()).isEqualTo("A: b\nC: d\n");
        // blanks added on the way do not break it either (RFC 4880 7.1)
        String spaced = new String(msg, StandardCharsets.UTF_8).replace("A: b\n", "A: b \n");
        assertThat(ClearSigned.verify(spaced.getBytes(StandardCharsets.UTF_8), KEY.keys(), "x").text())
                .isEqualTo("A: b\nC: d\n");
    }

    @Test
    void tamperedTextIsRefused() {
        String msg = new String(KEY.clearSign(TEXT), StandardCharsets.UTF_8).replace("1484322", "1484323");
        assertThatThrownBy(() -> ClearSigned.verify(msg.getBytes(StandardCharsets.UTF_8), KEY.keys(), "InRelease"))
                .isInstanceOf(KosaException.class).hasMessageContaining("does not match the text");
    }

    @Test
    void aSignatureOfOtherTextIsRefused() {
        String other = KEY.armouredSignature(TestSigner.signed("Origin: Evil\n"), HashAlgorithmTags.SHA512,
                PGPSignature.CANONICAL_TEXT_DOCUMENT);
        assertThatThrownBy(() -> ClearSigned.verify(TestSigner.message(TEXT, other), KEY.keys(), "InRelease"))
                .isInstanceOf(KosaException.class).hasMessageContaining("does not match the text");
    }

    @Test
    void aSignatureByAKeyKosa8DoesNotShipIsRefused() {
        TestSigner stranger = TestSigner.ed25519();
        assertThatThrownBy(() -> ClearSigned.verify(stranger.clearSign(TEXT), KEY.keys(), "InRelease"))
                .isInstanceOf(KosaException.class)
                .hasMessageContaining("not signed by any Debian archive key kosa8 ships");
        assertThatThrownBy(() -> ClearSigned.verify(stranger.clearSign(TEXT), ArchiveKeys.debian(), "InRelease"))
                .isInstanceOf(KosaException.class)
                .hasMessageContaining("not signed by any Debian archive key kosa8 ships");
    }

    @Test
    void anUnknownSignerBesideAGoodOneIsIgnored() {
        TestSigner stranger = TestSigner.ed25519();
        String both = stranger.armouredSignature(TestSigner.signed(TEXT), HashAlgorithmTags.SHA256,
                PGPSignature.CANONICAL_TEXT_DOCUMENT) + KEY.armouredSignature(TestSigner.signed(TEXT),
                HashAlgorithmTags.SHA512, PGPSignature.CANONICAL_TEXT_DOCUMENT);
        // two armoured blocks are not one signature block: data after the first block's end is refused
        assertThatThrownBy(() -> ClearSigned.verify(TestSigner.message(TEXT, both), KEY.keys(), "x"))
                .isInstanceOf(KosaException.class).hasMessageContaining("after its signature");
    }

    @Test
    void twoTrustedKeysBothCheck() {
        TestSigner other = TestSigner.ed25519();
        byte[] msg = KEY.clearSign(TEXT);
        assertThat(ClearSigned.verify(msg, TestSigner.keysOf(other, KEY), "x").signers()).hasSize(1);
    }

    @Test
    void sha1AndBinarySignaturesAreRefused() {
        assertThatThrownBy(() -> ClearSigned.verify(KEY.clearSign(TEXT, HashAlgorithmTags.SHA1,
                PGPSignature.CANONICAL_TEXT_DOCUMENT), KEY.keys(), "x"))
                .isInstanceOf(KosaException.class).hasMessageContaining("weak hash");
        assertThatThrownBy(() -> ClearSigned.verify(KEY.clearSign(TEXT, HashAlgorithmTags.SHA512,
                PGPSignature.BINARY_DOCUMENT), KEY.keys(), "x"))
                .isInstanceOf(KosaException.class).hasMessageContaining("not a text signature");
    }

    @Test
    void textOutsideTheSignedPartIsRefused() {
        byte[] good = KEY.clearSign(TEXT);
        String s = new String(good, StandardCharsets.UTF_8);
        assertThatThrownBy(() -> ClearSigned.verify(("Codename: sid\n" + s).getBytes(StandardCharsets.UTF_8),
                KEY.keys(), "x")).isInstanceOf(KosaException.class).hasMessageContaining("not an OpenPGP");
        assertThatThrownBy(() -> ClearSigned.verify((s + "Codename: sid\n").getBytes(StandardCharsets.UTF_8),
                KEY.keys(), "x")).isInstanceOf(KosaException.class).hasMessageContaining("after its signature");
        assertThatThrownBy(() -> ClearSigned.verify(TEXT.getBytes(StandardCharsets.UTF_8), KEY.keys(), "x"))
                .isInstanceOf(KosaException.class).hasMessageContaining("not an OpenPGP");
        String cut = s.substring(0, s.indexOf("-----BEGIN PGP SIGNATURE"));
        assertThatThrownBy(() -> ClearSigned.verify(cut.getBytes(StandardCharsets.UTF_8), KEY.keys(), "x"))
                .isInstanceOf(KosaException.class).hasMessageContaining("no signature");
        String unescaped = s.replace("- -dash line", "-dash line");
        assertThatThrownBy(() -> ClearSigned.verify(unescaped.getBytes(StandardCharsets.UTF_8), KEY.keys(), "x"))
                .isInstanceOf(KosaException.class).hasMessageContaining("not escaped");
    }

    static final Instant NOW = Instant.parse("2026-12-05T12:00:00Z");
    static final long DAY = 86_400;

    @Test
    void aKeyValidUntilLaterIsAcceptedAndItsSubkeyNamedAsTheSigner() {
        TestSigner k = TestSigner.withSubkey(NOW.minusSeconds(10 * DAY), 3650 * DAY, 3650 * DAY, false, false);
        ClearSigned.Verified v = ClearSigned.verify(k.clearSignAt(TEXT, NOW.minusSeconds(3600), 0), k.keys(), "x",
                NOW);
        assertThat(v.text()).isEqualTo(TEXT);
        assertThat(v.signers()).containsExactly(ArchiveKeys.hex(k.pair.getPublicKey().getFingerprint()));
    }

    @Test
    void aSubkeyThatHadExpiredWhenItSignedIsRefused() {
        TestSigner k = TestSigner.withSubkey(NOW.minusSeconds(10 * DAY), 0, DAY, false, false);
        assertThatThrownBy(() -> ClearSigned.verify(k.clearSignAt(TEXT, NOW.minusSeconds(3600), 0), k.keys(),
                "InRelease", NOW)).isInstanceOf(KosaException.class)
                .hasMessageContaining("InRelease: signed at " + NOW.minusSeconds(3600) + " by the key")
                .hasMessageContaining("which had expired at " + NOW.minusSeconds(9 * DAY));
    }

    @Test
    void aSignatureMadeWhileTheKeyWasValidIsRefusedOnceTheKeyHasExpired() {
        TestSigner k = TestSigner.withSubkey(NOW.minusSeconds(10 * DAY), 0, 5 * DAY, false, false);
        byte[] old = k.clearSignAt(TEXT, NOW.minusSeconds(8 * DAY), 0);
        // while the key was valid, the signature was good
        assertThat(ClearSigned.verify(old, k.keys(), "x", NOW.minusSeconds(6 * DAY)).text()).isEqualTo(TEXT);
        assertThatThrownBy(() -> ClearSigned.verify(old, k.keys(), "x", NOW)).isInstanceOf(KosaException.class)
                .hasMessageContaining("which expired at " + NOW.minusSeconds(5 * DAY))
                .hasMessageContaining("a signature by an expired key is not trusted, however old");
    }

    @Test
    void anExpiredOrRevokedPrimaryKeyInvalidatesItsSigningSubkey() {
        TestSigner expired = TestSigner.withSubkey(NOW.minusSeconds(10 * DAY), DAY, 0, false, false);
        assertThatThrownBy(() -> ClearSigned.verify(expired.clearSignAt(TEXT, NOW.minusSeconds(3600), 0),
                expired.keys(), "x", NOW)).isInstanceOf(KosaException.class)
                .hasMessageContaining("(its primary key ").hasMessageContaining("which had expired at");
        TestSigner revoked = TestSigner.withSubkey(NOW.minusSeconds(10 * DAY), 0, 0, true, false);
        assertThatThrownBy(() -> ClearSigned.verify(revoked.clearSignAt(TEXT, NOW.minusSeconds(3600), 0),
                revoked.keys(), "x", NOW)).isInstanceOf(KosaException.class)
                .hasMessageContaining("(its primary key ").hasMessageContaining("which is revoked");
    }

    @Test
    void aRevokedSubkeyIsRefused() {
        TestSigner k = TestSigner.withSubkey(NOW.minusSeconds(10 * DAY), 0, 0, false, true);
        assertThatThrownBy(() -> ClearSigned.verify(k.clearSignAt(TEXT, NOW.minusSeconds(3600), 0), k.keys(), "x",
                NOW)).isInstanceOf(KosaException.class).hasMessageContaining("which is revoked")
                .hasMessageNotContaining("primary key");
    }

    @Test
    void aSignaturePastItsOwnExpiryIsRefused() {
        TestSigner k = TestSigner.withSubkey(NOW.minusSeconds(10 * DAY), 0, 0, false, false);
        byte[] msg = k.clearSignAt(TEXT, NOW.minusSeconds(2 * DAY), DAY);
        assertThat(ClearSigned.verify(msg, k.keys(), "x", NOW.minusSeconds(DAY + DAY / 2)).text()).isEqualTo(TEXT);
        assertThatThrownBy(() -> ClearSigned.verify(msg, k.keys(), "x", NOW)).isInstanceOf(KosaException.class)
                .hasMessageContaining("expired at " + NOW.minusSeconds(DAY));
    }

    /** One armoured block holding a signature of {@link #TEXT} by each signer, made at {@code made}. */
    static byte[] signedBy(Instant made, String text, TestSigner... signers) throws Exception {
        byte[] data = TestSigner.signed(text);
        java.io.ByteArrayOutputStream out = new java.io.ByteArrayOutputStream();
        try (org.bouncycastle.bcpg.ArmoredOutputStream a = org.bouncycastle.bcpg.ArmoredOutputStream.builder()
                .clearHeaders().build(out)) {
            for (TestSigner s : signers) {
                org.bouncycastle.openpgp.PGPSignatureGenerator g = new org.bouncycastle.openpgp.PGPSignatureGenerator(
                        new org.bouncycastle.openpgp.operator.bc.BcPGPContentSignerBuilder(
                                s.pair.getPublicKey().getAlgorithm(), HashAlgorithmTags.SHA512), s.pair.getPublicKey());
                g.init(PGPSignature.CANONICAL_TEXT_DOCUMENT, s.pair.getPrivateKey());
                org.bouncycastle.openpgp.PGPSignatureSubpacketGenerator h =
                        new org.bouncycastle.openpgp.PGPSignatureSubpacketGenerator();
                h.setSignatureCreationTime(false, java.util.Date.from(made));
                h.setIssuerKeyID(false, s.pair.getKeyID());
                g.setHashedSubpackets(h.generate());
                g.update(data);
                g.generate().encode(a);
            }
        }
        return TestSigner.message(TEXT, out.toString(StandardCharsets.US_ASCII));
    }

    @Test
    void aGoodSignatureBesideOneByARevokedKeyIsAcceptedInEitherOrder() throws Exception {
        TestSigner good = TestSigner.withSubkey(NOW.minusSeconds(10 * DAY), 0, 0, false, false);
        TestSigner revoked = TestSigner.withSubkey(NOW.minusSeconds(10 * DAY), 0, 0, false, true);
        ArchiveKeys keys = TestSigner.keysOf(revoked, good);
        String fpr = ArchiveKeys.hex(good.pair.getPublicKey().getFingerprint());
        assertThat(ClearSigned.verify(signedBy(NOW.minusSeconds(DAY), TEXT, revoked, good), keys, "x", NOW)
                .signers()).containsExactly(fpr);
        assertThat(ClearSigned.verify(signedBy(NOW.minusSeconds(DAY), TEXT, good, revoked), keys, "x", NOW)
                .signers()).containsExactly(fpr);
    }

    @Test
    void withNoGoodSignatureTheReasonsOfTheWorthlessOnesAreGivenTheClearestFirst() throws Exception {
        TestSigner expired = TestSigner.withSubkey(NOW.minusSeconds(10 * DAY), 0, 5 * DAY, false, false);
        TestSigner revoked = TestSigner.withSubkey(NOW.minusSeconds(10 * DAY), 0, 0, true, false);
        byte[] msg = signedBy(NOW.minusSeconds(6 * DAY), TEXT, expired, revoked);
        assertThatThrownBy(() -> ClearSigned.verify(msg, TestSigner.keysOf(expired, revoked), "InRelease", NOW))
                .isInstanceOf(KosaException.class)
                .hasMessageContaining("InRelease: signed by the key ")
                .hasMessageContaining("which is revoked; signed at ")
                .hasMessageContaining("which expired at " + NOW.minusSeconds(5 * DAY))
                .hasMessageContaining("no other signature by a key kosa8 ships is good");
    }

    @Test
    void aSignatureThatDoesNotVerifyIsRefusedAsSuchNotForItsKeysExpiry() throws Exception {
        TestSigner expired = TestSigner.withSubkey(NOW.minusSeconds(10 * DAY), 0, 5 * DAY, false, false);
        TestSigner good = TestSigner.withSubkey(NOW.minusSeconds(10 * DAY), 0, 0, false, false);
        String msg = new String(signedBy(NOW.minusSeconds(6 * DAY), TEXT, expired, good), StandardCharsets.UTF_8)
                .replace("1484322", "1484323");
        assertThatThrownBy(() -> ClearSigned.verify(msg.getBytes(StandardCharsets.UTF_8),
                TestSigner.keysOf(expired, good), "x", NOW)).isInstanceOf(KosaException.class)
                .hasMessageContaining("does not match the text").hasMessageNotContaining("expired");
    }

    @Test
    void theShippedKeysExpireWhenDocsImageMdSays() {
        // primary keys and signing subkeys expire together; a check against "now" must not refuse them before then
        Map<String, String> expiries = ArchiveKeys.debian().expiries();
        Map<String, String> days = new java.util.TreeMap<>();
        expiries.forEach((f, e) -> days.put(f, e.length() >= 10 ? e.substring(0, 10) : e));
        assertThat(days).containsAllEntriesOf(Map.of(
                "B8B80B5B623EAB6AD8775C45B7C5D7D6350947F8", "2031-01-19",
                "4CB50190207B4758A3F73A796ED0E7B82643E131", "2031-01-19",
                "05AB90340C0C5E797F44A8C8254CF3B5AEC0A8F0", "2031-01-19",
                "B0CAB9266E8C3929798B3EEEBDE6D2B9216EC7A8", "2031-01-19",
                "4D64FEC119C2029067D6E791F8D2585B8783D481", "2031-01-21",
                "04B54C3CDCA79751B16BC6B5225629DF75B188BD", "2035-03-28",
                "B8E5F13176D2A7A75220028078DBA3BC47EF2265", "2035-03-28",
                "5E04A1E3223A19A20706E20F9904613D4CCE68C6", "2035-03-28",
                "89C87ACEA5DD6B8E6A7068808E9F831205B4BA95", "2035-03-28",
                "41587F7DB8C774BCCF131416762F67A0B2C39DE4", "2033-03-22"));
    }

    @Test
    void theShippedKeysAreDebiansWithTheFingerprintsDocsImageMdLists() {
        assertThat(ArchiveKeys.debian().fingerprints()).containsExactlyInAnyOrder(
                "B8B80B5B623EAB6AD8775C45B7C5D7D6350947F8", "05AB90340C0C5E797F44A8C8254CF3B5AEC0A8F0",
                "4D64FEC119C2029067D6E791F8D2585B8783D481", "04B54C3CDCA79751B16BC6B5225629DF75B188BD",
                "5E04A1E3223A19A20706E20F9904613D4CCE68C6", "41587F7DB8C774BCCF131416762F67A0B2C39DE4");
    }
}
