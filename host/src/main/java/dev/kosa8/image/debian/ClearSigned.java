package dev.kosa8.image.debian;

import org.bouncycastle.bcpg.ArmoredInputStream;
import org.bouncycastle.bcpg.HashAlgorithmTags;
import org.bouncycastle.openpgp.PGPException;
import org.bouncycastle.openpgp.PGPPublicKey;
import org.bouncycastle.openpgp.PGPSignature;
import org.bouncycastle.openpgp.PGPSignatureList;
import org.bouncycastle.openpgp.bc.BcPGPObjectFactory;
import org.bouncycastle.openpgp.operator.bc.BcPGPContentVerifierBuilderProvider;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Optional;
import java.util.Set;

/**
 * An OpenPGP clear-signed message (RFC 4880 section 7), the form of
 * Debian's {@code InRelease}: checked against {@link ArchiveKeys}, and only
 * the text that was signed is handed on. The signed text is the lines
 * between the armour headers' blank line and the signature, dash-escaping
 * undone, trailing spaces and tabs dropped, joined with CR LF without a
 * last line ending; that is what is hashed, and its lines are what
 * {@link #verify} returns.
 *
 * <p>Refused: anything before the header or after the signature (apt
 * refuses it too: it could be read by a parser that does not know where the
 * signed part ends), a signature whose type is not a canonical text
 * document's, a SHA-1 or MD5 signature, a signature by a known key that
 * does not verify, and a message with no good signature by a known key.
 * A signature that verifies counts for nothing (as apt counts it) when its
 * signing (sub)key or the primary key it belongs to is revoked, had expired
 * when it signed, or has expired since (however old the signature: an old
 * file replayed), or when the signature is past its own expiration time;
 * the file is then accepted on another good signature, as apt does (Debian
 * signs with several keys: trixie's InRelease also by the bookworm key, which
 * expires first), and refused with those reasons when there is none.
 * Signatures by keys kosa8 does not know are ignored.
 */
public final class ClearSigned {
    private static final String BEGIN = "-----BEGIN PGP SIGNED MESSAGE-----";
    private static final String SIG_BEGIN = "-----BEGIN PGP SIGNATURE-----";
    private static final String SIG_END = "-----END PGP SIGNATURE-----";
    private static final Set<Integer> WEAK_HASHES = Set.of(HashAlgorithmTags.MD5, HashAlgorithmTags.SHA1,
            HashAlgorithmTags.RIPEMD160, HashAlgorithmTags.MD2, HashAlgorithmTags.TIGER_192,
            HashAlgorithmTags.HAVAL_5_160);

    /** What verified: the signed text (lines ending in LF) and the fingerprints of the keys whose signatures checked. */
    public record Verified(String text, List<String> signers) {
    }

    private ClearSigned() {
    }

    /** Verifies {@code message} ({@code what} names it in errors) now, and returns its signed text. */
    public static Verified verify(byte[] message, ArchiveKeys keys, String what) {
        return verify(message, keys, what, Instant.now());
    }

    /** Verifies {@code message} as of {@code now} (keys and signatures expired by then are refused). */
    public static Verified verify(byte[] message, ArchiveKeys keys, String what, Instant now) {
        String all = new String(message, StandardCharsets.UTF_8);
        List<String> lines = all.lines().toList();
        int i = 0;
        if (lines.isEmpty() || !lines.getFirst().stripTrailing().equals(BEGIN)) {
            throw ArchiveErrors.unverified(what + " is not an OpenPGP clear-signed message");
        }
        i++;
        while (i < lines.size() && !lines.get(i).isBlank()) {
            if (!lines.get(i).startsWith("Hash: ")) {
                throw ArchiveErrors.unverified(what + " has an unknown armour header line " + (i + 1));
            }
            i++;
        }
        i++;
        List<String> text = new ArrayList<>();
        while (i < lines.size() && !lines.get(i).stripTrailing().equals(SIG_BEGIN)) {
            String line = lines.get(i);
            if (line.startsWith("- ")) {
                line = line.substring(2);
            } else if (line.startsWith("-")) {
                throw ArchiveErrors.unverified(what + " line " + (i + 1) + " starts with a dash that is not escaped");
            }
            text.add(stripSpaces(line));
            i++;
        }
        if (i >= lines.size()) {
            throw ArchiveErrors.unverified(what + " has no signature");
        }
        int sigStart = i;
        while (i < lines.size() && !lines.get(i).stripTrailing().equals(SIG_END)) {
            i++;
        }
        if (i >= lines.size()) {
            throw ArchiveErrors.unverified(what + " has a signature without its end line");
        }
        for (int k = i + 1; k < lines.size(); k++) {
            if (!lines.get(k).isBlank()) {
                throw ArchiveErrors.unverified(what + " has data after its signature (line " + (k + 1) + ")");
            }
        }
        String armoured = String.join("\n", lines.subList(sigStart, i + 1)) + "\n";
        byte[] signed = String.join("\r\n", text).getBytes(StandardCharsets.UTF_8);
        List<String> signers = check(signatures(armoured, what), signed, keys, what, now);
        StringBuilder out = new StringBuilder();
        text.forEach(l -> out.append(l).append('\n'));
        return new Verified(out.toString(), signers);
    }

