package dev.kosa8.image;

import dev.kosa8.host.KosaException;
import dev.kosa8.image.debian.ArchiveHttp;
import dev.kosa8.image.debian.DebCache;
import dev.kosa8.image.debian.DebianArchive;
import dev.kosa8.image.debian.FixtureArchive;
import dev.kosa8.image.debian.LockFile;
import dev.kosa8.image.debian.Locked;
import dev.kosa8.image.debian.ProxySettings;
import dev.kosa8.image.debian.Source;
import dev.kosa8.image.debian.TestSigner;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The image builder's {@code .deb}s by file name ({@code cache/debs/}): a
 * file whose bytes changed on disk after it was checked (overwritten,
 * truncated) is never handed to the unpacker; it is deleted, the user told,
 * and it is downloaded and checked against the signed index again.
 */
class DebianPackagesCacheTest {
    static final TestSigner KEY = TestSigner.ed25519();
    static final DebPackage BUSYBOX = new DebPackage("busybox-static", "1.35.0-4", "amd64");

    @TempDir
    Path tmp;
    FixtureArchive fx;
    List<String> notes = new CopyOnWriteArrayList<>();
    DebianPackages packages;
    byte[] real;

    @BeforeEach
    void archive() throws Exception {
        fx = new FixtureArchive(KEY);
        fx.publish("debian", "bookworm", fx.deb("debian", "busybox-static", "1.35.0-4", 300_000), "");
        real = fx.files.get("/debian/pool/main/b/busybox-static/busybox-static_1.35.0-4_amd64.deb");
        DebianArchive archive = new DebianArchive(new ArchiveHttp(new ProxySettings(Map.of())), KEY.keys(),
                new DebCache(tmp.resolve("debian")), () -> Instant.parse("2026-12-05T12:00:00Z"));
        packages = new DebianPackages(tmp.resolve("debs"), tmp.resolve("build.log"), false,
                () -> new ArchivePackages(archive, List.of(new Source("debian", fx.mirror("debian"), "bookworm",
                        "main")), "amd64", line -> {
                }, notes::add), notes::add);
    }

    @AfterEach
    void stop() {
        fx.close();
    }

    @Test
    void anIntactCachedDebIsUsedWithoutTheNetwork() throws Exception {
        Path deb = packages.download(BUSYBOX);
        assertThat(Files.readAllBytes(deb)).isEqualTo(real);
        assertThat(deb.resolveSibling(deb.getFileName() + ".sha256")).hasContent(FixtureArchive.sha256(real));
        int before = fx.requests.get();
        assertThat(packages.download(BUSYBOX)).isEqualTo(deb);
        assertThat(fx.requests.get()).isEqualTo(before);
        assertThat(notes).isEmpty();
    }

    @Test
    void aCachedDebOverwrittenOnDiskIsDeletedAndDownloadedAgain() throws Exception {
        Path deb = packages.download(BUSYBOX);
        byte[] evil = real.clone();
        evil[1000] ^= 1; // same size, one bit changed
        Files.write(deb, evil);
        assertThat(packages.download(BUSYBOX)).isEqualTo(deb);
        assertThat(Files.readAllBytes(deb)).isEqualTo(real); // from the archive client's checked copy
        assertThat(notes).anySatisfy(n -> assertThat(n).contains("the cached busybox-static_1.35.0-4_amd64.deb")
                .contains("changed on disk since it was checked").contains("deleted, downloading it again"));
    }

    @Test
    void theLockEntryADebWasCheckedAgainstIsKeptAndTrustedOnlyWhileItIsThatFilesHash() throws Exception {
        Path deb = packages.download(BUSYBOX);
        Locked l = packages.locked(BUSYBOX).orElseThrow();
        assertThat(l.sha256()).isEqualTo(FixtureArchive.sha256(real));
        assertThat(l.filename()).isEqualTo("pool/main/b/busybox-static/busybox-static_1.35.0-4_amd64.deb");
        assertThat(l.archive()).isEqualTo("debian");
        Files.writeString(deb.resolveSibling(deb.getFileName() + ".sha256"), "00".repeat(32) + "\n");
        assertThat(packages.locked(BUSYBOX)).isEmpty(); // a record of another file: not this one's entry
        assertThat(packages.locked(new DebPackage("busybox-static", "1.35.0-5", "amd64"))).isEmpty();
    }

