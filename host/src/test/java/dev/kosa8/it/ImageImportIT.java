package dev.kosa8.it;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kosa8.image.oci.TestImages;
import dev.kosa8.image.oci.TestTar;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * {@code kosa8 image import}: archives made here (a {@code docker save} tarball and an OCI layout) of roots
 * that are not kosa8's Debian image boot real guests, kosa8's agent running on its own runtime and C library
 * beside them.
 */
class ImageImportIT {
    static final Duration T = Duration.ofMinutes(4);
    static Path dir;
    static byte[] busybox;

    @BeforeAll
    static void setUp() throws Exception {
        Kosa.ok(T, "run", "--workspace", "none", "--net", "none", "--", "true"); // kosa8's own image is built
        dir = Kosa.HOME.resolveSibling("it-import");
        if (Files.exists(dir)) {
            Kosa.deleteTree(dir);
        }
        Files.createDirectories(dir);
        Path deb;
        try (Stream<Path> s = Files.list(Kosa.HOME.resolve("cache/debs"))) {
            deb = s.filter(p -> p.getFileName().toString().startsWith("busybox-static")).findFirst().orElseThrow();
        }
        Path unpacked = dir.resolve("busybox-deb");
        Process p = new ProcessBuilder("dpkg-deb", "-x", deb.toString(), unpacked.toString()).inheritIO().start();
        assertThat(p.waitFor()).isZero();
        busybox = Files.readAllBytes(unpacked.resolve("bin/busybox"));
    }

    @AfterAll
    static void tearDown() {
        for (String name : List.of("it/busybox:1", "it/noshell:1")) {
            Kosa.run(Duration.ofMinutes(1), "image", "rm", name);
        }
    }

    @Test
    void aBusyboxOnlyRootBootsRunsCommandsAndItsLayersDeleteAndReplaceExactlyAsTheSpecSays() throws Exception {
        byte[] base = new TestTar().dir("bin/").file("bin/busybox", 0755, 0, 0, busybox).symlink("bin/sh", "busybox")
                .dir("data/").file("data/keep", "k").file("data/gone", "g").dir("data/old/").file("data/old/a", "a")
                .file("data/replace", "file").dir("home/app/", 0750, 1000, 1000).bytes();
        byte[] top = new TestTar().file("data/.wh.gone", "").file("data/old/.wh..wh..opq", "")
                .file("data/old/new", "n").dir("data/replace/").file("data/replace/inside", "i").bytes();
        byte[] cfg = TestImages.config(List.of(base, top), List.of("busybox", "echo", "default"), "", "/data",
                List.of("PATH=/bin", "GREETING=hi"));
        Path archive = TestImages.write(dir.resolve("busybox.tar"), TestImages.dockerArchive(List.of(base, top), cfg,
                "it/busybox:1"));
        long t0 = System.nanoTime();
        Kosa.Result imp = Kosa.run(T, "image", "import", archive.toString());
        System.out.printf("ImageImportIT: busybox import %d ms%n", (System.nanoTime() - t0) / 1_000_000);
        assertThat(imp.exitCode()).as(imp.toString()).isZero();
        assertThat(Kosa.ok(T, "image", "ls").stdout()).contains("it/busybox:1");

        t0 = System.nanoTime();
        Kosa.Result r = Kosa.run(T, "run", "--image", "it/busybox:1", "--workspace", "none", "--net", "none", "--",
                "busybox", "sh", "-c", "busybox echo ok; pwd; echo $GREETING; busybox find /data | busybox sort;"
                        + " busybox stat -c '%u:%g %a' /home/app; busybox ls /run/kosa8/sys;"
                        + " busybox touch /run/kosa8/sys/x 2>/dev/null || echo read-only");
        System.out.printf("ImageImportIT: busybox run %d ms%n", (System.nanoTime() - t0) / 1_000_000);
        assertThat(r.exitCode()).as(r.toString()).isZero();
        assertThat(r.stdout()).isEqualTo("ok\n/data\nhi\n/data\n/data/keep\n/data/old\n/data/old/new\n"
                + "/data/replace\n/data/replace/inside\n1000:1000 750\njre\nlayout\nlib\nread-only\n");
        Kosa.Result dflt = Kosa.run(T, "run", "--image", "it/busybox:1", "--workspace", "none", "--net", "none");
        assertThat(dflt.stdout()).as(dflt.toString()).isEqualTo("default\n");
    }

