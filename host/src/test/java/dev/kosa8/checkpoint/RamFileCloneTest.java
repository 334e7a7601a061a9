package dev.kosa8.checkpoint;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kosa8.vm.RamFile;
import java.io.RandomAccessFile;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Random;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@link RamFile#copy} where the file system has reflinks (a loop XFS, {@link ReflinkVolume}): a guest's RAM file
 * is cloned into a checkpoint, taking no new space, and a machine restored from the clone writing its own copy
 * leaves the checkpoint's as it was.
 */
class RamFileCloneTest {
    @TempDir
    Path tmp;
    ReflinkVolume xfs;

    @AfterEach
    void unmount() throws Exception {
        if (xfs != null) {
            xfs.close();
        }
    }

    @Test
    void aRamFileIsClonedIntoTheCheckpointAndARestoredMachinesWritesLeaveTheCloneAsItWas() throws Exception {
        xfs = ReflinkVolume.mount(tmp);
        Path live = xfs.mount.resolve("memory-main");
        byte[] data = new byte[96 << 20];
        new Random(3).nextBytes(data);
        try (RandomAccessFile f = new RandomAccessFile(live.toFile(), "rw")) {
            f.setLength(256L << 20);
            f.write(data);
        }
        long before = xfs.usedBytes();
        RamFile.Copy saved = RamFile.copy(live, xfs.mount.resolve("c1.memory"));
        assertThat(saved.cloned()).as("cloned, not copied").isTrue();
        assertThat(saved.bytes()).isEqualTo(data.length);
        assertThat(xfs.usedBytes() - before).as("the clone shares the file's blocks").isLessThan(8L << 20);
        assertThat(Files.mismatch(live, xfs.mount.resolve("c1.memory"))).isEqualTo(-1);

        // a rewind: the checkpoint's copy cloned into the new machine's file, which the guest then writes
        Path next = xfs.mount.resolve("memory-alt");
        assertThat(RamFile.copy(xfs.mount.resolve("c1.memory"), next).cloned()).isTrue();
        try (RandomAccessFile f = new RandomAccessFile(next.toFile(), "rw")) {
            f.seek(1 << 20);
            f.write(new byte[4096]);
        }
        byte[] kept = Files.readAllBytes(xfs.mount.resolve("c1.memory"));
        assertThat(java.util.Arrays.equals(kept, 0, data.length, data, 0, data.length))
                .as("the checkpoint's copy is as it was").isTrue();
    }
}
