package dev.kosa8.image;

import dev.kosa8.host.KosaException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The Java {@code dpkg-deb -x} against the host's own, on a package the host's {@code dpkg-deb --build} made. */
class DebUnpackTest {
    @TempDir
    Path tmp;

    @Test
    void unpacksWhatDpkgDebUnpacksTheSameWay() throws Exception {
        Path src = tmp.resolve("src");
        Files.createDirectories(src.resolve("DEBIAN"));
        Files.writeString(src.resolve("DEBIAN/control"), "Package: kosa8-test\nVersion: 1.0-1\nArchitecture: all\n"
                + "Maintainer: kosa8 <kosa8@example.org>\nDescription: a test\n");
        Files.createDirectories(src.resolve("usr/bin"));
        Files.createDirectories(src.resolve("usr/lib/kosa8/empty"));
        Files.writeString(src.resolve("usr/bin/tool"), "#!/bin/sh\necho hi\n");
        Files.setPosixFilePermissions(src.resolve("usr/bin/tool"), PosixFilePermissions.fromString("rwxr-xr-x"));
        Files.write(src.resolve("usr/lib/kosa8/data.bin"), new byte[200_000]);
        Files.setPosixFilePermissions(src.resolve("usr/lib/kosa8/data.bin"), PosixFilePermissions.fromString("rw-r-----"));
        Files.createSymbolicLink(src.resolve("usr/bin/alias"), Path.of("tool"));
        Files.createSymbolicLink(src.resolve("usr/lib/kosa8/abs"), Path.of("/usr/bin/tool"));
        Files.createLink(src.resolve("usr/lib/kosa8/hard"), src.resolve("usr/bin/tool"));
        Path deb = tmp.resolve("kosa8-test_1.0-1_all.deb");
        for (String compression : List.of("xz", "gzip", "zstd", "none")) {
            run("dpkg-deb", "--root-owner-group", "-Z" + compression, "--build", src.toString(), deb.toString());
            Path ours = tmp.resolve("ours-" + compression);
            Path theirs = tmp.resolve("theirs-" + compression);
            DebUnpack.extract(deb, ours);
            run("dpkg-deb", "-x", deb.toString(), theirs.toString());
            assertThat(listing(ours)).as(compression).isEqualTo(listing(theirs)).hasSizeGreaterThan(8);
        }
    }

    @Test
    void aBrokenPackageIsRefusedWithWhatToDo() throws IOException {
        Path deb = tmp.resolve("broken.deb");
        Files.writeString(deb, "!<arch>\nnot really\n");
        assertThatThrownBy(() -> DebUnpack.extract(deb, tmp.resolve("out"))).isInstanceOf(KosaException.class)
                .hasMessageContaining("cannot unpack broken.deb")
                .satisfies(e -> assertThat(((KosaException) e).suggestion()).contains("delete it from the cache"));
    }

    /** Each path with its type, permission bits, link target and content size. */
    private static List<String> listing(Path root) throws IOException {
        List<String> out = new ArrayList<>();
        try (Stream<Path> s = Files.walk(root)) {
            for (Path p : s.sorted().toList()) {
                String rel = root.relativize(p).toString();
                if (Files.isSymbolicLink(p)) {
                    out.add(rel + " -> " + Files.readSymbolicLink(p));
                } else if (Files.isDirectory(p)) {
                    out.add(rel + "/");
                } else {
                    out.add(rel + " " + PosixFilePermissions.toString(Files.getPosixFilePermissions(p)) + " "
                            + Files.size(p) + " links=" + Files.getAttribute(p, "unix:nlink"));
                }
            }
        }
        return out;
    }

    private static void run(String... argv) throws Exception {
        Process p = new ProcessBuilder(argv).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes());
        assertThat(p.waitFor()).as(String.join(" ", argv) + ": " + out).isZero();
    }
}
