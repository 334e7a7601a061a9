package dev.kosa8.vm;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.RandomAccessFile;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@link RamFile}: a guest's RAM file copied whole, its holes kept holes. */
class RamFileTest {
    static final long MIB = 1 << 20;

    /** A 64 MiB file of holes with data at the start, in the middle (not block-aligned) and at the very end. */
    static Path sparseRam(Path dir) throws Exception {
        Path f = dir.resolve("ram");
        Random r = new Random(7);
        try (RandomAccessFile raf = new RandomAccessFile(f.toFile(), "rw")) {
            raf.setLength(64 * MIB);
            for (long at : new long[] {0, 20 * MIB + 12_345, 64 * MIB - 4096}) {
                byte[] b = new byte[at == 0 ? (int) (3 * MIB) : 4096];
                r.nextBytes(b);
                raf.seek(at);
                raf.write(b);
            }
        }
        return f;
    }

    @Test
    void aCopyHoldsTheSameBytesAndOnlyTheDataTakesSpace(@TempDir Path dir) throws Exception {
        Path src = sparseRam(dir);
        Path dst = dir.resolve("copy");
        RamFile.Copy c = RamFile.copy(src, dst);
        assertThat(Files.mismatch(src, dst)).as("byte for byte").isEqualTo(-1);
        assertThat(Files.size(dst)).isEqualTo(64 * MIB);
        long data = RamFile.dataBytes(src);
        assertThat(data).as("the source's data, not its length").isBetween(3 * MIB, 8 * MIB);
        assertThat(c.bytes()).isEqualTo(data);
        assertThat(RamFile.dataBytes(dst)).as("the copy's holes stay holes").isLessThanOrEqualTo(data);
        assertThat(Files.getPosixFilePermissions(dst)).as("the guest's memory is the owner's alone")
                .isEqualTo(PosixFilePermissions.fromString("rw-------"));
    }

    @Test
    void aFileOfHolesAloneCopiesAsHolesAndAnEmptyOneAsEmpty(@TempDir Path dir) throws Exception {
        Path holes = dir.resolve("holes");
        try (RandomAccessFile raf = new RandomAccessFile(holes.toFile(), "rw")) {
            raf.setLength(16 * MIB);
        }
        RamFile.Copy c = RamFile.copy(holes, dir.resolve("holes.copy"));
        assertThat(c.bytes()).isZero();
        assertThat(Files.size(dir.resolve("holes.copy"))).isEqualTo(16 * MIB);
        assertThat(Files.mismatch(holes, dir.resolve("holes.copy"))).isEqualTo(-1);
        Path empty = Files.createFile(dir.resolve("empty"));
        assertThat(RamFile.copy(empty, dir.resolve("empty.copy")).bytes()).isZero();
        assertThat(dir.resolve("empty.copy")).isEmptyFile();
    }

    @Test
    void aCopyNeverReplacesAFileAndAFailedOneLeavesNothing(@TempDir Path dir) throws Exception {
        Path src = sparseRam(dir);
        Path there = Files.writeString(dir.resolve("there"), "someone's");
        assertThatThrownBy(() -> RamFile.copy(src, there)).isInstanceOf(FileAlreadyExistsException.class);
        assertThat(there).hasContent("someone's");
        assertThatThrownBy(() -> RamFile.copy(dir.resolve("missing"), dir.resolve("out")))
                .isInstanceOf(java.nio.file.NoSuchFileException.class);
        assertThat(dir.resolve("out")).doesNotExist();
    }

    @Test
    void aFreshFileIsEmptyWhateverWasThere(@TempDir Path dir) throws Exception {
        Path f = sparseRam(dir);
        RamFile.fresh(f);
        assertThat(f).isEmptyFile();
        RamFile.fresh(dir.resolve("sub/new"));
        assertThat(dir.resolve("sub/new")).isEmptyFile();
    }
}
