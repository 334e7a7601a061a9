package dev.kosa8.image.debian;

import dev.kosa8.host.KosaException;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.ByteArrayInputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The whole chain, InRelease to .deb, against an archive on loopback signed by a key made here. */
class DebianArchiveTest {
    static final TestSigner KEY = TestSigner.ed25519();
    static final Instant NOW = Instant.parse("2026-12-05T12:00:00Z");

    @TempDir
    Path tmp;
    FixtureArchive fx;
    DebianArchive archive;

    @BeforeEach
    void archive() throws Exception {
        fx = new FixtureArchive(KEY);
        fx.publish("debian", "bookworm", fx.deb("debian", "base-files", "12.4", 3000, "Essential: yes",
                "Priority: required") + fx.deb("debian", "bash", "5.2-2", 700_000, "Depends: base-files, libc6")
                + fx.deb("debian", "libc6", "2.36-9", 5000) + fx.deb("debian", "unused", "1", 10), "");
        fx.publish("debian-security", "bookworm-security", fx.deb("debian-security", "libc6", "2.36-9+deb12u10",
                6000), "Valid-Until: Sat, 12 Dec 2026 10:16:37 UTC\n");
        archive = new DebianArchive(new ArchiveHttp(new ProxySettings(Map.of())), KEY.keys(),
                new DebCache(tmp.resolve("cache")), () -> NOW);
    }

    @AfterEach
    void stop() {
        fx.close();
    }

    Map<String, Mirror> mirrors() {
        return Map.of("debian", fx.mirror("debian"), "debian-security", fx.mirror("debian-security"));
    }

    LockFile lock() {
        return DebianArchive.resolve(archive.index(fx.sources("bookworm"), "amd64", DownloadProgress.silent()),
                List.of("bash"), true, "bookworm");
    }

    @Test
    void resolvesDownloadsAndChecksEveryPackageAndALockFetchesTheSameAgain() throws Exception {
        LockFile lock = lock();
        assertThat(lock.packages()).extracting(Locked::name).containsExactly("base-files", "bash", "libc6");
        Locked libc = lock.packages().get(2);
        assertThat(libc.version()).isEqualTo("2.36-9+deb12u10"); // the security suite's is newer
        assertThat(libc.archive()).isEqualTo("debian-security");

        List<long[]> progress = new ArrayList<>();
        List<Path> debs = archive.download(lock, mirrors(), (what, done, total) -> progress.add(new long[]{done,
                total}));
        assertThat(debs).hasSize(3);
        assertThat(Files.readAllBytes(debs.get(1))).isEqualTo(fx.files.get("/debian/" + lock.packages().get(1)
                .filename()));
        assertThat(progress).anyMatch(p -> p[1] == 700_000 && p[0] < 700_000) // bash's 700 KB reported on the way
                .anyMatch(p -> p[0] == 700_000 && p[1] == 700_000);

        lock.write(tmp.resolve("packages.lock"));
        LockFile again = LockFile.read(tmp.resolve("packages.lock"));
        assertThat(again).isEqualTo(lock);
        assertThat(again.text()).startsWith(LockFile.HEADER + "\n# suite bookworm, minbase, includes bash\n");
        int before = fx.requests.get();
        assertThat(archive.download(again, mirrors(), DownloadProgress.silent())).isEqualTo(debs);
        assertThat(fx.requests.get()).as("all from the cache, no index needed").isEqualTo(before);

        // a damaged cache entry (overwritten, truncated) is fetched again, not used, and the user told
        for (byte[] damaged : List.of(new byte[3000], new byte[10])) {
            Files.write(debs.get(0), damaged);
            List<String> notes = new ArrayList<>();
            DownloadProgress noting = new DownloadProgress() {
                @Override
                public void downloaded(String what, long done, long total) {
                }

                @Override
                public void note(String line) {
                    notes.add(line);
                }
            };
            int was = fx.requests.get();
            assertThat(archive.download(again, mirrors(), noting)).isEqualTo(debs);
            assertThat(fx.requests.get()).isEqualTo(was + 1);
            assertThat(DebCache.hash(debs.get(0))).isEqualTo(lock.packages().get(0).sha256());
            assertThat(notes).singleElement().asString().contains("the cached base-files_12.4_amd64.deb was damaged ("
                    + damaged.length + " bytes").contains("downloading it again");
        }
    }

    @Test
    void aTamperedInReleaseIsRefused() {
        String path = "/debian/dists/bookworm/InRelease";
        fx.files.put(path, new String(fx.files.get(path), StandardCharsets.UTF_8).replace("Origin: Debian",
                "Origin: Evil").getBytes(StandardCharsets.UTF_8));
        assertThatThrownBy(this::lock).isInstanceOf(KosaException.class)
                .hasMessageContaining("refused unverified data").hasMessageContaining("does not match the text");
    }

