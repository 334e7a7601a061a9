package dev.kosa8.image;

import dev.kosa8.image.debian.ArchiveHttp;
import dev.kosa8.image.debian.ArchiveKeys;
import dev.kosa8.image.debian.DebCache;
import dev.kosa8.image.debian.DebianArchive;
import dev.kosa8.image.debian.DownloadProgress;
import dev.kosa8.image.debian.LockFile;
import dev.kosa8.image.debian.Locked;
import dev.kosa8.image.debian.Mirror;
import dev.kosa8.image.debian.ProxySettings;
import dev.kosa8.image.debian.ReleaseFile;
import dev.kosa8.image.debian.Source;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The archive client against the real Debian mirror (the network, so tagged
 * long: {@code ./run-tests long}, or {@code -Dkosa8.it.excludedGroups=}): the
 * bookworm InRelease verifies against the keys kosa8 ships, and the image's
 * include list resolves, with minbase, to a closure whose every {@code .deb}
 * downloads and checks.
 */
@Tag("long")
class DebianMirrorTest {
    @TempDir
    Path tmp;

    @Test
    void bookwormVerifiesAgainstTheShippedKeysAndTheImagesPackagesResolveAndDownload() throws Exception {
        Map<String, String> env = System.getenv();
        DebianArchive archive = new DebianArchive(new ArchiveHttp(ProxySettings.fromEnvironment()),
                ArchiveKeys.debian(), new DebCache(tmp.resolve("cache")), Instant::now);
        List<Source> sources = Source.standard(Recipe.STANDARD.suite(), env);

        long t0 = System.nanoTime();
        ReleaseFile release = archive.release(sources.getFirst());
        assertThat(release.codename()).isEqualTo("bookworm");
        assertThat(release.sha256()).containsKey("main/binary-amd64/Packages.xz");
        long t1 = System.nanoTime();

        DebianArchive.Indexed indexed = archive.index(sources, "amd64", DownloadProgress.silent());
        long t2 = System.nanoTime();
        LockFile lock = DebianArchive.resolve(indexed, Recipe.STANDARD.includes(), true, Recipe.STANDARD.suite());
        long t3 = System.nanoTime();
        List<String> names = lock.packages().stream().map(Locked::name).toList();
        assertThat(names).contains("bash", "coreutils", "python3", "tini", "curl", "git", "libc6", "dpkg", "apt",
                "base-files", "ca-certificates");
        assertThat(names).doesNotHaveDuplicates();

        DebianArchive.Indexed arm = archive.index(sources, "arm64", DownloadProgress.silent());
        LockFile armLock = DebianArchive.resolve(arm, Recipe.STANDARD.includes(), true, Recipe.STANDARD.suite());
        assertThat(armLock.packages()).allMatch(p -> p.architecture().equals("arm64")
                || p.architecture().equals("all"));

        long t4 = System.nanoTime();
        List<Path> debs = archive.download(lock, Map.of("debian", Mirror.main(env), "debian-security",
                Mirror.security(env)), DownloadProgress.silent());
        long t5 = System.nanoTime();
        long bytes = 0;
        for (Path p : debs) {
            bytes += Files.size(p);
        }
        List<Path> again = archive.download(lock, Map.of("debian", Mirror.main(env), "debian-security",
                Mirror.security(env)), DownloadProgress.silent());
        long t6 = System.nanoTime();
        assertThat(again).isEqualTo(debs);
        lock.write(tmp.resolve("packages.lock"));
        if (System.getProperty("kosa8.test.lockOut") != null) { // to compare with what mmdebstrap installs
            lock.write(Path.of(System.getProperty("kosa8.test.lockOut")));
        }
        assertThat(LockFile.read(tmp.resolve("packages.lock"))).isEqualTo(lock);
        System.out.printf("DebianMirrorTest: InRelease %.2f s; index of %d packages (3 suites, amd64) %.2f s; "
                        + "closure %d packages (arm64: %d) in %.2f s; download %d .debs, %.1f MB in %.2f s; "
                        + "again from the cache %.2f s; security: %d packages%n",
                (t1 - t0) / 1e9, indexed.index().size(), (t2 - t1) / 1e9, lock.packages().size(),
                armLock.packages().size(), (t3 - t2) / 1e9, debs.size(), bytes / 1e6, (t5 - t4) / 1e9,
                (t6 - t5) / 1e9, lock.packages().stream().filter(p -> p.archive().equals("debian-security")).count());
    }
}
