package dev.kosa8.image.oci;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.kosa8.host.KosaException;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Applying layers: the OCI rules (whiteouts, opaque folders, links) and every way out of the root refused. */
class RootTreeTest {
    @TempDir
    Path tmp;

    private RootTree tree(ImportLimits limits) throws IOException {
        return new RootTree(Files.createDirectory(tmp.resolve("root")), limits);
    }

    private static void layer(RootTree t, byte[] tar) throws IOException {
        t.beginLayer();
        TarReader r = new TarReader(new ByteArrayInputStream(tar), ImportLimits.DEFAULT, "layer");
        for (TarEntry e = r.next(); e != null; e = r.next()) {
            t.apply(e, r.content(), "layer");
        }
    }

    private static List<String> files(Path root) throws IOException {
        List<String> out = new ArrayList<>();
        try (Stream<Path> s = Files.walk(root)) {
            s.filter(p -> !p.equals(root)).forEach(p -> out.add(root.relativize(p) + (Files.isDirectory(p,
                    LinkOption.NOFOLLOW_LINKS) ? "/" : "")));
        }
        return out;
    }

    @Test
    void whiteoutsAndOpaqueFoldersYieldExactlyTheExpectedTree() throws IOException {
        RootTree t = tree(ImportLimits.DEFAULT);
        layer(t, new TestTar().dir("etc/").file("etc/keep", "1").file("etc/gone", "2").dir("opt/")
                .file("opt/old", "3").dir("opt/sub/").file("opt/sub/deep", "4").file("replaced", "old").bytes());
        layer(t, new TestTar().file("etc/.wh.gone", "").file("opt/new", "5").file("opt/.wh..wh..opq", "")
                .dir("replaced/").file("replaced/inside", "6").bytes());
        assertThat(files(t.root())).containsExactlyInAnyOrder("etc/", "etc/keep", "opt/", "opt/new", "replaced/",
                "replaced/inside");
        assertThat(t.meta()).doesNotContainKeys("etc/gone", "opt/old", "opt/sub", "opt/sub/deep")
                .containsKeys("opt/new", "replaced/inside");
        assertThat(t.meta().get("replaced").type()).isEqualTo(TarEntry.Type.DIRECTORY);
    }

    @Test
    void ownersModesAndDevicesAreKeptAsideNeverMadeOnTheHost() throws IOException {
        RootTree t = tree(ImportLimits.DEFAULT);
        layer(t, new TestTar().dir("home/", 0755, 0, 0).dir("home/app/", 0700, 1000, 1000)
                .file("usr/bin/su", 04755, 0, 0, new byte[] {1}).device("dev/null", '3', 1, 3).bytes());
        assertThat(t.meta().get("home/app")).extracting(RootTree.Meta::uid, RootTree.Meta::mode)
                .containsExactly(1000L, 0700);
        assertThat(t.meta().get("usr/bin/su").mode()).isEqualTo(04755);
        assertThat(t.meta().get("usr")).extracting(RootTree.Meta::type, RootTree.Meta::mode)
                .containsExactly(TarEntry.Type.DIRECTORY, 0755);
        assertThat(t.meta().get("dev/null").type()).isEqualTo(TarEntry.Type.CHAR_DEVICE);
        assertThat(t.root().resolve("dev/null")).doesNotExist();
        assertThat(Files.getOwner(t.root().resolve("home/app"))).isEqualTo(Files.getOwner(tmp));
    }

    @Test
    void hardLinksWithinTheRootShareTheFile() throws IOException {
        RootTree t = tree(ImportLimits.DEFAULT);
        layer(t, new TestTar().file("bin/busybox", 0755, 0, 0, "bb".getBytes()).hardlink("bin/ls", "bin/busybox")
                .bytes());
        assertThat(Files.isSameFile(t.root().resolve("bin/ls"), t.root().resolve("bin/busybox"))).isTrue();
    }

    @Test
    void aMemberWithDotDotIsRefused() throws IOException {
        RootTree t = tree(ImportLimits.DEFAULT);
        assertThatThrownBy(() -> layer(t, new TestTar().file("etc/../../escape", "x").bytes()))
                .isInstanceOf(KosaException.class).hasMessageContaining("climbs out of the image's root");
        assertThat(tmp.resolve("escape")).doesNotExist();
    }

    @Test
    void aMemberWithAnAbsoluteNameIsRefused() throws IOException {
        RootTree t = tree(ImportLimits.DEFAULT);
        assertThatThrownBy(() -> layer(t, new TestTar().file("/etc/passwd", "x").bytes()))
                .hasMessageContaining("has an absolute name");
    }

    @Test
    void aFileWrittenThroughASymbolicLinkIsRefusedEvenOneThatLeadsOutside() throws IOException {
        Path outside = Files.createDirectory(tmp.resolve("outside"));
        RootTree t = tree(ImportLimits.DEFAULT);
        assertThatThrownBy(() -> layer(t, new TestTar().symlink("evil", outside.toString())
                .file("evil/planted", "x").bytes())).hasMessageContaining("written through the symbolic link /evil");
        assertThat(outside.resolve("planted")).doesNotExist();
        RootTree t2 = new RootTree(Files.createDirectory(tmp.resolve("root2")), ImportLimits.DEFAULT);
        layer(t2, new TestTar().symlink("up", "..").bytes());
        assertThatThrownBy(() -> layer(t2, new TestTar().file("up/root2-sibling", "x").bytes()))
                .hasMessageContaining("through the symbolic link /up");
        assertThat(tmp.resolve("root2-sibling")).doesNotExist();
    }