    @Test
    void aPinnedPackageIsFetchedByItsEntryEvenWhenTheIndexHasMovedOnAndACachedOtherFileIsNotTaken()
            throws Exception {
        Path deb = packages.download(BUSYBOX);
        Locked l = packages.locked(BUSYBOX).orElseThrow();
        // the suite moves on: its index now names only a newer busybox; the pinned one is still in the pool
        fx.publish("debian", "bookworm", fx.deb("debian", "busybox-static", "1.35.0-5", 300_000), "");
        DebianArchive archive = new DebianArchive(new ArchiveHttp(new ProxySettings(Map.of())), KEY.keys(),
                new DebCache(tmp.resolve("debian-2")), () -> Instant.parse("2026-12-06T12:00:00Z"));
        DebianPackages unpinned = packagesIn(archive, tmp.resolve("debs-2"));
        assertThatThrownBy(() -> unpinned.download(BUSYBOX)).isInstanceOf(KosaException.class)
                .hasMessageContaining("no longer has busybox-static 1.35.0-4"); // the index decides
        DebianPackages fresh = packagesIn(archive, tmp.resolve("debs"));
        Files.write(deb, new byte[300_000]); // a file of that name, checked as something else
        Files.writeString(deb.resolveSibling(deb.getFileName() + ".sha256"),
                FixtureArchive.sha256(new byte[300_000]) + "\n");
        fresh.pin(l);
        assertThat(Files.readAllBytes(fresh.download(BUSYBOX))).isEqualTo(real);
        assertThat(notes).anySatisfy(n -> assertThat(n).contains("is not the file the lock names"));
        assertThat(fresh.locked(BUSYBOX)).contains(l);
    }

    @Test
    void aLockIsBuiltOnlyAsFarAsTheSignedIndicesListItsEntriesExactly() throws Exception {
        packages.download(BUSYBOX);
        Locked signed = packages.locked(BUSYBOX).orElseThrow();
        ArchivePackages archive = packages.archiveClient().orElseThrow();
        archive.verify(new LockFile(List.of(), List.of(signed)), "the lock"); // listed as it is: passes
        for (Locked edited : List.of(
                new Locked(signed.name(), signed.version(), "amd64", "00".repeat(32), signed.size(), "debian",
                        signed.filename()),
                new Locked(signed.name(), "1.35.0-3", "amd64", signed.sha256(), signed.size(), "debian",
                        signed.filename()),
                new Locked(signed.name(), signed.version(), "amd64", signed.sha256(), signed.size(),
                        "debian-security", signed.filename()))) {
            assertThatThrownBy(() -> archive.verify(new LockFile(List.of(), List.of(signed, edited)), "the lock"))
                    .isInstanceOf(KosaException.class).hasMessageContaining("1 package(s) of the lock are not in")
                    .satisfies(e -> assertThat(((KosaException) e).suggestion()).contains("kosa8 image build"));
        }
    }

    private DebianPackages packagesIn(DebianArchive archive, Path debs) {
        return new DebianPackages(debs, tmp.resolve("build.log"), false, () -> new ArchivePackages(archive,
                List.of(new Source("debian", fx.mirror("debian"), "bookworm", "main")), "amd64", line -> {
                }, notes::add), notes::add);
    }

    @Test
    void aTruncatedCachedDebIsDeletedAndDownloadedAgain() throws Exception {
        Path deb = packages.download(BUSYBOX);
        Files.write(deb, Arrays.copyOf(real, 1000));
        assertThat(Files.readAllBytes(packages.download(BUSYBOX))).isEqualTo(real);
        assertThat(notes).anySatisfy(n -> assertThat(n).contains("1000 bytes"));
    }

    @Test
    void aCachedDebWithNoRecordOfItsCheckIsCheckedAgain() throws Exception {
        Path deb = tmp.resolve("debs").resolve(BUSYBOX.fileName());
        Files.createDirectories(deb.getParent());
        Files.write(deb, new byte[300_000]); // as an older kosa8 (or anyone) left it, by name only
        assertThat(Files.readAllBytes(packages.download(BUSYBOX))).isEqualTo(real);
        assertThat(notes).anySatisfy(n -> assertThat(n).contains("has no record of the SHA-256"));
    }

