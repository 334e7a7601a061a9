package dev.kosa8.it;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kosa8.image.debian.LockFile;
import dev.kosa8.image.debian.Locked;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * {@code kosa8 image lock} names exactly what the image the tests boot holds, checked from inside a real guest;
 * {@code kosa8 image build --from-lock} builds those very packages again.
 */
class ImageLockIT {
    static final Duration T = Duration.ofMinutes(4);

    @BeforeAll
    static void anImageIsThere() {
        Kosa.ok(Duration.ofMinutes(20), "image", "ensure"); // built on a fresh home, found at once otherwise
    }

    /** The packages dpkg says a guest of the current image has, as "name version architecture" lines, sorted. */
    private static List<String> installedInGuest() {
        Kosa.Result r = Kosa.ok(T, "run", "--workspace", "none", "--net", "none", "--", "dpkg-query", "-W", "-f",
                "${db:Status-Status} ${Package} ${Version} ${Architecture}\\n");
        return r.stdout().lines().filter(l -> l.startsWith("installed ")).map(l -> l.substring(10)).sorted().toList();
    }

    private static List<String> lines(LockFile lock) {
        return lock.packages().stream().map(p -> p.name() + " " + p.version() + " " + p.architecture()).sorted()
                .toList();
    }

    private static LockFile lockOfCurrentImage() {
        Kosa.Result r = Kosa.ok(T, "image", "lock");
        return LockFile.parse(r.stdout(), "kosa8 image lock");
    }

    @Test
    void theLockNamesEveryPackageTheGuestHasAndTheKernelItBoots() throws Exception {
        List<String> installed = installedInGuest();
        LockFile lock = lockOfCurrentImage();

        assertThat(lines(lock)).isEqualTo(installed).hasSizeGreaterThan(100);
        Locked kernel = lock.part("kernel").orElseThrow();
        String release = Kosa.ok(T, "run", "--workspace", "none", "--net", "none", "--", "uname", "-r").stdout().strip();
        assertThat(kernel.name()).isEqualTo("linux-image-" + release);
        // busybox is in the initramfs, not the root: its line is the very file the build unpacked
        Locked busybox = lock.part("busybox").orElseThrow();
        Path deb = Kosa.HOME.resolve("cache/debs").resolve("busybox-static_" + busybox.version().replace(":", "%3a")
                + "_" + busybox.architecture() + ".deb");
        assertThat(busybox.sha256()).isEqualTo(Kosa.sha256(deb));
        assertThat(busybox.filename()).startsWith("pool/main/b/busybox/");
    }

    @Test
    @Tag("long") // a whole root filesystem built again with mmdebstrap: 4-8 minutes here; ./run-tests long
    void aBuildFromTheLockInstallsExactlyItsPackages() throws Exception {
        LockFile lock = lockOfCurrentImage();
        Path file = Kosa.HOME.resolveSibling("it-image.lock");
        Files.writeString(file, lock.text());
        String sources = Kosa.ok(T, "run", "--workspace", "none", "--net", "none", "--", "cat",
                "/etc/apt/sources.list").stdout();

        long t0 = System.nanoTime();
        Kosa.Result built = Kosa.ok(Duration.ofMinutes(30), "image", "build", "--from-lock", file.toString());
        System.out.printf("ImageLockIT: build from the lock %d s%n", (System.nanoTime() - t0) / 1_000_000_000);
        String id = built.stdout().strip();
        assertThat(id).matches("[0-9a-f]{16}");

        LockFile again = lockOfCurrentImage(); // the new image is the current one
        assertThat(again.packages()).isEqualTo(lock.packages());
        assertThat(again.parts()).isEqualTo(lock.parts());
        assertThat(installedInGuest()).isEqualTo(lines(lock));
        // the guest's apt has the suite's sources, as in an image built the usual way, not the build's repository
        assertThat(Kosa.ok(T, "run", "--workspace", "none", "--net", "none", "--", "cat", "/etc/apt/sources.list")
                .stdout()).isEqualTo(sources);
        // a command that makes a sandbox ensures the image: it keeps the one built from the lock
        assertThat(Kosa.ok(T, "image", "ensure").stdout().strip()).isEqualTo(id);

        t0 = System.nanoTime();
        assertThat(Kosa.ok(T, "image", "build", "--from-lock", file.toString()).stdout().strip()).isEqualTo(id);
        System.out.printf("ImageLockIT: the same lock again %d ms%n", (System.nanoTime() - t0) / 1_000_000);

        // the image is here, but a lock with one hash edited is not answered with it: every entry is checked
        Locked k = lock.part("kernel").orElseThrow();
        Path edited = Kosa.HOME.resolveSibling("it-image-edited.lock");
        Files.writeString(edited, lock.text().replace(k.sha256(), "0000" + k.sha256().substring(4)));
        Kosa.Result refused = Kosa.run(T, "image", "build", "--from-lock", edited.toString());
        assertThat(refused.exitCode()).as(refused.toString()).isEqualTo(5);
        assertThat(refused.stderr()).contains("are not in the Debian archive's signed indices", k.name());
    }
}
