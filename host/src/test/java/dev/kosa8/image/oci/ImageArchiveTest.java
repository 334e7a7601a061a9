package dev.kosa8.image.oci;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.kosa8.host.KosaException;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class ImageArchiveTest {
    @TempDir
    Path tmp;

    static final byte[] BASE = new TestTar().dir("bin/").file("bin/busybox", 0755, 0, 0, "bb".getBytes())
            .symlink("bin/sh", "busybox").file("etc/old", "o").bytes();
    static final byte[] TOP = new TestTar().file("etc/.wh.old", "").file("etc/motd", "hi").bytes();

    private ImageArchive open(byte[] archive, ImportLimits limits) throws IOException {
        Path f = TestImages.write(tmp.resolve("image.tar"), archive);
        return ImageArchive.open(f, Files.createDirectories(tmp.resolve("members")), limits);
    }

    private static byte[] config() {
        return TestImages.config(List.of(BASE, TOP), List.of("sh", "-c", "echo hi"), "1000", "/srv",
                List.of("PATH=/bin", "A=1"));
    }

    @Test
    void anOciLayoutGivesItsConfigLayersAndName() throws IOException {
        try (ImageArchive a = open(TestImages.ociArchive(List.of(BASE, TOP), config(), "tools:1"),
                ImportLimits.DEFAULT)) {
            assertThat(a.refName()).isEqualTo("tools:1");
            assertThat(a.layers()).hasSize(2).allSatisfy(l -> assertThat(l.compression()).isEqualTo("gzip"));
            assertThat(a.config().cmd()).containsExactly("sh", "-c", "echo hi");
            assertThat(a.config().user()).isEqualTo("1000");
            assertThat(a.config().workingDir()).isEqualTo("/srv");
            assertThat(a.config().envMap()).containsEntry("A", "1");
            RootTree t = new RootTree(Files.createDirectory(tmp.resolve("root")), ImportLimits.DEFAULT);
            for (ImageArchive.Layer l : a.layers()) {
                ImageImport.apply(a, l, t, "layer", ImportLimits.DEFAULT);
            }
            assertThat(t.root().resolve("etc/motd")).hasContent("hi");
            assertThat(t.root().resolve("etc/old")).doesNotExist();
        }
        try (Stream<Path> s = Files.list(tmp.resolve("members"))) {
            assertThat(s.toList()).as("the members are deleted on close").isEmpty();
        }
    }

    @Test
    void aDockerSaveTarballGivesItsConfigLayersAndTag() throws IOException {
        try (ImageArchive a = open(TestImages.dockerArchive(List.of(BASE, TOP), config(), "busybox:latest"),
                ImportLimits.DEFAULT)) {
            assertThat(a.refName()).isEqualTo("busybox:latest");
            assertThat(a.layers()).extracting(ImageArchive.Layer::compression).containsExactly("none", "none");
            RootTree t = new RootTree(Files.createDirectory(tmp.resolve("root")), ImportLimits.DEFAULT);
            for (ImageArchive.Layer l : a.layers()) {
                ImageImport.apply(a, l, t, "layer", ImportLimits.DEFAULT);
            }
            assertThat(Files.readSymbolicLink(t.root().resolve("bin/sh"))).hasToString("busybox");
        }
    }

    @Test
    void aBlobWhoseDigestDoesNotMatchIsRefused() throws IOException {
        byte[] archive = TestImages.ociArchive(List.of(BASE), TestImages.config(List.of(BASE), List.of(), "", "",
                List.of()), "x:1");
        byte[] layerGz = TestImages.gzip(BASE);
        int at = indexOf(archive, layerGz);
        archive[at + layerGz.length - 9] ^= 0x55; // inside the gzip trailer: same length, other bytes
        assertThatThrownBy(() -> open(archive, ImportLimits.DEFAULT)).isInstanceOf(KosaException.class)
                .hasMessageContaining("does not match its digest");
    }

    @Test
    void aLayerWhoseContentDoesNotMatchItsDiffIdIsRefused() throws IOException {
        byte[] other = new TestTar().file("x", "y").bytes();
        byte[] cfg = TestImages.config(List.of(other), List.of(), "", "", List.of());
        try (ImageArchive a = open(TestImages.dockerArchive(List.of(BASE), cfg, "x:1"), ImportLimits.DEFAULT)) {
            RootTree t = new RootTree(Files.createDirectory(tmp.resolve("root")), ImportLimits.DEFAULT);
            assertThatThrownBy(() -> ImageImport.apply(a, a.layers().getFirst(), t, "layer 1",
                    ImportLimits.DEFAULT)).hasMessageContaining("does not match the config's diff id");
        }
    }

    @Test
    void aTruncatedLayerIsRefused() throws IOException {
        byte[] cut = java.util.Arrays.copyOf(BASE, 700);
        byte[] cfg = TestImages.config(List.of(cut), List.of(), "", "", List.of());
        try (ImageArchive a = open(TestImages.dockerArchive(List.of(cut), cfg, "x:1"), ImportLimits.DEFAULT)) {
            RootTree t = new RootTree(Files.createDirectory(tmp.resolve("root")), ImportLimits.DEFAULT);
            assertThatThrownBy(() -> ImageImport.apply(a, a.layers().getFirst(), t, "layer 1",
                    ImportLimits.DEFAULT)).hasMessageContaining("truncated");
        }
    }

    @Test
    void aGzipBombStopsAtTheUnpackedBound() throws IOException {
        byte[] zeros = new byte[8 << 20];
        byte[] bomb = new TestTar().file("zeros", 0644, 0, 0, zeros).bytes();
        byte[] cfg = TestImages.config(List.of(bomb), List.of(), "", "", List.of());
        byte[] archive = TestImages.ociArchive(List.of(bomb), cfg, "bomb:1");
        assertThat(archive.length).as("the archive is small").isLessThan(100_000);
        ImportLimits limits = ImportLimits.DEFAULT.withMaxUnpackedBytes(1 << 20);
        try (ImageArchive a = open(archive, limits)) {
            RootTree t = new RootTree(Files.createDirectory(tmp.resolve("root")), limits);
            assertThatThrownBy(() -> ImageImport.apply(a, a.layers().getFirst(), t, "layer 1", limits))
                    .hasMessageContaining("unpacks to more than 1048576 bytes");
        }
    }

    @Test
    void zstdLayersMadeByTheZstdProgramApplyInAnOciLayoutAndADockerSaveTarball() throws IOException {
        try (ImageArchive a = open(TestImages.ociArchive(List.of(BASE, TOP), config(), "z:1", "zstd"),
                ImportLimits.DEFAULT)) {
            assertThat(a.layers()).extracting(ImageArchive.Layer::compression).containsExactly("zstd", "zstd");
            RootTree t = new RootTree(Files.createDirectory(tmp.resolve("root")), ImportLimits.DEFAULT);
            for (ImageArchive.Layer l : a.layers()) {
                ImageImport.apply(a, l, t, "layer", ImportLimits.DEFAULT);
            }
            assertThat(t.root().resolve("etc/motd")).hasContent("hi");
            assertThat(t.root().resolve("etc/old")).doesNotExist();
        }
        byte[] docker = TestImages.dockerArchive(List.of(TestImages.zstd(BASE), TestImages.zstd(TOP)), config(),
                "z:2");
        Files.delete(tmp.resolve("image.tar"));
        try (ImageArchive a = open(docker, ImportLimits.DEFAULT)) {
            assertThat(a.layers()).extracting(ImageArchive.Layer::compression).containsExactly("zstd", "zstd");
            RootTree t = new RootTree(Files.createDirectory(tmp.resolve("root2")), ImportLimits.DEFAULT);
            for (ImageArchive.Layer l : a.layers()) {
                ImageImport.apply(a, l, t, "layer", ImportLimits.DEFAULT);
            }
            assertThat(t.root().resolve("bin/busybox")).hasContent("bb");
        }
    }

    @Test
    void aZstdLayerWhoseContentIsNotItsDiffIdIsRefused() throws IOException {
        byte[] other = new TestTar().file("etc/motd", "changed").bytes();
        byte[] cfg = TestImages.config(List.of(BASE), List.of(), "", "", List.of());
        try (ImageArchive a = open(TestImages.dockerArchive(List.of(TestImages.zstd(other)), cfg, "z:1"),
                ImportLimits.DEFAULT)) {
            RootTree t = new RootTree(Files.createDirectory(tmp.resolve("root")), ImportLimits.DEFAULT);
            assertThatThrownBy(() -> ImageImport.apply(a, a.layers().getFirst(), t, "layer 1", ImportLimits.DEFAULT))
                    .hasMessageContaining("layer 1: its content does not match the config's diff id");
        }
    }

    @Test
    void aZstdBombStopsAtTheUnpackedBound() throws IOException {
        byte[] bomb = new TestTar().file("zeros", 0644, 0, 0, new byte[64 << 20]).bytes();
        byte[] cfg = TestImages.config(List.of(bomb), List.of(), "", "", List.of());
        byte[] archive = TestImages.ociArchive(List.of(bomb), cfg, "bomb:1", "zstd");
        assertThat(archive.length).as("the archive is small").isLessThan(20_000);
        ImportLimits limits = ImportLimits.DEFAULT.withMaxUnpackedBytes(1 << 20);
        try (ImageArchive a = open(archive, limits)) {
            RootTree t = new RootTree(Files.createDirectory(tmp.resolve("root")), limits);
            assertThatThrownBy(() -> ImageImport.apply(a, a.layers().getFirst(), t, "layer 1", limits))
                    .hasMessageContaining("layer 1: the image unpacks to more than 1048576 bytes");
        }
    }

    /** A bomb that hides its bytes past the archive's end (no file holds them) stops at the stream bound. */
    @Test
    void aBombPastTheTarsEndStopsAtTheLayerStreamBoundGzipAndZstd() throws IOException {
        byte[] tar = new TestTar().file("a", "x").bytes();
        byte[] padded = java.util.Arrays.copyOf(tar, tar.length + (64 << 20));
        byte[] cfg = TestImages.config(List.of(padded), List.of(), "", "", List.of());
        ImportLimits limits = ImportLimits.DEFAULT.withMaxLayerStreamBytes(1 << 20);
        for (String c : List.of("zstd", "gzip")) {
            Path f = TestImages.write(tmp.resolve(c + ".tar"), TestImages.ociArchive(List.of(padded), cfg, "b:1", c));
            try (ImageArchive a = ImageArchive.open(f, Files.createDirectories(tmp.resolve("m-" + c)), limits)) {
                RootTree t = new RootTree(Files.createDirectory(tmp.resolve("root-" + c)), limits);
                assertThatThrownBy(() -> ImageImport.apply(a, a.layers().getFirst(), t, "layer 1", limits))
                        .as(c).hasMessageContaining("layer 1: its " + c
                                + " stream decompresses to more than 1048576 bytes");
            }
        }
    }

    @Test
    void aDamagedZstdStreamOrAnUnknownCompressionIsRefusedNamingIt() throws IOException {
        byte[] z = TestImages.zstd(BASE);
        z[z.length / 2] ^= 0x55;
        z[z.length / 2 + 1] ^= 0x55;
        Path blob = TestImages.write(tmp.resolve("blob"), z);
        assertThatThrownBy(() -> {
            try (var in = LayerStream.open(blob, "zstd", ImportLimits.DEFAULT, "layer 3")) {
                in.transferTo(java.io.OutputStream.nullOutputStream());
            }
        }).isInstanceOf(KosaException.class).hasMessageContaining("layer 3: its zstd stream is damaged");
        Path cut = TestImages.write(tmp.resolve("cut"), java.util.Arrays.copyOf(TestImages.zstd(BASE), 20));
        assertThatThrownBy(() -> { // aircompressor throws a bare IOException here (LayerStreamFuzzTest found it)
            try (var in = LayerStream.open(cut, "zstd", ImportLimits.DEFAULT, "layer 5")) {
                in.transferTo(java.io.OutputStream.nullOutputStream());
            }
        }).isInstanceOf(KosaException.class).hasMessageStartingWith("layer 5: its zstd stream is damaged");
        Path big = TestImages.write(tmp.resolve("long"), TestImages.zstd(BASE, "--long=27"));
        assertThatThrownBy(() -> {
            try (var in = LayerStream.open(big, "zstd", ImportLimits.DEFAULT, "layer 4")) {
                in.transferTo(java.io.OutputStream.nullOutputStream());
            }
        }).isInstanceOf(KosaException.class).hasMessageContaining("window over 8 MiB");
        byte[] cfg = TestImages.config(List.of(BASE), List.of(), "", "", List.of());
        try (ImageArchive a = open(TestImages.ociArchive(List.of(BASE), cfg, "x:1", "bzip2"), ImportLimits.DEFAULT)) {
            RootTree t = new RootTree(Files.createDirectory(tmp.resolve("root")), ImportLimits.DEFAULT);
            assertThatThrownBy(() -> ImageImport.apply(a, a.layers().getFirst(), t, "layer 1", ImportLimits.DEFAULT))
                    .hasMessageContaining("layer 1: it is compressed with bzip2, which kosa8 does not read");
        }
    }

    @Test
    void aConfigWithAnAbsurdNumberOfLayersIsRefusedBeforeAnyIsRead() throws IOException {
        List<byte[]> many = new ArrayList<>();
        for (int i = 0; i < 200; i++) {
            many.add(new TestTar().file("f" + i, "x").bytes());
        }
        byte[] cfg = TestImages.config(many, List.of(), "", "", List.of());
        assertThatThrownBy(() -> open(TestImages.ociArchive(many, cfg, "x:1"), ImportLimits.DEFAULT))
                .hasMessageContaining("over the limit of 128");
    }

    @Test
    void anImageForAnotherArchitectureIsRefusedNamingIt() throws IOException {
        byte[] cfg = new String(TestImages.config(List.of(BASE), List.of(), "", "", List.of()),
                StandardCharsets.UTF_8).replace("amd64", "arm64").getBytes(StandardCharsets.UTF_8);
        assertThatThrownBy(() -> open(TestImages.dockerArchive(List.of(BASE), cfg, "x:1"), ImportLimits.DEFAULT))
                .hasMessageContaining("the image is for arm64");
    }

    @Test
    void aMemberNameClimbingOutOfTheArchiveIsRefused() {
        byte[] archive = new TestTar().file("../manifest.json", "[]").bytes();
        assertThatThrownBy(() -> open(archive, ImportLimits.DEFAULT)).hasMessageContaining("climbs out");
    }

    @Test
    void anArchiveThatIsNeitherLayoutIsRefused() {
        assertThatThrownBy(() -> open(new TestTar().file("hello", "x").bytes(), ImportLimits.DEFAULT))
                .hasMessageContaining("neither index.json");
    }

    private static int indexOf(byte[] hay, byte[] needle) {
        outer:
        for (int i = 0; i <= hay.length - needle.length; i++) {
            for (int j = 0; j < needle.length; j++) {
                if (hay[i + j] != needle[j]) {
                    continue outer;
                }
            }
            return i;
        }
        throw new AssertionError("not found");
    }
}
