package dev.kosa8.image.debian;

import dev.kosa8.host.KosaException;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;

import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Everything the archive (or a proxy, or the cache) sends is read by these
 * parsers; arbitrary input is either read or refused with a
 * {@link KosaException}, never another exception.
 */
class ArchiveParsersFuzzTest {
    static final TestSigner KEY = TestSigner.ed25519();

    @Property(tries = 400)
    void stanzasAndPackagesAreReadOrRefusedCleanly(@ForAll("controlText") String text) {
        clean(() -> PackageIndex.parse(text, "Packages", "amd64"));
        clean(() -> Stanzas.parse(text, "x").forEach(s -> PackageEntry.of(s, "x")));
    }

    @Property(tries = 300)
    void releaseFilesAreReadOrRefusedCleanly(@ForAll("controlText") String text) {
        clean(() -> ReleaseFile.parse(text).check("bookworm", Instant.now()));
    }

    @Property(tries = 300)
    void clearSignedMessagesAreVerifiedOrRefusedCleanly(@ForAll("controlText") String text,
                                                         @ForAll("armourNoise") String noise) {
        clean(() -> ClearSigned.verify(text.getBytes(StandardCharsets.UTF_8), KEY.keys(), "x"));
        clean(() -> ClearSigned.verify(TestSigner.message(text, noise), KEY.keys(), "x"));
        // a real signature, then a byte changed anywhere in the message
        byte[] msg = KEY.clearSign("Codename: bookworm\n" + text);
        if (msg.length > 0) {
            int at = Math.floorMod(text.hashCode(), msg.length);
            msg[at] ^= 0x21;
            clean(() -> ClearSigned.verify(msg, KEY.keys(), "x"));
        }
    }

    @Property(tries = 300)
    void relationsVersionsAndLocksAreReadOrRefusedCleanly(@ForAll("controlText") String text) {
        clean(() -> Relation.parseField(text, "Depends"));
        clean(() -> DebianVersion.parse(text));
        clean(() -> LockFile.parse(LockFile.HEADER + "\n" + text, "lock"));
        clean(() -> LockFile.parse(text, "lock"));
        clean(() -> LockFile.parse(LockFile.HEADER_2 + "\n" + text, "lock"));
        clean(() -> LockFile.parse(LockFile.HEADER_2 + "\n@kernel " + text, "lock"));
        clean(() -> LockFile.parse(LockFile.HEADER_2 + "\n@" + text, "lock"));
    }

    /** The cache's record of the last Release date, whatever a crash or a hand left in it, never breaks a build. */
    @Property(tries = 200)
    void aReleaseDateRecordIsReadOrIgnoredCleanly(@ForAll("controlText") String text) throws Exception {
        Path dir = Files.createTempDirectory("release-dates-");
        try {
            ReleaseDates dates = new ReleaseDates(dir);
            Source s = new Source("debian", new Mirror(URI.create("http://mirror.example/debian")), "bookworm",
                    "main");
            Files.writeString(dates.file(s), text);
            ReleaseFile r = ReleaseFile.parse("Codename: bookworm\nDate: Sat, 11 Jul 2026 10:16:37 UTC\nSHA256:\n");
            clean(() -> dates.accept(s, r));
            // whatever was there, a newer Release is accepted and recorded, and an older one then refused
            ReleaseFile newer = ReleaseFile.parse("Codename: bookworm\nDate: Sat, 11 Jul 2099 10:16:37 UTC\nSHA256:\n");
            dates.accept(s, newer);
            assertThat(Files.readString(dates.file(s))).startsWith("Date: 2099-07-11T10:16:37Z\n");
            assertThatThrownBy(() -> dates.accept(s, r)).isInstanceOf(KosaException.class);
        } finally {
            try (var files = Files.list(dir)) {
                for (Path f : files.toList()) {
                    Files.delete(f);
                }
            }
            Files.delete(dir);
        }
    }

    @Provide
    Arbitrary<String> controlText() {
        Arbitrary<String> token = Arbitraries.oneOf(
                Arbitraries.of("Package: ", "Version: ", "Architecture: amd64", "Filename: pool/main/a/a.deb",
                        "Size: ", "SHA256: ", "Depends: ", "Provides: ", "Pre-Depends: ", "\n", "\n\n", " ", ":",
                        ", ", " | ", "(>= ", "(= ", "<< ", ")", "1:", "-", "~", "#", "Date: Sat, 11 Jul 2026 "
                                + "10:16:37 UTC", "Codename: bookworm", "Valid-Until: ", "SHA256:\n ",
                        "-----BEGIN PGP SIGNED MESSAGE-----\n", "-----BEGIN PGP SIGNATURE-----\n",
                        "-----END PGP SIGNATURE-----\n", "- ", "Hash: SHA512\n", "ab".repeat(32), "\t", "\r\n"),
                Arbitraries.strings().ofMaxLength(12),
                Arbitraries.strings().withChars("abc019.+~:-()|,<>= \n").ofMaxLength(20));
        return token.list().ofMaxSize(40).map(l -> String.join("", l));
    }

    @Provide
    Arbitrary<String> armourNoise() {
        return Arbitraries.oneOf(
                Arbitraries.strings().withChars("ABCDEFabcdef0123456789+/=\n").ofMaxLength(200)
                        .map(s -> "-----BEGIN PGP SIGNATURE-----\n\n" + s + "\n-----END PGP SIGNATURE-----\n"),
                Arbitraries.strings().ofMaxLength(100)
                        .map(s -> "-----BEGIN PGP SIGNATURE-----\n" + s + "\n-----END PGP SIGNATURE-----\n"));
    }

    private static void clean(Runnable r) {
        try {
            r.run();
        } catch (KosaException expected) {
            assertThat(expected.getMessage()).isNotBlank();
        }
    }
}
