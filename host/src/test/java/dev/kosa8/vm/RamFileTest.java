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

    @Test
    void pagesWrittenThroughASharedMappingAndNotYetWrittenBackAreCopied(@TempDir Path dir) throws Exception {
        // as QEMU writes the guest's RAM: through MAP_SHARED, the page cache ahead of the disk
        Path live = dir.resolve("live");
        RamFile.fresh(live);
        RamFile.reserve(live, 32 * MIB);
        byte[] page = new byte[4096];
        new Random(11).nextBytes(page);
        try (var ch = java.nio.channels.FileChannel.open(live, java.nio.file.StandardOpenOption.READ,
                java.nio.file.StandardOpenOption.WRITE)) {
            var map = ch.map(java.nio.channels.FileChannel.MapMode.READ_WRITE, 0, 32 * MIB);
            map.put((int) (17 * MIB + 8192), page); // never forced: still only in the page cache
            map.put(0, page);
            assertThat(Files.size(live)).as("reserved whole").isEqualTo(32 * MIB);
            RamFile.Copy c = RamFile.copy(live, dir.resolve("copy"));
            assertThat(Files.mismatch(live, dir.resolve("copy"))).as("the written pages are in the copy").isEqualTo(-1);
            assertThat(c.bytes()).as("the reserved but untouched blocks are holes to SEEK_DATA, not copied")
                    .isLessThan(4 * MIB);
        }
    }

    @Test
    void aFileWhoseLengthIsNoWholeNumberOfPagesIsCopiedToItsLastByteAndZeroPagesBetweenReadAsZeros(
            @TempDir Path dir) throws Exception {
        Path odd = dir.resolve("odd");
        byte[] b = new byte[3 * 4096 + 904];
        b[0] = 1; // page 0: data; page 1: zeros; page 2: data at its end; the last 904 bytes: data at the very end
        b[3 * 4096 - 1] = 2;
        b[b.length - 1] = 3;
        Files.write(odd, b);
        RamFile.Copy c = RamFile.copy(odd, dir.resolve("odd.copy"));
        assertThat(Files.readAllBytes(dir.resolve("odd.copy"))).isEqualTo(b);
        assertThat(c.bytes()).as("the zero page left a hole").isEqualTo(b.length - 4096);
    }
}