    @Test
    void anInReleaseSignedByAnotherKeyIsRefused() throws Exception {
        try (FixtureArchive other = new FixtureArchive(TestSigner.ed25519())) {
            other.publish("debian", "bookworm", other.deb("debian", "bash", "5", 10), "");
            fx.files.put("/debian/dists/bookworm/InRelease", other.files.get("/debian/dists/bookworm/InRelease"));
        }
        assertThatThrownBy(this::lock).isInstanceOf(KosaException.class)
                .hasMessageContaining("not signed by any Debian archive key kosa8 ships");
    }

    @Test
    void anotherSuitesSignedReleaseUnderThisNameIsRefused() {
        fx.files.put("/debian/dists/bookworm/InRelease", fx.files.get(
                "/debian-security/dists/bookworm-security/InRelease"));
        assertThatThrownBy(this::lock).isInstanceOf(KosaException.class)
                .hasMessageContaining("asked for the suite bookworm but the signed Release is bookworm-security");
    }

    @Test
    void anExpiredReleaseIsRefused() {
        DebianArchive later = new DebianArchive(new ArchiveHttp(new ProxySettings(Map.of())), KEY.keys(),
                new DebCache(tmp.resolve("cache")), () -> Instant.parse("2026-12-13T00:00:00Z"));
        assertThatThrownBy(() -> later.index(fx.sources("bookworm"), "amd64", DownloadProgress.silent()))
                .isInstanceOf(KosaException.class).hasMessageContaining("expired at 2026-12-12T10:16:37Z");
        // up to its Valid-Until it is accepted
        DebianArchive before = new DebianArchive(new ArchiveHttp(new ProxySettings(Map.of())), KEY.keys(),
                new DebCache(tmp.resolve("cache")), () -> Instant.parse("2026-12-12T10:16:37Z"));
        assertThat(before.release(fx.sources("bookworm").get(1)).validUntil())
                .contains(Instant.parse("2026-12-12T10:16:37Z"));
    }

    @Test
    void anOlderReleaseThanOneAcceptedBeforeIsRefused() {
        String path = "/debian/dists/bookworm/InRelease";
        byte[] old = fx.files.get(path);
        Source bookworm = fx.sources("bookworm").getFirst();
        archive.release(bookworm);
        fx.publish("debian", "bookworm", fx.deb("debian", "bash", "5.2-3", 10), "", "Sat, 05 Dec 2026 09:00:00 UTC");
        archive.release(bookworm);
        archive.release(bookworm); // the same one again is fine
        // a replay of the July file, validly signed and not expired, now refused: kept across runs in the cache
        fx.files.put(path, old);
        DebianArchive nextRun = new DebianArchive(new ArchiveHttp(new ProxySettings(Map.of())), KEY.keys(),
                new DebCache(tmp.resolve("cache")), () -> NOW);
        assertThatThrownBy(() -> nextRun.index(fx.sources("bookworm"), "amd64", DownloadProgress.silent()))
                .isInstanceOf(KosaException.class)
                .hasMessageContaining("refused an old Release from the Debian archive: bookworm's InRelease from "
                        + fx.mirror("debian").base() + " is dated 2026-07-11T10:16:37Z, older than the one of "
                        + "2026-12-05T09:00:00Z kosa8 already accepted from it")
                .satisfies(e -> assertThat(((KosaException) e).suggestion()).contains("use another mirror")
                        .contains("delete " + tmp.resolve("cache/releases/bookworm-")));
        // the memory is per mirror and suite: the security suite, and a fresh cache, are not held to it
        assertThat(nextRun.release(fx.sources("bookworm").get(1)).codename()).isEqualTo("bookworm-security");
        DebianArchive freshCache = new DebianArchive(new ArchiveHttp(new ProxySettings(Map.of())), KEY.keys(),
                new DebCache(tmp.resolve("other-cache")), () -> NOW);
        assertThat(freshCache.release(bookworm).date()).isEqualTo(Instant.parse("2026-07-11T10:16:37Z"));
    }

    @Test
    void aPackagesFileWhoseHashIsNotTheSignedOneIsRefusedAndNotKept() throws Exception {
        String path = "/debian/dists/bookworm/main/binary-amd64/Packages.xz";
        byte[] evil = FixtureArchive.xz(fx.deb("debian", "bash", "9", 10).getBytes(StandardCharsets.UTF_8));
        fx.files.put(path, Arrays.copyOf(evil, fx.files.get(path).length)); // same size, other bytes
        assertThatThrownBy(this::lock).isInstanceOf(KosaException.class)
                .hasMessageContaining("bookworm's main/binary-amd64/Packages.xz has the SHA-256")
                .hasMessageContaining("but its signed index says");
        assertThat(cachedFiles()).isEmpty();
    }

