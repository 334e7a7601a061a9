package dev.kosa8.image.oci;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.kosa8.host.HostCommand;
import dev.kosa8.host.KosaException;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HexFormat;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The imported disk, read back with debugfs: owners, modes and devices as the layer said, kosa8's files apart. */
class DiskWriterTest {
    @TempDir
    Path tmp;

    @Test
    void theDiskHoldsTheLayersOwnersModesAndDevicesAndKosa8sFilesApart() throws IOException {
        Path stage = Files.createDirectory(tmp.resolve("stage"));
        RootTree t = new RootTree(Files.createDirectory(stage.resolve(DiskWriter.ROOTFS)), ImportLimits.DEFAULT);
        t.beginLayer();
        byte[] layer = new TestTar().dir("home/app/", 0700, 1000, 1001).file("usr/bin/su", 04755, 0, 0,
                        new byte[] {1, 2}).symlink("bin/sh", "busybox").device("dev/null", '3', 1, 3)
                .file("odd \"name\" here", "q").bytes();
        TarReader r = new TarReader(new ByteArrayInputStream(layer), ImportLimits.DEFAULT, "layer");
        for (TarEntry e = r.next(); e != null; e = r.next()) {
            t.apply(e, r.content(), "layer");
        }
        Files.createDirectories(stage.resolve(DiskWriter.KOSA8).resolve("jre"));
        Path disk = tmp.resolve("disk.qcow2");
        DiskWriter.write(stage, t, 0, disk, tmp.resolve("log"));
        Path raw = tmp.resolve("raw");
        HostCommand.of("qemu-img", "convert", "-O", "raw", disk.toString(), raw.toString())
                .run(KosaException.Kind.IMAGE, "test");
        assertThat(stat(raw, "/rootfs/home/app")).contains("User:  1000", "Group:  1001", "Mode:  0700")
                .contains("Type: directory");
        assertThat(stat(raw, "/rootfs/usr/bin/su")).contains("User:     0", "Mode:  04755", "Type: regular");
        assertThat(stat(raw, "/rootfs/dev/null")).contains("Type: character special");
        assertThat(stat(raw, "/rootfs/bin/sh")).contains("Type: symlink");
        assertThat(stat(raw, "/rootfs/odd \"name\" here")).contains("Type: regular");
        assertThat(stat(raw, "/kosa8/layout")).contains("Type: regular");
        assertThat(t.root().resolve("dev/null")).as("no device node on the host").doesNotExist();
    }

    @Test
    void extendedAttributesAreWrittenIntoTheDiskByteForByteNeverOnTheHost() throws IOException {
        Path stage = Files.createDirectory(tmp.resolve("stage"));
        RootTree t = new RootTree(Files.createDirectory(stage.resolve(DiskWriter.ROOTFS)), ImportLimits.DEFAULT);
        t.beginLayer();
        byte[] odd = {'"', '\\', 0, '\n', ' ', (byte) 0xff, 'z'};
        byte[] layer = new TestTar().dir("bin/").pax("SCHILY.xattr.security.capability", TarReaderTest.CAP)
                .file("bin/ping", 0755, 0, 0, new byte[] {1}).pax("SCHILY.xattr.user.kosa8", "hello")
                .pax("SCHILY.xattr.trusted.odd-value_1", odd).pax("SCHILY.xattr.system.nfs4_acl", "skipped")
                .file("etc \"x\"", "q").hardlink("bin/ping2", "bin/ping").bytes();
        TarReader r = new TarReader(new ByteArrayInputStream(layer), ImportLimits.DEFAULT, "layer");
        for (TarEntry e = r.next(); e != null; e = r.next()) {
            t.apply(e, r.content(), "layer");
        }
        Files.createDirectories(stage.resolve(DiskWriter.KOSA8));
        Path disk = tmp.resolve("disk.qcow2");
        DiskWriter.write(stage, t, 0, disk, tmp.resolve("log"));
        Path raw = tmp.resolve("raw");
        HostCommand.of("qemu-img", "convert", "-O", "raw", disk.toString(), raw.toString())
                .run(KosaException.Kind.IMAGE, "test");
        assertThat(eaGet(raw, "/rootfs/bin/ping", "security.capability")).isEqualTo(TarReaderTest.CAP);
        assertThat(eaGet(raw, "/rootfs/bin/ping2", "security.capability")).as("a hard link is the same inode")
                .isEqualTo(TarReaderTest.CAP);
        assertThat(eaGet(raw, "/rootfs/etc \"x\"", "user.kosa8")).isEqualTo("hello".getBytes());
        assertThat(eaGet(raw, "/rootfs/etc \"x\"", "trusted.odd-value_1")).isEqualTo(odd);
        assertThat(debugfs(raw, "ea_list " + DiskWriter.quote("/rootfs/etc \"x\"")))
                .as("a namespace ext4 does not store is left out").doesNotContain("nfs4");
        assertThat(java.nio.file.Files.getFileStore(t.root()).supportsFileAttributeView("user")
                ? Files.getFileAttributeView(t.root().resolve("etc \"x\""),
                        java.nio.file.attribute.UserDefinedFileAttributeView.class).list() : List.of())
                .as("nothing set on the host's file").isEmpty();
    }

