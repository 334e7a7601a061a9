package dev.kosa8.vm;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@link DiskChain} on real qcow2 chains, as {@code qemu-img} makes a sandbox's disk over a template's and an image's. */
class DiskChainTest {
    @TempDir
    Path dir;

    private String qemuImg(String... args) throws Exception {
        List<String> argv = new ArrayList<>(List.of("qemu-img"));
        argv.addAll(List.of(args));
        Process p = new ProcessBuilder(argv).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(p.waitFor()).as(out).isZero();
        return out;
    }

    @Test
    void aSandboxDiskRestsOnItsTemplatesAndTheImagesAsQemuWouldOpenThem() throws Exception {
        Path image = Files.createDirectories(dir.resolve("images/rootfs")).resolve("rootfs.qcow2");
        Path template = Files.createDirectories(dir.resolve("templates/t1")).resolve("disk.qcow2");
        Path sandbox = Files.createDirectories(dir.resolve("sandboxes/abc")).resolve("root.qcow2");
        qemuImg("create", "-q", "-f", "qcow2", image.toString(), "64M");
        qemuImg("create", "-q", "-f", "qcow2", "-F", "qcow2", "-b", image.toString(), template.toString());
        // a relative name, as another tool may write it: resolved against the image that names it
        qemuImg("create", "-q", "-f", "qcow2", "-F", "qcow2", "-b", "../../templates/t1/disk.qcow2",
                sandbox.toString());
        assertThat(DiskChain.backingFiles(sandbox)).containsExactly(template, image);
        assertThat(DiskChain.backingFiles(image)).isEmpty();
        assertThat(DiskChain.backingFiles(dir.resolve("missing.qcow2"))).isEmpty();
        Path raw = dir.resolve("raw.img");
        Files.write(raw, new byte[4096]);
        assertThat(DiskChain.backingFiles(raw)).as("not qcow2: no backing file").isEmpty();
    }

    @Test
    void theVirtualSizeIsWhatQemuImgSaysForQcow2OfEitherVersionAndForARawFile() throws Exception {
        Path image = dir.resolve("rootfs.qcow2");
        Path overlay = dir.resolve("root.qcow2");
        Path old = dir.resolve("v2.qcow2");
        qemuImg("create", "-q", "-f", "qcow2", image.toString(), "3G");
        // an overlay given its own size, larger than its backing file's, as a sandbox's disk may be
        qemuImg("create", "-q", "-f", "qcow2", "-F", "qcow2", "-b", image.toString(), overlay.toString(), "5368709632");
        qemuImg("create", "-q", "-f", "qcow2", "-o", "compat=0.10", old.toString(), "100M");
        Path raw = dir.resolve("raw.img");
        Files.write(raw, new byte[12289]); // not a whole sector: QEMU rounds it up
        for (Path disk : List.of(image, overlay, old, raw)) {
            long expected = new ObjectMapper().readTree(qemuImg("info", "-U", "--output=json", disk.toString()))
                    .get("virtual-size").asLong();
            assertThat(DiskChain.virtualSize(disk)).as(disk.toString()).isEqualTo(expected);
        }
        assertThat(DiskChain.virtualSize(overlay)).isEqualTo(5368709632L);
        assertThat(DiskChain.virtualSize(raw)).isEqualTo(12800);
        try (RandomAccessFile f = new RandomAccessFile(image.toFile(), "rw")) {
            f.seek(24);
            f.writeLong(-1);
        }
        assertThatThrownBy(() -> DiskChain.virtualSize(image)).isInstanceOf(IOException.class)
                .hasMessageContaining("damaged qcow2 header");
        Path cut = dir.resolve("cut.qcow2");
        Files.write(cut, java.util.Arrays.copyOf(Files.readAllBytes(old), 20));
        assertThatThrownBy(() -> DiskChain.virtualSize(cut)).isInstanceOf(IOException.class)
                .hasMessageContaining("cut short");
        assertThatThrownBy(() -> DiskChain.virtualSize(dir.resolve("missing.qcow2"))).isInstanceOf(IOException.class)
                .hasMessageContaining("does not exist");
    }

    @Test
    void aNameThatIsNotAPathOrPointsPastTheFileIsRefused() throws Exception {
        Path disk = dir.resolve("root.qcow2");
        qemuImg("create", "-q", "-f", "qcow2", disk.toString(), "64M");
        writeBackingName(disk, "json:{\"file.filename\":\"/etc/shadow\"}");
        assertThatThrownBy(() -> DiskChain.backingFiles(disk)).isInstanceOf(IOException.class)
                .hasMessageContaining("not a file path");
        try (RandomAccessFile f = new RandomAccessFile(disk.toFile(), "rw")) {
            f.seek(8);
            f.writeLong(f.length() - 4);
            f.writeInt(100);
        }
        assertThatThrownBy(() -> DiskChain.backingFiles(disk)).isInstanceOf(IOException.class)
                .hasMessageContaining("damaged backing file name");
    }

    @Test
    void aLoopingChainEndsAtItsDepthLimit() throws Exception {
        Path a = dir.resolve("a.qcow2");
        qemuImg("create", "-q", "-f", "qcow2", a.toString(), "64M");
        writeBackingName(a, a.toString());
        assertThatThrownBy(() -> DiskChain.backingFiles(a)).isInstanceOf(IOException.class)
                .hasMessageContaining("deeper than " + DiskChain.MAX_DEPTH);
    }

    /** Points a qcow2 header's backing file name at {@code name}, written at the end of the file. */
    private static void writeBackingName(Path disk, String name) throws IOException {
        byte[] bytes = name.getBytes(StandardCharsets.UTF_8);
        try (RandomAccessFile f = new RandomAccessFile(disk.toFile(), "rw")) {
            long at = f.length();
            f.seek(at);
            f.write(bytes);
            f.seek(8);
            f.writeLong(at);
            f.writeInt(bytes.length);
        }
    }
}