    @Test
    void aDebWhoseHashIsNotTheSignedOneIsRefusedAndNotKept() throws Exception {
        LockFile lock = lock();
        Locked bash = lock.packages().get(1);
        fx.files.put("/debian/" + bash.filename(), new byte[(int) bash.size()]);
        assertThatThrownBy(() -> archive.download(lock, mirrors(), DownloadProgress.silent()))
                .isInstanceOf(KosaException.class).hasMessageContaining("bash_5.2-2_amd64.deb has the SHA-256");
        assertThat(cachedFiles()).noneMatch(p -> p.getFileName().toString().equals(bash.sha256())
                || p.getFileName().toString().endsWith(".partial"));
    }

    @Test
    void aTruncatedOrOverlongDownloadIsRefusedAndNotKept() throws Exception {
        LockFile lock = lock();
        Locked bash = lock.packages().get(1);
        byte[] real = fx.files.get("/debian/" + bash.filename());
        fx.files.put("/debian/" + bash.filename(), Arrays.copyOf(real, real.length - 1));
        assertThatThrownBy(() -> archive.download(lock, mirrors(), DownloadProgress.silent()))
                .isInstanceOf(KosaException.class).hasMessageContaining("was cut short: 699999 of 700000 bytes");
        fx.files.put("/debian/" + bash.filename(), Arrays.copyOf(real, real.length + 1));
        assertThatThrownBy(() -> archive.download(lock, mirrors(), DownloadProgress.silent()))
                .isInstanceOf(KosaException.class).hasMessageContaining("is longer than the 700000 bytes");
        assertThat(cachedFiles()).noneMatch(p -> p.getFileName().toString().equals(bash.sha256())
                || p.getFileName().toString().endsWith(".partial"));
    }

    @Test
    void anInReleaseOverTheBoundIsRefused() {
        fx.files.put("/debian/dists/bookworm/InRelease", new byte[(int) DebianArchive.MAX_INRELEASE + 1]);
        assertThatThrownBy(this::lock).isInstanceOf(KosaException.class)
                .hasMessageContaining("larger than " + DebianArchive.MAX_INRELEASE);
    }

    @Test
    void decompressionIsBounded() throws Exception {
        assertThat(DebianArchive.readBounded(new ByteArrayInputStream(new byte[100]), 100, "x")).hasSize(100);
        assertThatThrownBy(() -> DebianArchive.readBounded(new ByteArrayInputStream(new byte[101]), 100, "x"))
                .isInstanceOf(KosaException.class).hasMessageContaining("more than 100 bytes");
    }

    @Test
    void aMissingSuiteSaysSo() {
        assertThatThrownBy(() -> archive.release(new Source("debian", fx.mirror("debian"), "sid", "main")))
                .isInstanceOf(KosaException.class).hasMessageContaining("HTTP 404");
    }

    @Test
    void goesThroughTheProxyTheEnvironmentNames() {
        // the mirror's name does not resolve: only the proxy (the fixture server, which serves absolute-URI
        // requests by their path) can answer
        String proxy = "http://127.0.0.1:" + fx.server.getAddress().getPort();
        DebianArchive viaProxy = new DebianArchive(new ArchiveHttp(new ProxySettings(Map.of("http_proxy", proxy))),
                KEY.keys(), new DebCache(tmp.resolve("cache")), () -> NOW);
        Source s = new Source("debian", new Mirror(java.net.URI.create("http://mirror.invalid/debian")),
                "bookworm", "main");
        assertThat(viaProxy.release(s).codename()).isEqualTo("bookworm");
        DebianArchive bypassed = new DebianArchive(new ArchiveHttp(new ProxySettings(Map.of("http_proxy", proxy,
                "no_proxy", ".invalid"))), KEY.keys(), new DebCache(tmp.resolve("cache")), () -> NOW);
        assertThatThrownBy(() -> bypassed.release(s)).isInstanceOf(KosaException.class)
                .hasMessageContaining("could not fetch");
    }

    /** The downloaded files in the cache (not the Release dates it keeps). */
    private List<Path> cachedFiles() throws Exception {
        Path dir = tmp.resolve("cache/sha256");
        if (!Files.exists(dir)) {
            return List.of();
        }
        try (var s = Files.walk(dir)) {
            return s.filter(Files::isRegularFile).toList();
        }
    }
}