    /**
     * debugfs reads its script in lines of 8 KiB and runs what is past that as a command of its own: a path of
     * quotes (each doubled in the script) long enough to push an attribute's name past the cut would let an image
     * name a debugfs command (`logdump FILE` truncates a host file). Such a line is refused, never written; and no
     * command ran, so nothing of the host's was touched.
     */
    @Test
    void aLineDebugfsWouldCutIsRefusedNotRun() throws IOException {
        String quotes = "\"".repeat(250);
        StringBuilder deep = new StringBuilder();
        for (int i = 0; i < 16; i++) {
            deep.append(quotes).append('/');
        }
        deep.append("f");
        var meta = new java.util.LinkedHashMap<String, RootTree.Meta>();
        meta.put(deep.toString(), new RootTree.Meta(TarEntry.Type.FILE, 0644, 0, 0, 0, 0,
                java.util.Map.of("user.x" + "y".repeat(100) + "logdump", new byte[] {'v'})));
        Path script = tmp.resolve("script");
        assertThatThrownBy(() -> DiskWriter.writeScript(meta, script, tmp.resolve("values")))
                .isInstanceOf(KosaException.class).hasMessageContaining("too long for kosa8's disk writer")
                .hasMessageContaining("at most " + DiskWriter.MAX_LINE);
        // and every line a real image's script has is within the bound
        var fine = new java.util.LinkedHashMap<String, RootTree.Meta>();
        fine.put("a/\"b\"/" + "c".repeat(2000), new RootTree.Meta(TarEntry.Type.FILE, 0644, 0, 0, 0, 0,
                java.util.Map.of("user.big", new byte[256])));
        DiskWriter.writeScript(fine, script, tmp.resolve("values"));
        assertThat(Files.readAllLines(script)).allSatisfy(l -> assertThat(l.length() + 1)
                .isLessThanOrEqualTo(DiskWriter.MAX_LINE));
    }

