package dev.kosa8.checkpoint;

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

/** {@link FileSpace}: a file's allocated bytes, as {@code du} and {@code qemu-img info} count them. */
class FileSpaceTest {
    @TempDir
    Path dir;

    @Test
    void aSparseFileTakesTheBlocksWrittenNotItsSize() throws Exception {
        Path sparse = dir.resolve("sparse");
        try (RandomAccessFile f = new RandomAccessFile(sparse.toFile(), "rw")) {
            f.setLength(64L << 20);
            f.seek(1 << 20);
            f.write(bytes(8192)); // not zeros, which a compressing file system would store in nothing
            f.getFD().sync();
        }
        long allocated = FileSpace.allocated(sparse);
        assertThat(allocated).isBetween(8192L, 1L << 20);
        assertThat(allocated).isEqualTo(512 * Long.parseLong(run("stat", "-c", "%b", sparse.toString()).strip()));
    }

    @Test
    void aDisksAllocatedBytesAreWhatQemuImgCallsItsActualSize() throws Exception {
        Path disk = dir.resolve("root.qcow2");
        run("qemu-img", "create", "-q", "-f", "qcow2", disk.toString(), "1G");
        run("qemu-io", "-f", "qcow2", "-c", "write -P 7 0 3M", "-c", "write -P 9 512M 1M", disk.toString());
        long actual = new ObjectMapper().readTree(run("qemu-img", "info", "-U", "--output=json", disk.toString()))
                .get("actual-size").asLong();
        assertThat(FileSpace.allocated(disk)).isEqualTo(actual).isGreaterThan(4L << 20);
    }

    @Test
    void aLinkIsNotFollowedAndAMissingFileIsAnError() throws Exception {
        Path big = dir.resolve("big");
        Files.write(big, bytes(1 << 20));
        Path link = Files.createSymbolicLink(dir.resolve("link"), big);
        assertThat(FileSpace.allocated(link)).isLessThan(FileSpace.allocated(big));
        assertThatThrownBy(() -> FileSpace.allocated(dir.resolve("missing"))).isInstanceOf(IOException.class);
    }

    private static byte[] bytes(int n) {
        byte[] b = new byte[n];
        new java.util.Random(7).nextBytes(b);
        return b;
    }

    private static String run(String... argv) throws Exception {
        Process p = new ProcessBuilder(new ArrayList<>(List.of(argv))).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(p.waitFor()).as(out).isZero();
        return out;
    }
}
