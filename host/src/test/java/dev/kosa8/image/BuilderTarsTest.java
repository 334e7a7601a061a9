package dev.kosa8.image;

import org.apache.commons.compress.archivers.tar.TarArchiveEntry;
import org.apache.commons.compress.archivers.tar.TarArchiveInputStream;
import org.apache.commons.compress.archivers.tar.TarArchiveOutputStream;
import org.apache.commons.compress.archivers.tar.TarConstants;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.tukaani.xz.LZMA2Options;
import org.tukaani.xz.XZOutputStream;

import java.io.ByteArrayOutputStream;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/** The two tars the host hands the builder VM: its own Debian ({@link BuilderRootTar}) and the input ({@link TreeTar}). */
class BuilderTarsTest {
    @Test
    void theBuildersDebianIsEveryPackagesDataDecompressedWithoutItsDocumentation(@TempDir Path dir) throws Exception {
        Path a = deb(dir.resolve("a.deb"), List.of(dirEntry("./usr/"), dirEntry("./usr/bin/"),
                file("./usr/bin/tool", 0755, "#!/bin/sh\n"), file("./usr/share/doc/a/copyright", 0644, "legal"),
                link("./usr/bin/alias", "tool")));
        String longName = "./usr/lib/" + "x".repeat(120) + "/module.pm";
        Path b = deb(dir.resolve("b.deb"), List.of(dirEntry("./usr/"), file("./usr/lib/b.so", 0644, "ELF"),
                file("./usr/share/man/man1/b.1.gz", 0644, "man"), hardLink("./usr/lib/b.so.1", "./usr/lib/b.so"),
                file(longName, 0644, "perl")));
        Path tar = dir.resolve("builder-root.tar");
        BuilderRootTar.write(List.of(a, b), tar);

        Map<String, TarArchiveEntry> entries = new LinkedHashMap<>();
        Map<String, String> contents = new LinkedHashMap<>();
        List<String> names = new java.util.ArrayList<>();
        try (InputStream in = Files.newInputStream(tar); TarArchiveInputStream t = new TarArchiveInputStream(in)) {
            TarArchiveEntry e;
            while ((e = t.getNextEntry()) != null) {
                names.add(e.getName());
                entries.put(e.getName(), e);
                contents.put(e.getName(), new String(t.readAllBytes(), StandardCharsets.UTF_8));
            }
        }
        assertThat(names).containsExactly("./usr/", "./usr/bin/", "./usr/bin/tool", "./usr/bin/alias",
                "./usr/", "./usr/lib/b.so", "./usr/lib/b.so.1", longName);
        assertThat(entries.get("./usr/lib/b.so.1").isLink()).isTrue();
        assertThat(entries.get("./usr/lib/b.so.1").getLinkName()).isEqualTo("./usr/lib/b.so");
        assertThat(contents.get(longName)).isEqualTo("perl");
        assertThat(contents.get("./usr/bin/tool")).isEqualTo("#!/bin/sh\n");
        assertThat(entries.get("./usr/bin/tool").getMode() & 07777).isEqualTo(0755);
        assertThat(entries.get("./usr/bin/alias").isSymbolicLink()).isTrue();
        assertThat(entries.get("./usr/bin/alias").getLinkName()).isEqualTo("tool");
        assertThat(contents.get("./usr/lib/b.so")).isEqualTo("ELF");
    }

    @Test
    void theInputIsOwnedByRootWithItsModesAndLinks(@TempDir Path dir) throws Exception {
        Path in = Files.createDirectories(dir.resolve("in/root/opt/kosa8/jre/bin"));
        Files.writeString(in.resolve("java"), "ELF");
        Files.setPosixFilePermissions(in.resolve("java"), PosixFilePermissions.fromString("rwxr-x---"));
        Files.createSymbolicLink(in.resolve("jrunscript"), Path.of("java"));
        Files.writeString(in.resolve("release"), "JAVA_VERSION=25");
        Files.setPosixFilePermissions(in.resolve("release"), PosixFilePermissions.fromString("rw-------"));
        Files.setPosixFilePermissions(dir.resolve("in/root"), PosixFilePermissions.fromString("rwx------"));
        Path tar = dir.resolve("in.tar");
        TreeTar.write(dir.resolve("in"), tar);

        Map<String, TarArchiveEntry> entries = new LinkedHashMap<>();
        try (InputStream i = Files.newInputStream(tar); TarArchiveInputStream t = new TarArchiveInputStream(i)) {
            TarArchiveEntry e;
            while ((e = t.getNextEntry()) != null) {
                entries.put(e.getName(), e);
            }
        }
        assertThat(entries).containsKeys("root/", "root/opt/kosa8/jre/bin/java", "root/opt/kosa8/jre/bin/jrunscript");
        for (TarArchiveEntry e : entries.values()) {
            assertThat(e.getLongUserId()).as(e.getName()).isZero();
            assertThat(e.getLongGroupId()).as(e.getName()).isZero();
            assertThat(e.getUserName()).isEqualTo("root");
        }
        // never the host's umask: folders 0755, files 0755 or 0644 by their owner's execute bit
        assertThat(entries.get("root/opt/kosa8/jre/bin/java").getMode() & 07777).isEqualTo(0755);
        assertThat(entries.get("root/opt/kosa8/jre/bin/release").getMode() & 07777).isEqualTo(0644);
        assertThat(entries.get("root/").getMode() & 07777).isEqualTo(0755);
        assertThat(entries.get("root/opt/kosa8/jre/bin/java").getSize()).isEqualTo(3);
        assertThat(entries.get("root/opt/kosa8/jre/bin/jrunscript").getLinkName()).isEqualTo("java");
        assertThat(entries.get("root/").isDirectory()).isTrue();
    }

    private record E(String name, byte type, int mode, String content, String link) {
    }

    private static E dirEntry(String name) {
        return new E(name, TarConstants.LF_DIR, 0755, null, null);
    }

    private static E file(String name, int mode, String content) {
        return new E(name, TarConstants.LF_NORMAL, mode, content, null);
    }

    private static E link(String name, String target) {
        return new E(name, TarConstants.LF_SYMLINK, 0777, null, target);
    }

    private static E hardLink(String name, String target) {
        return new E(name, TarConstants.LF_LINK, 0644, null, target);
    }

    /** A .deb whose data.tar.xz holds these entries, as Debian's packages are made. */
    private static Path deb(Path deb, List<E> entries) throws Exception {
        ByteArrayOutputStream xz = new ByteArrayOutputStream();
        try (XZOutputStream x = new XZOutputStream(xz, new LZMA2Options());
             TarArchiveOutputStream tar = new TarArchiveOutputStream(x)) {
            tar.setLongFileMode(TarArchiveOutputStream.LONGFILE_POSIX);
            for (E e : entries) {
                TarArchiveEntry t = new TarArchiveEntry(e.name(), e.type());
                t.setMode(e.mode());
                if (e.link() != null) {
                    t.setLinkName(e.link());
                }
                byte[] c = e.content() == null ? new byte[0] : e.content().getBytes(StandardCharsets.UTF_8);
                t.setSize(c.length);
                tar.putArchiveEntry(t);
                tar.write(c);
                tar.closeArchiveEntry();
            }
        }
        byte[] data = xz.toByteArray();
        return TestDebs.write(deb, "data.tar.xz", data);
    }
}