    /**
     * The attributes as a real writer encodes them: GNU tar ({@code --xattrs --format=posix}, raw bytes in
     * {@code SCHILY.xattr.*}, as Docker's Go tar does) of a host file given {@code cap_net_raw+ep} by the real
     * {@code setcap} and a {@code user.kosa8} attribute; zstd-compressed by the real {@code zstd}, imported, and
     * read back from the disk by debugfs equal to what the host's kernel reports for the original.
     */
    @Test
    void gnuTarsAttributesOfASetcapFileReachTheDiskThroughAZstdLayer() throws Exception {
        Path files = Files.createDirectories(tmp.resolve("files/bin"));
        Path ping = Files.write(files.resolve("ping"), new byte[] {0x7f, 'E', 'L', 'F'});
        Files.getFileAttributeView(ping, java.nio.file.attribute.UserDefinedFileAttributeView.class)
                .write("kosa8", java.nio.ByteBuffer.wrap("hello".getBytes()));
        run(tmp, "setcap", "cap_net_raw+ep", ping.toString());
        byte[] cap = HexFormat.of().parseHex(run(tmp, "python3", "-c", "import os,sys; print(os.getxattr(sys.argv[1],"
                + " 'security.capability').hex())", ping.toString()).strip());
        Path tar = tmp.resolve("layer.tar");
        run(tmp.resolve("files"), "tar", "--xattrs", "--xattrs-include=*", "--format=posix", "--numeric-owner",
                "--owner=0", "--group=0", "-cf", tar.toString(), "bin");
        byte[] layer = Files.readAllBytes(tar);
        byte[] cfg = TestImages.config(List.of(layer), List.of(), "", "", List.of());
        Path archive = TestImages.write(tmp.resolve("image.tar"), TestImages.ociArchive(List.of(layer), cfg, "x:1",
                "zstd"));
        Path stage = Files.createDirectory(tmp.resolve("stage"));
        RootTree t = new RootTree(Files.createDirectory(stage.resolve(DiskWriter.ROOTFS)), ImportLimits.DEFAULT);
        try (ImageArchive a = ImageArchive.open(archive, Files.createDirectory(tmp.resolve("m")),
                ImportLimits.DEFAULT)) {
            ImageImport.apply(a, a.layers().getFirst(), t, "layer 1", ImportLimits.DEFAULT);
        }
        Files.createDirectories(stage.resolve(DiskWriter.KOSA8));
        Path disk = tmp.resolve("disk.qcow2");
        DiskWriter.write(stage, t, 0, disk, tmp.resolve("log"));
        Path raw = tmp.resolve("raw");
        HostCommand.of("qemu-img", "convert", "-O", "raw", disk.toString(), raw.toString())
                .run(KosaException.Kind.IMAGE, "test");
        assertThat(cap).hasSizeGreaterThanOrEqualTo(20);
        assertThat(eaGet(raw, "/rootfs/bin/ping", "security.capability")).isEqualTo(cap);
        assertThat(eaGet(raw, "/rootfs/bin/ping", "user.kosa8")).isEqualTo("hello".getBytes());
    }

    private static String run(Path dir, String... argv) throws Exception {
        Process p = new ProcessBuilder(argv).directory(dir.toFile()).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes());
        assertThat(p.waitFor()).as(String.join(" ", argv) + ": " + out).isZero();
        return out;
    }

    /** An attribute ext4 cannot hold (over the inode's and its block's room) fails the import, naming the error. */
    @Test
    void anXattrTheFileSystemCannotHoldFailsTheImportClearly() throws IOException {
        Path stage = Files.createDirectory(tmp.resolve("stage"));
        RootTree t = new RootTree(Files.createDirectory(stage.resolve(DiskWriter.ROOTFS)), ImportLimits.DEFAULT);
        t.beginLayer();
        byte[] layer = new TestTar().pax("SCHILY.xattr.user.huge", new byte[8000]).file("f", "x").bytes();
        TarReader r = new TarReader(new ByteArrayInputStream(layer), ImportLimits.DEFAULT, "layer");
        for (TarEntry e = r.next(); e != null; e = r.next()) {
            t.apply(e, r.content(), "layer");
        }
        Files.createDirectories(stage.resolve(DiskWriter.KOSA8));
        assertThatThrownBy(() -> DiskWriter.write(stage, t, 0, tmp.resolve("disk.qcow2"), tmp.resolve("log")))
                .isInstanceOf(KosaException.class).hasMessageContaining("debugfs could not write")
                .hasMessageContaining("Insufficient space");
        assertThat(tmp.resolve("disk.qcow2")).doesNotExist();
    }

    private byte[] eaGet(Path raw, String path, String name) throws IOException {
        Path out = tmp.resolve("ea.out");
        Files.deleteIfExists(out);
        debugfs(raw, "ea_get -f " + out + " " + DiskWriter.quote(path) + " " + DiskWriter.quote(name));
        return Files.readAllBytes(out);
    }

    private static String debugfs(Path raw, String request) {
        return HostCommand.of("debugfs", "-R", request, raw.toString()).run(KosaException.Kind.IMAGE, "debugfs");
    }

    private static String stat(Path raw, String path) {
        return HostCommand.of("debugfs", "-R", "stat " + DiskWriter.quote(path), raw.toString())
                .run(KosaException.Kind.IMAGE, "debugfs stat");
    }
}