    @Test
    void aHardLinkToOutsideTheRootIsRefused() throws IOException {
        Path secret = Files.writeString(tmp.resolve("secret"), "s");
        RootTree t = tree(ImportLimits.DEFAULT);
        assertThatThrownBy(() -> layer(t, new TestTar().hardlink("stolen", "../secret").bytes()))
                .hasMessageContaining("climbs out");
        assertThatThrownBy(() -> layer(t, new TestTar().hardlink("stolen", secret.toString()).bytes()))
                .hasMessageContaining("absolute name");
        layer(t, new TestTar().symlink("link", secret.toString()).bytes());
        assertThatThrownBy(() -> layer(t, new TestTar().hardlink("stolen", "link").bytes()))
                .hasMessageContaining("not a regular file of the image");
        assertThat(t.root().resolve("stolen")).doesNotExist();
    }

    @Test
    void aWhiteoutNamingAPathOutsideTheRootIsRefused() throws IOException {
        Path victim = Files.writeString(tmp.resolve("victim"), "v");
        RootTree t = tree(ImportLimits.DEFAULT);
        assertThatThrownBy(() -> layer(t, new TestTar().file("../.wh.victim", "").bytes()))
                .hasMessageContaining("climbs out");
        layer(t, new TestTar().symlink("up", "..").bytes());
        assertThatThrownBy(() -> layer(t, new TestTar().file("up/.wh.victim", "").bytes()))
                .hasMessageContaining("symbolic link /up");
        assertThat(victim).exists();
    }

    @Test
    void contentBeyondTheUnpackedBoundIsRefused() throws IOException {
        RootTree t = tree(ImportLimits.DEFAULT.withMaxUnpackedBytes(1000));
        assertThatThrownBy(() -> layer(t, new TestTar().file("a", "x".repeat(600)).file("b", "y".repeat(600))
                .bytes())).hasMessageContaining("unpacks to more than 1000 bytes (member b)");
        assertThat(t.root().resolve("b")).doesNotExist();
    }

    @Test
    void extendedAttributesAreKeptAsideAndTheirBytesOverEveryLayerAreBounded() throws IOException {
        RootTree t = tree(ImportLimits.DEFAULT.withXattrLimits(64, 1 << 16, 3000));
        layer(t, new TestTar().pax("SCHILY.xattr.security.capability", TarReaderTest.CAP).file("ping", "p")
                .pax("SCHILY.xattr.user.a", new byte[1500]).file("a", "x").bytes());
        assertThat(t.meta().get("ping").xattrs().get("security.capability")).isEqualTo(TarReaderTest.CAP);
        assertThat(t.meta().get("a").xattrs()).containsOnlyKeys("user.a");
        assertThat(Files.readAllBytes(t.root().resolve("ping"))).as("the host's file has only the content")
                .isEqualTo("p".getBytes());
        assertThatThrownBy(() -> layer(t, new TestTar().pax("SCHILY.xattr.user.b", new byte[1500]).file("b", "y")
                .bytes())).hasMessageContaining("extended attributes hold more than 3000 bytes (at b)");
    }

    /** Whatever names and links a layer holds, nothing is ever written outside the root. */
    @Property(tries = 300)
    void nothingIsEverWrittenOutsideTheRoot(@ForAll("hostileLayers") List<String[]> members) throws IOException {
        Path base = Files.createTempDirectory("kosa8-roottree");
        try {
            Path root = Files.createDirectory(base.resolve("root"));
            RootTree t = new RootTree(root, ImportLimits.DEFAULT);
            TestTar tar = new TestTar();
            for (String[] m : members) {
                switch (m[0]) {
                    case "f" -> tar.file(m[1], "x");
                    case "d" -> tar.dir(m[1]);
                    case "s" -> tar.symlink(m[1], m[2]);
                    default -> tar.hardlink(m[1], m[2]);
                }
            }
            try {
                layer(t, tar.bytes());
            } catch (KosaException e) {
                assertThat(e.getMessage()).startsWith("layer: ");
            }
            try (Stream<Path> s = Files.list(base)) {
                assertThat(s.map(p -> p.getFileName().toString()).toList()).containsExactly("root");
            }
        } finally {
            dev.kosa8.host.FileTrees.delete(base);
        }
    }

    @Provide
    Arbitrary<List<String[]>> hostileLayers() {
        Arbitrary<String> part = Arbitraries.of("a", "b", "..", ".", "", ".wh.a", ".wh..wh..opq", "/", "x");
        Arbitrary<String> path = part.list().ofMinSize(1).ofMaxSize(4).map(l -> String.join("/", l))
                .filter(s -> !s.isEmpty() && s.length() < 90);
        Arbitrary<String> target = Arbitraries.of("..", "../..", "/", "/tmp", "a", "../root", "a/b", "x");
        Arbitrary<String[]> member = Arbitraries.of("f", "d", "s", "h").flatMap(kind -> path.flatMap(p ->
                target.map(tg -> new String[] {kind, p, tg})));
        return member.list().ofMaxSize(10);
    }
}
