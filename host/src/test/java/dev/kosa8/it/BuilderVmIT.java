package dev.kosa8.it;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFileAttributes;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * The image pipeline on a host with only QEMU, {@code qemu-img} and Java (issue 40): {@code kosa8 image build} with
 * a PATH of nothing but a folder holding QEMU's two programs and the JDK's {@code bin}, so mmdebstrap, apt, dpkg,
 * dpkg-deb and mke2fs are out of reach, in a home of its own (its package cache seeded from the tests' home, so
 * nothing is downloaded twice). The root filesystem is then built in the builder VM, and a sandbox made from the
 * image runs the foundation's checks: its programs, root's files as root's (a set-user-id program included), every
 * package configured, the workspace through kosa8's kernel module (built in the builder VM too, as the host's
 * PATH has no compiler), the Java runtime and its trust store.
 */
@Tag("long") // the builder VM builds the module and runs mmdebstrap under TCG: about 12 minutes here; ./run-tests long
class BuilderVmIT {
    static final Path HOME = Kosa.HOME.resolveSibling("it-builder-home");
    static final Duration BUILD = Duration.ofMinutes(40);
    static final Duration T = Duration.ofMinutes(5);

    @AfterAll
    static void stop() {
        Kosa.runWith(Map.of("KOSA8_HOME", HOME.toString()), Duration.ofMinutes(1), null, "daemon", "stop");
    }