    @Test
    void whenTheMirrorThenServesBadBytesNothingIsLeftUnderTheName() throws Exception {
        Path deb = packages.download(BUSYBOX);
        Files.write(deb, new byte[10]);
        // the archive client's own cache is damaged too, and the mirror serves other bytes
        try (var s = Files.walk(tmp.resolve("debian/sha256"))) {
            for (Path p : s.filter(Files::isRegularFile).toList()) {
                Files.write(p, new byte[1]);
            }
        }
        fx.files.put("/debian/pool/main/b/busybox-static/busybox-static_1.35.0-4_amd64.deb", new byte[real.length]);
        assertThatThrownBy(() -> packages.download(BUSYBOX)).isInstanceOf(KosaException.class)
                .hasMessageContaining("refused unverified data");
        assertThat(deb).doesNotExist();
        assertThat(notes).anySatisfy(n -> assertThat(n).contains("the cached busybox-static_1.35.0-4_amd64.deb was "
                + "damaged"));
    }

    /** The {@code .fetch-*.deb} temporary files left in the cache folder. */
    List<Path> fetchTemporaries() throws Exception {
        try (var s = Files.list(tmp.resolve("debs"))) {
            return s.filter(p -> p.getFileName().toString().startsWith(".fetch-")).toList();
        }
    }

    @Test
    void whenRecordingTheCopyFailsNoTemporaryFileIsLeft() throws Exception {
        Path debs = tmp.resolve("debs");
        Path sum = debs.resolve(BUSYBOX.fileName() + ".sha256");
        // once the cache is cleared, something puts a folder where the hash record goes: writing it fails
        DebianPackages failing = new DebianPackages(debs, tmp.resolve("build.log"), false, () -> {
            try {
                Files.createDirectories(sum.resolve("in-the-way"));
            } catch (java.io.IOException e) {
                throw new java.io.UncheckedIOException(e);
            }
            DebianArchive archive = new DebianArchive(new ArchiveHttp(new ProxySettings(Map.of())), KEY.keys(),
                    new DebCache(tmp.resolve("debian")), () -> Instant.parse("2026-12-05T12:00:00Z"));
            return new ArchivePackages(archive, List.of(new Source("debian", fx.mirror("debian"), "bookworm",
                    "main")), "amd64", line -> {
            }, notes::add);
        }, notes::add);
        assertThatThrownBy(() -> failing.download(BUSYBOX)).isInstanceOf(KosaException.class)
                .hasMessageContaining("cannot write " + debs.resolve(BUSYBOX.fileName()));
        assertThat(fetchTemporaries()).isEmpty();
        assertThat(debs.resolve(BUSYBOX.fileName())).doesNotExist();
    }

    @Test
    void whenTheCopyOrItsHashFailsNoTemporaryFileIsLeft() throws Exception {
        Path debs = tmp.resolve("debs");
        Files.createDirectories(debs);
        Path deb = debs.resolve(BUSYBOX.fileName());
        Path sum = debs.resolve(BUSYBOX.fileName() + ".sha256");
        String hash = FixtureArchive.sha256(real);
        // the source gone (the copy fails), a folder (the copy is an empty folder, its hash fails), other bytes
        Path other = tmp.resolve("other.deb");
        Files.write(other, new byte[]{1, 2, 3});
        Files.createDirectories(tmp.resolve("a-folder"));
        for (Path from : List.of(tmp.resolve("missing.deb"), tmp.resolve("a-folder"), other)) {
            assertThatThrownBy(() -> DebianPackages.copyChecked(from, hash, deb, sum))
                    .isInstanceOf(KosaException.class);
            assertThat(fetchTemporaries()).as("after copying " + from).isEmpty();
            assertThat(deb).doesNotExist();
            assertThat(sum).doesNotExist();
        }
        Path good = tmp.resolve("good.deb");
        Files.write(good, real);
        DebianPackages.copyChecked(good, hash, deb, sum);
        assertThat(deb).hasBinaryContent(real);
        assertThat(fetchTemporaries()).isEmpty();
    }
}
