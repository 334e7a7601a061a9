package dev.kosa8.image.debian;

import dev.kosa8.host.KosaException;
import org.bouncycastle.openpgp.PGPException;
import org.bouncycastle.openpgp.PGPPublicKey;
import org.bouncycastle.openpgp.PGPPublicKeyRing;
import org.bouncycastle.openpgp.PGPPublicKeyRingCollection;
import org.bouncycastle.openpgp.PGPUtil;
import org.bouncycastle.openpgp.operator.bc.BcKeyFingerprintCalculator;

import java.io.IOException;
import java.io.InputStream;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;

/**
 * The OpenPGP keys an {@code InRelease} may be signed with: the Debian
 * archive's public keys kosa8 ships (from Debian's
 * {@code debian-archive-keyring} 2023.3+deb12u2; their fingerprints are in
 * docs/image.md), or, in tests, keys made on the spot.
 */
public final class ArchiveKeys {
    /** The keyrings shipped as resources beside this class, under {@code keys/}. */
    static final List<String> SHIPPED = List.of(
            "debian-archive-bookworm-automatic.gpg", "debian-archive-bookworm-security-automatic.gpg",
            "debian-archive-bookworm-stable.gpg", "debian-archive-trixie-automatic.gpg",
            "debian-archive-trixie-security-automatic.gpg", "debian-archive-trixie-stable.gpg");

    private final PGPPublicKeyRingCollection rings;

    public ArchiveKeys(PGPPublicKeyRingCollection rings) {
        this.rings = rings;
    }

    /** The Debian archive keys kosa8 ships. */
    public static ArchiveKeys debian() {
        List<PGPPublicKeyRing> all = new ArrayList<>();
        for (String name : SHIPPED) {
            try (InputStream in = ArchiveKeys.class.getResourceAsStream("keys/" + name)) {
                if (in == null) {
                    throw new IOException("missing from the jar");
                }
                new PGPPublicKeyRingCollection(PGPUtil.getDecoderStream(in), new BcKeyFingerprintCalculator())
                        .forEach(all::add);
            } catch (IOException | PGPException e) {
                throw new KosaException(KosaException.Kind.INTERNAL, "the Debian archive key " + name
                        + " shipped with kosa8 cannot be read: " + e.getMessage(), "reinstall kosa8", e);
            }
        }
        return new ArchiveKeys(new PGPPublicKeyRingCollection(all));
    }

    /** The (sub)key with this key id, or null. */
    PGPPublicKey key(long keyId) {
        return rings.getPublicKey(keyId);
    }

    /** The primary key of the ring that holds the (sub)key with this key id (the key itself when primary). */
    PGPPublicKey primary(long keyId) {
        return rings.getPublicKeyRing(keyId).getPublicKey();
    }

    /** When a key stops being valid, from its (latest) self-signature; empty when it never does. */
    static Optional<Instant> expiry(PGPPublicKey key) {
        long valid = key.getValidSeconds();
        return valid > 0 ? Optional.of(key.getCreationTime().toInstant().plusSeconds(valid)) : Optional.empty();
    }

    /** Every key and subkey by fingerprint, with its expiry ("never" when it has none), for the docs' table. */
    Map<String, String> expiries() {
        Map<String, String> out = new LinkedHashMap<>();
        rings.forEach(r -> r.getPublicKeys().forEachRemaining(k -> out.put(hex(k.getFingerprint()),
                expiry(k).map(Instant::toString).orElse("never"))));
        return out;
    }

    /** The fingerprint of every primary key, upper-case hex, as docs/image.md lists them. */
    public List<String> fingerprints() {
        List<String> out = new ArrayList<>();
        rings.forEach(r -> out.add(hex(r.getPublicKey().getFingerprint())));
        return out;
    }

    static String hex(byte[] fingerprint) {
        return HexFormat.of().formatHex(fingerprint).toUpperCase(Locale.ROOT);
    }
}
