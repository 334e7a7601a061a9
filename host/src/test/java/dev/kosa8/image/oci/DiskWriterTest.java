package dev.kosa8.image.oci;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kosa8.host.HostCommand;
import dev.kosa8.host.KosaException;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
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

    private static String stat(Path raw, String path) {
        return HostCommand.of("debugfs", "-R", "stat " + DiskWriter.quote(path), raw.toString())
                .run(KosaException.Kind.IMAGE, "debugfs stat");
    }
}