    @Test
    void anImageBuiltWithoutDebiansToolsOnTheHostBootsAndHasItsPackagesFilesAndRuntime() throws Exception {
        if (Files.exists(HOME)) {
            Kosa.deleteTree(HOME);
        }
        Files.createDirectories(HOME.resolve("cache"));
        for (String seed : List.of("debian", "debs")) { // hard links: the same checked files, nothing fetched again
            Path from = Kosa.HOME.resolve("cache").resolve(seed);
            if (Files.isDirectory(from)) {
                new ProcessBuilder("cp", "-al", from.toString(), HOME.resolve("cache").toString()).inheritIO().start()
                        .waitFor();
            }
        }
        Path bin = Files.createDirectories(HOME.resolveSibling("it-builder-bin"));
        for (String tool : List.of("qemu-system-x86_64", "qemu-img")) {
            Path link = bin.resolve(tool);
            Files.deleteIfExists(link);
            Files.createSymbolicLink(link, which(tool));
        }
        String javaBin = Path.of(ProcessHandle.current().info().command().orElseThrow()).getParent().toString();
        String path = bin + ":" + javaBin;
        for (String absent : List.of("mmdebstrap", "apt-get", "dpkg", "dpkg-deb", "mke2fs")) {
            for (String dir : path.split(":")) {
                assertThat(Path.of(dir, absent)).as("the build's PATH must not reach " + absent).doesNotExist();
            }
        }

        Kosa.Result built = Kosa.runWith(Map.of("KOSA8_HOME", HOME.toString(), "PATH", path), BUILD, null,
                "image", "build");
        assertThat(built.exitCode()).as(built.toString()).isZero();
        assertThat(built.stderr()).contains("in the builder VM: mmdebstrap bookworm", "builder VM: mke2fs",
                "building the workspace's kernel module in the builder VM", "builder VM: make kosa8_ws9p.ko with gcc-12")
                .doesNotContain("sandboxes will use the slower relay");
        Path log = newest(HOME.resolve("data/images/logs"));
        assertThat(Files.readString(log)).contains("root filesystem built in the builder VM", "KOSA8-BUILDER-OK",
                "root filesystem's package lock: kept");

        // nothing of the image's tree reached the host: no device node, no set-id file, only the part's own files
        List<String> found = new ArrayList<>();
        try (Stream<Path> all = Files.walk(HOME)) {
            for (Path p : all.toList()) {
                PosixFileAttributes a = Files.readAttributes(p, PosixFileAttributes.class, LinkOption.NOFOLLOW_LINKS);
                int mode = (Integer) Files.getAttribute(p, "unix:mode", LinkOption.NOFOLLOW_LINKS);
                if (a.isOther() || (mode & 06000) != 0) {
                    found.add(p.toString());
                }
            }
        }
        assertThat(found).as("device nodes or set-id files under the home").isEmpty();
        try (Stream<Path> parts = Files.list(HOME.resolve("data/images/rootfs"))) {
            for (Path part : parts.toList()) {
                try (Stream<Path> files = Files.list(part)) {
                    assertThat(files.map(f -> f.getFileName().toString()).toList())
                            .containsExactlyInAnyOrder("rootfs.qcow2", "system-ca.crt", "packages.lock", "manifest.json");
                }
            }
        }

        Path folder = Files.createDirectories(HOME.resolveSibling("it-builder-folder"));
        Files.writeString(folder.resolve("hello.txt"), "from the host\n");
        // the host's own PATH from here on (the daemon's jail and session need their programs), with mmdebstrap
        // and gcc: the image is still the one the builder made, its kernel part the same whoever has a compiler
        Kosa.Result r = Kosa.runWith(Map.of("KOSA8_HOME", HOME.toString()), T, null, "run", "--workspace",
                folder.toString(), "--", "sh", "-c", String.join(" && ",
                        "cat /workspace/hello.txt", "uname -m", "git --version", "python3 -c 'print(6*7)'",
                        "curl --version | head -1", "stat -c '%U %a' /usr/bin/passwd /etc/shadow",
                        "test -z \"$(dpkg --audit)\" && echo all-configured",
                        "dpkg-query -W -f='${db:Status-Abbrev}\\n' | sort | uniq -c",
                        "/opt/kosa8/jre/bin/java -version 2>&1 | head -1",
                        "test -s /etc/ssl/certs/java/cacerts && readlink /opt/kosa8/jre/lib/security/cacerts",
                        "echo hostname=$(cat /etc/hostname)", "grep -c sandbox /etc/hosts",
                        "stat -c 'mode %n %a %U' / /etc /opt /etc/hosts /opt/kosa8/jre/bin/java",
                        "/opt/kosa8/jre/bin/java -Xshare:on -Xmx64m --enable-native-access=ALL-UNNAMED -version 2>&1"
                                + " | grep -c 'sharing'",
                        "test -d /sys/module/kosa8_ws9p && echo module-loaded",
                        "echo from-the-guest > /workspace/back.txt"));
        assertThat(r.exitCode()).as(r.toString()).isZero();
        assertThat(r.stderr()).as("the image the builder made is the one the sandbox runs").doesNotContain("building");
        assertThat(r.stdout()).contains("from the host", "x86_64", "git version", "42", "curl ",
                "root 4755", "root 640", "all-configured", "module-loaded", "ii ", "openjdk version", "/etc/ssl/certs/java/cacerts");
        assertThat(r.stdout()).doesNotContain("iU ", "iF ", "rc ");
        // the host build's: mmdebstrap's folders as it made them, kosa8's files root's, the CDS archive usable
        assertThat(r.stdout()).contains("hostname=sandbox", "mode / 755 root", "mode /etc 755 root",
                "mode /opt 755 root", "mode /etc/hosts 644 root", "mode /opt/kosa8/jre/bin/java 755 root");
        assertThat(Files.readString(folder.resolve("back.txt"))).isEqualTo("from-the-guest\n");
    }

    private static Path which(String tool) {
        for (String dir : System.getenv().getOrDefault("PATH", "/usr/bin").split(":")) {
            Path p = Path.of(dir, tool);
            if (Files.isExecutable(p)) {
                return p;
            }
        }
        throw new AssertionError(tool + " is not on PATH");
    }

    private static Path newest(Path dir) throws IOException {
        try (Stream<Path> s = Files.list(dir)) {
            return s.max(java.util.Comparator.comparing(Path::toString)).orElseThrow();
        }
    }
}