    /**
     * Two things an image can be that kosa8/debian is not, in one image (one import, one template, one boot):
     * its {@code USER} on a root without {@code runuser}, and musl. The command runs as that user, with its groups
     * from the image's {@code /etc/group}, through kosa8's own busybox {@code su}, its arguments arriving unchanged
     * (a {@code -c} and a {@code --} among them); and a program linked dynamically against musl (built here with
     * {@code musl-gcc}; musl's loader and libc beside it, no glibc in the image) runs, because kosa8's agent
     * brings its own runtime.
     */
    @Test
    void anImagesUserRunsItsCommandsWithoutRunuserAndAMuslProgramRuns() throws Exception {
        Path src = Files.writeString(dir.resolve("musl.c"), """
                #include <stdio.h>
                int main(int argc, char **argv) { printf("musl hello %d\\n", argc); return 0; }
                """);
        Path bin = dir.resolve("hello-musl");
        Process cc = new ProcessBuilder("musl-gcc", "-O1", "-o", bin.toString(), src.toString()).inheritIO().start();
        assertThat(cc.waitFor()).as("musl-gcc").isZero();
        byte[] musl = Files.readAllBytes(Path.of("/usr/lib/x86_64-linux-musl/libc.so"));
        byte[] layer = new TestTar().dir("bin/").file("bin/busybox", 0755, 0, 0, busybox).symlink("bin/sh", "busybox")
                .dir("etc/").file("etc/passwd", "root:x:0:0:root:/root:/bin/sh\napp:x:1000:1000:App:/home/app:/bin/sh\n")
                .file("etc/group", "root:x:0:\napp:x:1000:\ntools:x:2000:app\n")
                .dir("lib/").file("lib/ld-musl-x86_64.so.1", 0755, 0, 0, musl)
                .file("bin/hello-musl", 0755, 0, 0, Files.readAllBytes(bin))
                .dir("home/app/", 0750, 1000, 1000).bytes();
        byte[] cfg = TestImages.config(List.of(layer), List.of("busybox", "id"), "app", "/home/app",
                List.of("PATH=/bin"));
        Path archive = TestImages.write(dir.resolve("busybox-user.tar"), TestImages.dockerArchive(List.of(layer), cfg,
                "it/busybox-user:1"));
        Kosa.ok(T, "image", "import", archive.toString());
        try {
            Kosa.Result r = Kosa.run(T, "run", "--image", "it/busybox-user:1", "--workspace", "none", "--net", "none",
                    "--", "sh", "-c", "busybox id; busybox printf '[%s]' \"$@\"; echo; echo $HOME; busybox touch x && "
                            + "busybox stat -c '%U:%G' x; hello-musl a b", "sh", "-c", "a  b", "--");
            assertThat(r.exitCode()).as(r.toString()).isZero();
            assertThat(r.stdout()).isEqualTo("uid=1000(app) gid=1000(app) groups=1000(app),2000(tools)\n"
                    + "[-c][a  b][--]\n/home/app\napp:app\nmusl hello 3\n");
        } finally {
            Kosa.run(Duration.ofMinutes(1), "image", "rm", "it/busybox-user:1");
        }
    }

    @Test
    void anImportedImageWithTheDefaultNetworkAndWorkspaceBootsItsCaOnlyWhereItCanGo() throws Exception {
        byte[] layer = new TestTar().dir("bin/").file("bin/busybox", 0755, 0, 0, busybox).symlink("bin/sh", "busybox")
                .bytes();
        byte[] cfg = TestImages.config(List.of(layer), List.of(), "", "", List.of("PATH=/bin"));
        Path archive = TestImages.write(dir.resolve("net.tar"), TestImages.dockerArchive(List.of(layer), cfg,
                "it/busybox-net:1"));
        assertThat(Kosa.run(T, "image", "import", archive.toString()).exitCode()).isZero();
        try {
            Kosa.Result r = Kosa.run(T, "run", "--image", "it/busybox-net:1", "--", "busybox", "sh", "-c",
                    "busybox head -1 /etc/kosa8/ca.pem; busybox test -d /workspace && echo workspace; pwd");
            assertThat(r.exitCode()).as(r.toString()).isZero();
            assertThat(r.stdout()).isEqualTo("-----BEGIN CERTIFICATE-----\nworkspace\n" + Kosa.CWD + "\n");
        } finally {
            Kosa.run(Duration.ofMinutes(1), "image", "rm", "it/busybox-net:1");
        }
    }

    @Test
    void anImageWithNoShellRunsAStaticBinary() throws Exception {
        Path src = Files.writeString(dir.resolve("hello.c"), """
                #include <stdio.h>
                int main(int argc, char **argv) { printf("static hello %d\\n", argc); return 3; }
                """);
        Path bin = dir.resolve("hello");
        Process cc = new ProcessBuilder("gcc", "-static", "-O1", "-o", bin.toString(), src.toString()).inheritIO()
                .start();
        assertThat(cc.waitFor()).as("gcc -static").isZero();
        byte[] layer = new TestTar().file("hello", 0755, 0, 0, Files.readAllBytes(bin)).dir("etc/").bytes();
        byte[] cfg = TestImages.config(List.of(layer), List.of("/hello"), "", "", List.of());
        Path archive = TestImages.write(dir.resolve("noshell.tar"), TestImages.ociArchive(List.of(layer), cfg,
                "it/noshell:1"));
        Kosa.Result imp = Kosa.run(T, "image", "import", "-t", "it/noshell:1", archive.toString());
        assertThat(imp.exitCode()).as(imp.toString()).isZero();
        Kosa.Result r = Kosa.run(T, "run", "--image", "it/noshell:1", "--workspace", "none", "--net", "none",
                "--", "/hello", "a", "b");
        assertThat(r.stdout()).as(r.toString()).isEqualTo("static hello 3\n");
        assertThat(r.exitCode()).isEqualTo(3);
    }

    @Test
    void aHostileArchiveIsRefusedClearlyAndLeavesNothing() throws Exception {
        byte[] evil = new TestTar().file("../../escape", "x").bytes();
        byte[] cfg = TestImages.config(List.of(evil), List.of(), "", "", List.of());
        Path archive = TestImages.write(dir.resolve("evil.tar"), TestImages.dockerArchive(List.of(evil), cfg,
                "it/evil:1"));
        Kosa.Result imp = Kosa.run(T, "image", "import", archive.toString());
        assertThat(imp.exitCode()).as(imp.toString()).isEqualTo(5);
        assertThat(imp.stderr()).contains("member ../../escape climbs out of the image's root", "is refused");
        assertThat(Kosa.ok(T, "image", "ls").stdout()).doesNotContain("it/evil");
        Path work = Kosa.HOME.resolve("data/images/import");
        if (Files.isDirectory(work)) {
            try (Stream<Path> s = Files.list(work)) {
                assertThat(s.toList()).as("no scratch folder is left").isEmpty();
            }
        }
    }
}