    private static List<PGPSignature> signatures(String armoured, String what) {
        List<PGPSignature> out = new ArrayList<>();
        try (ArmoredInputStream in = ArmoredInputStream.builder()
                .build(new ByteArrayInputStream(armoured.getBytes(StandardCharsets.US_ASCII)))) {
            BcPGPObjectFactory f = new BcPGPObjectFactory(in);
            Object o;
            while ((o = f.nextObject()) != null) {
                if (!(o instanceof PGPSignatureList list)) {
                    throw ArchiveErrors.unverified(what + "'s signature block holds a " + o.getClass().getSimpleName()
                            + ", not signatures");
                }
                list.forEach(out::add);
            }
        } catch (IOException | RuntimeException e) {
            if (e instanceof dev.kosa8.host.KosaException k) {
                throw k;
            }
            throw ArchiveErrors.unverified(what + "'s signature block cannot be read: " + e.getMessage());
        }
        if (out.isEmpty()) {
            throw ArchiveErrors.unverified(what + "'s signature block holds no signature");
        }
        return out;
    }

    /** Why a verified signature counts for nothing; {@code rank}: the lower, the clearer, shown first. */
    private record Worthless(int rank, String reason) {
    }

    private static List<String> check(List<PGPSignature> sigs, byte[] signed, ArchiveKeys keys, String what,
                                      Instant now) {
        List<String> good = new ArrayList<>();
        List<Worthless> skipped = new ArrayList<>();
        for (PGPSignature sig : sigs) {
            PGPPublicKey key = keys.key(sig.getKeyID());
            if (key == null) {
                continue;
            }
            String fpr = ArchiveKeys.hex(key.getFingerprint());
            if (sig.getSignatureType() != PGPSignature.CANONICAL_TEXT_DOCUMENT) {
                throw ArchiveErrors.unverified(what + ": the signature by " + fpr + " is not a text signature");
            }
            if (WEAK_HASHES.contains(sig.getHashAlgorithm())) {
                throw ArchiveErrors.unverified(what + ": the signature by " + fpr + " uses a weak hash ("
                        + sig.getHashAlgorithm() + ")");
            }
            // verified first: what a packet that does not verify says about its key or its time is not believed
            boolean ok;
            try {
                sig.init(new BcPGPContentVerifierBuilderProvider(), key);
                sig.update(signed);
                ok = sig.verify();
            } catch (PGPException | RuntimeException e) {
                ok = false;
            }
            if (!ok) {
                throw ArchiveErrors.unverified(what + ": the signature by the key " + fpr
                        + " does not match the text (tampered with, or damaged on the way)");
            }
            Optional<Worthless> why = worthless(sig, key, keys.primary(sig.getKeyID()), fpr, now);
            if (why.isPresent()) {
                skipped.add(why.get());
            } else {
                good.add(fpr);
            }
        }
        if (good.isEmpty() && !skipped.isEmpty()) {
            throw ArchiveErrors.unverified(what + ": " + String.join("; ", skipped.stream()
                    .sorted(Comparator.comparingInt(Worthless::rank)).map(Worthless::reason).toList())
                    + (skipped.size() == 1 ? "" : "; each such signature counts for nothing")
                    + ", and no other signature by a key kosa8 ships is good");
        }
        if (good.isEmpty()) {
            throw ArchiveErrors.unverified(what + " is not signed by any Debian archive key kosa8 ships (signed by "
                    + String.join(", ", sigs.stream().map(s -> Long.toHexString(s.getKeyID()).toUpperCase()).toList())
                    + ")");
        }
        return good;
    }

    /**
     * Why a signature that verified counts for nothing, as apt counts one (its gpgv's REVKEYSIG, EXPKEYSIG,
     * EXPSIG): its key or that key's primary key revoked, expired when it signed or since, or the signature
     * itself expired; the clearest reason when several hold.
     */
    private static Optional<Worthless> worthless(PGPSignature sig, PGPPublicKey key, PGPPublicKey primary,
                                                 String fpr, Instant now) {
        Instant made = sig.getCreationTime().toInstant();
        List<Worthless> why = new ArrayList<>();
        for (PGPPublicKey k : primary == key ? List.of(key) : List.of(key, primary)) {
            String which = "the key " + fpr + (k == key ? "" : " (its primary key "
                    + ArchiveKeys.hex(k.getFingerprint()) + ")");
            if (k.hasRevocation()) {
                why.add(new Worthless(0, "signed by " + which + ", which is revoked"));
            }
            Optional<Instant> expires = ArchiveKeys.expiry(k);
            if (expires.isPresent() && made.isAfter(expires.get())) {
                why.add(new Worthless(1, "signed at " + made + " by " + which + ", which had expired at "
                        + expires.get()));
            } else if (expires.isPresent() && now.isAfter(expires.get())) {
                why.add(new Worthless(2, "signed at " + made + " by " + which + ", which expired at " + expires.get()
                        + "; a signature by an expired key is not trusted, however old (an old file replayed, or "
                        + "kosa8's shipped keys need the archive's newer ones)"));
            }
        }
        long lifetime = sig.getHashedSubPackets() == null ? 0 : sig.getHashedSubPackets().getSignatureExpirationTime();
        if (lifetime > 0 && now.isAfter(made.plusSeconds(lifetime))) {
            why.add(new Worthless(3, "the signature by " + fpr + " expired at " + made.plusSeconds(lifetime)));
        }
        return why.stream().min(Comparator.comparingInt(Worthless::rank));
    }

    private static String stripSpaces(String line) {
        int end = line.length();
        while (end > 0 && (line.charAt(end - 1) == ' ' || line.charAt(end - 1) == '\t')) {
            end--;
        }
        return line.substring(0, end);
    }
}
