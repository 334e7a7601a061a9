package dev.kosa8.image;

import dev.kosa8.host.KosaException;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import org.apache.commons.compress.archivers.tar.TarArchiveEntry;
import org.apache.commons.compress.archivers.tar.TarArchiveOutputStream;
import org.apache.commons.compress.archivers.tar.TarConstants;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.List;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * A {@code .deb} from a hostile mirror (or a damaged cache) must not write
 * outside the folder it is unpacked into: not by {@code ..}, and not
 * through a symbolic link one of its own entries (or an earlier package's)
 * made, whether the link is absolute or climbs with {@code ../}.
 */
class DebUnpackEscapeTest {
    @TempDir
    Path tmp;

    /** One data.tar entry: a file ({@code link} null), a folder (name ending in /), a symlink or a hard link. */
    record Entry(String name, String link, boolean hard) {
        static Entry file(String name) {
            return new Entry(name, null, false);
        }

        static Entry symlink(String name, String to) {
            return new Entry(name, to, false);
        }

        static Entry hardLink(String name, String to) {
            return new Entry(name, to, true);
        }
    }

    @Test
    void anAbsoluteSymlinkMadeEarlierIsNotWrittenThrough() throws Exception {
        Path outside = Files.createDirectories(tmp.resolve("etc"));
        Path deb = deb(tmp.resolve("evil_1_all.deb"), List.of(new Entry("./usr/lib/", null, false),
                Entry.symlink("./usr/lib/x", outside.toString()), Entry.file("./usr/lib/x/passwd")));
        assertThatThrownBy(() -> DebUnpack.extract(deb, tmp.resolve("root"))).isInstanceOf(KosaException.class)
                .hasMessageContaining("cannot unpack evil_1_all.deb")
                .hasMessageContaining("the entry ./usr/lib/x/passwd would be written through the symbolic link "
                        + "usr/lib/x");
        assertThat(outside).isEmptyDirectory();
    }

    @Test
    void aRelativeSymlinkThatClimbsIsNotWrittenThrough() throws Exception {
        Path outside = Files.createDirectories(tmp.resolve("outside"));
        Path root = tmp.resolve("a/b/root");
        Path deb = deb(tmp.resolve("evil_1_all.deb"), List.of(Entry.symlink("./up", "../../../outside"),
                Entry.file("./up/f")));
        assertThatThrownBy(() -> DebUnpack.extract(deb, root)).isInstanceOf(KosaException.class)
                .hasMessageContaining("./up/f would be written through the symbolic link up");
        assertThat(outside).isEmptyDirectory();
        // a folder entry through it is refused the same way (nothing is made out there)
        Path deb2 = deb(tmp.resolve("evil_2_all.deb"), List.of(Entry.symlink("./up", "../../../outside"),
                new Entry("./up/made/", null, false)));
        assertThatThrownBy(() -> DebUnpack.extract(deb2, tmp.resolve("a/b/root2")))
                .isInstanceOf(KosaException.class).hasMessageContaining("through the symbolic link up");
        assertThat(outside).isEmptyDirectory();
    }

    @Test
    void aSymlinkLeftByAnEarlierPackageIsNotWrittenThroughEither() throws Exception {
        Path outside = Files.createDirectories(tmp.resolve("outside"));
        Path root = tmp.resolve("root");
        DebUnpack.extract(deb(tmp.resolve("first_1_all.deb"), List.of(Entry.symlink("./lib", outside.toString()))),
                root);
        Path second = deb(tmp.resolve("second_1_all.deb"), List.of(Entry.file("./lib/libc.so")));
        assertThatThrownBy(() -> DebUnpack.extract(second, root)).isInstanceOf(KosaException.class)
                .hasMessageContaining("cannot unpack second_1_all.deb").hasMessageContaining("./lib/libc.so");
        assertThat(outside).isEmptyDirectory();
    }

    @Test
    void aHardLinkThroughASymlinkToAFileOutsideIsRefused() throws Exception {
        Path outside = Files.createDirectories(tmp.resolve("home"));
        Files.writeString(outside.resolve("id_ed25519"), "secret");
        Path root = tmp.resolve("root");
        Path deb = deb(tmp.resolve("evil_1_all.deb"), List.of(Entry.symlink("./h", outside.toString()),
                Entry.hardLink("./stolen", "./h/id_ed25519")));
        assertThatThrownBy(() -> DebUnpack.extract(deb, root)).isInstanceOf(KosaException.class)
                .hasMessageContaining("./stolen");
        assertThat(root.resolve("stolen")).doesNotExist();
        assertThat(Files.getAttribute(outside.resolve("id_ed25519"), "unix:nlink")).isEqualTo(1);
    }

    @Test
    void dotDotIsRefusedAndAFileReplacingALinkReplacesTheLinkNotItsTarget() throws Exception {
        Path outside = Files.createDirectories(tmp.resolve("outside"));
        Files.writeString(outside.resolve("f"), "kept");
        assertThatThrownBy(() -> DebUnpack.extract(deb(tmp.resolve("dots_1_all.deb"),
                List.of(Entry.file("./usr/../../outside/g"))), tmp.resolve("root")))
                .isInstanceOf(KosaException.class).hasMessageContaining("with '..'");
        Path root = tmp.resolve("root2");
        DebUnpack.extract(deb(tmp.resolve("swap_1_all.deb"), List.of(Entry.symlink("./f", outside.resolve("f")
                .toString()), Entry.file("./f"))), root);
        assertThat(Files.readString(outside.resolve("f"))).isEqualTo("kept");
        assertThat(Files.isSymbolicLink(root.resolve("f"))).isFalse();
        assertThat(Files.readString(root.resolve("f"))).isEqualTo("content of ./f");
    }

    /** Any sequence of folders, files, symlinks (absolute, climbing, inside) and hard links leaves outside alone. */
    @Property(tries = 300)
    void noSequenceOfEntriesWritesOutside(@ForAll("entries") List<Entry> entries) throws Exception {
        Path base = Files.createTempDirectory("debunpack-");
        try {
            Path outside = Files.createDirectories(base.resolve("outside"));
            Files.writeString(outside.resolve("a"), "kept");
            Object mode = Files.getAttribute(outside.resolve("a"), "posix:permissions");
            Path root = base.resolve("x/y/root");
            Path deb = deb(base.resolve("fuzz_1_all.deb"), entries);
            try {
                DebUnpack.extract(deb, root);
            } catch (KosaException refused) {
                // refused is fine; writing outside is not
            }
            try (Stream<Path> s = Files.list(outside)) {
                assertThat(s.toList()).containsExactly(outside.resolve("a"));
            }
            assertThat(Files.readString(outside.resolve("a"))).isEqualTo("kept");
            assertThat(Files.getAttribute(outside.resolve("a"), "unix:nlink")).isEqualTo(1);
            assertThat(Files.getAttribute(outside.resolve("a"), "posix:permissions")).isEqualTo(mode);
        } finally {
            deleteTree(base);
        }
    }

    @Provide
    Arbitrary<List<Entry>> entries() {
        Arbitrary<String> names = Arbitraries.of("a", "b", "./a", "a/a", "a/b", "b/a", "/a/b/c", "a/b/a", "a/",
                "a/b/");
        Arbitrary<String> targets = Arbitraries.of("a", "b", ".", "..", "../outside", "../../../outside",
                "../../../../outside/a", "OUTSIDE", "OUTSIDE/a", "/", "a/b");
        Arbitrary<Entry> entry = Combinators.combine(names, targets, Arbitraries.integers().between(0, 3))
                .as((n, t, kind) -> switch (kind) {
                    case 0 -> Entry.file(n.endsWith("/") ? n + "f" : n);
                    case 1 -> new Entry(n.endsWith("/") ? n : n + "/", null, false);
                    case 2 -> Entry.symlink(n, t);
                    default -> Entry.hardLink(n, t);
                });
        return entry.list().ofMinSize(1).ofMaxSize(8);
    }

    /** A .deb whose data.tar holds these entries ({@code OUTSIDE} in a link stands for the folder outside). */
    private static Path deb(Path deb, List<Entry> entries) throws IOException {
        ByteArrayOutputStream tarBytes = new ByteArrayOutputStream();
        try (TarArchiveOutputStream tar = new TarArchiveOutputStream(tarBytes)) {
            tar.setLongFileMode(TarArchiveOutputStream.LONGFILE_POSIX);
            for (Entry e : entries) {
                String link = e.link() == null ? null
                        : e.link().replace("OUTSIDE", deb.getParent().resolve("outside").toString());
                TarArchiveEntry t;
                if (e.link() == null && e.name().endsWith("/")) {
                    t = new TarArchiveEntry(e.name(), TarConstants.LF_DIR);
                    t.setMode(0755);
                } else if (e.link() != null) {
                    t = new TarArchiveEntry(e.name(), e.hard() ? TarConstants.LF_LINK : TarConstants.LF_SYMLINK);
                    t.setLinkName(link);
                } else {
                    t = new TarArchiveEntry(e.name(), TarConstants.LF_NORMAL);
                    t.setMode(0644);
                    t.setSize(("content of " + e.name()).length());
                }
                tar.putArchiveEntry(t);
                if (e.link() == null && !e.name().endsWith("/")) {
                    tar.write(("content of " + e.name()).getBytes(StandardCharsets.UTF_8));
                }
                tar.closeArchiveEntry();
            }
        }
        byte[] data = tarBytes.toByteArray();
        return TestDebs.write(deb, "data.tar", data);
    }

    private static void deleteTree(Path p) throws IOException {
        try (Stream<Path> s = Files.walk(p)) {
            for (Path q : s.sorted(Comparator.reverseOrder()).toList()) {
                Files.deleteIfExists(q);
            }
        }
    }
}
