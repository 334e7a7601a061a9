package dev.kosa8.checkpoint;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assumptions.assumeThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Random;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A fork's folder and a rewound file share the snapshot store's blocks where
 * the file system clones ({@link Clones}): measured as the space the file
 * system has in use, on a real XFS with reflinks. Where it does not (this
 * machine's ext4), the same calls copy, and the results are the same bytes.
 */
class FolderClonesTest {
    static final int FILES = 8;
    static final int FILE_BYTES = 4 << 20;

    @TempDir
    Path tmp;
    ReflinkVolume xfs;

    @BeforeEach
    void available() {
        assumeThat(Posix.AVAILABLE).isTrue();
    }

    @AfterEach
    void unmount() throws IOException {
        if (xfs != null) {
            xfs.close();
        }
    }

    /** A folder of {@link #FILES} random files of 4 MiB, a small one and an empty one; its bytes. */
    static long fill(Path folder) throws IOException {
        Files.createDirectories(folder.resolve("sub"));
        Random r = new Random(7);
        for (int i = 0; i < FILES; i++) {
            byte[] b = new byte[FILE_BYTES];
            r.nextBytes(b);
            Files.write(folder.resolve("sub/f" + i), b);
        }
        Files.writeString(folder.resolve("small.txt"), "small\n");
        Files.createFile(folder.resolve("empty"));
        return (long) FILES * FILE_BYTES;
    }

    static void assertSame(Path a, Path b) throws IOException {
        for (int i = 0; i < FILES; i++) {
            assertThat(Files.mismatch(a.resolve("sub/f" + i), b.resolve("sub/f" + i))).isEqualTo(-1L);
        }
        assertThat(Files.readString(b.resolve("small.txt"))).isEqualTo("small\n");
        assertThat(Files.size(b.resolve("empty"))).isZero();
    }

    @Test
    void fourCopiesOfAFolderCostNoNewBlocksOnAFileSystemThatClones() throws Exception {
        xfs = ReflinkVolume.mount(tmp);
        Path folder = xfs.mount.resolve("ws");
        long bytes = fill(folder);
        FolderSnapshots snapshots = new FolderSnapshots(xfs.mount.resolve("store"));
        long before = xfs.usedBytes();
        Capture c = snapshots.capture(folder, "c1");
        assertThat(c.filesCloned()).as("the store's objects: clones of the folder's files").isEqualTo(FILES + 1);
        assertThat(xfs.usedBytes() - before).as("a capture of %d bytes: blocks added", bytes).isLessThan(bytes / 8);
        // The folder's file changes after the capture; the store's clone of it does not.
        Files.writeString(folder.resolve("sub/f1"), "changed after the capture");
        Path back = Files.createDirectory(xfs.mount.resolve("back"));
        snapshots.copyTo("c1", back);
        assertThat(Files.size(back.resolve("sub/f1"))).isEqualTo(FILE_BYTES);
        Files.copy(back.resolve("sub/f1"), folder.resolve("sub/f1"), java.nio.file.StandardCopyOption.REPLACE_EXISTING);

        before = xfs.usedBytes();
        for (int n = 1; n <= 4; n++) {
            Path copy = Files.createDirectory(xfs.mount.resolve("fork-" + n));
            Restore r = snapshots.copyTo("c1", copy);
            assertThat(r.filesCloned()).as("every non-empty file cloned").isEqualTo(FILES + 1);
            assertSame(folder, copy);
        }
        long added = xfs.usedBytes() - before;
        assertThat(added).as("4 copies of %d bytes: blocks added", bytes).isLessThan(bytes / 8);

        // Copy-on-write, not a shared inode: a write to one copy reaches neither the store nor the others.
        Path f0 = xfs.mount.resolve("fork-1/sub/f0");
        byte[] changed = new byte[4096];
        try (var ch = java.nio.channels.FileChannel.open(f0, java.nio.file.StandardOpenOption.WRITE)) {
            ch.write(java.nio.ByteBuffer.wrap(changed), 0);
        }
        assertThat(Files.mismatch(f0, folder.resolve("sub/f0"))).isZero();
        assertSame(folder, xfs.mount.resolve("fork-2"));
        Path again = Files.createDirectory(xfs.mount.resolve("fork-5"));
        snapshots.copyTo("c1", again);
        assertSame(folder, again);
    }

    @Test
    void aRewoundFileIsACloneAndADamagedObjectIsStillFound() throws Exception {
        xfs = ReflinkVolume.mount(tmp);
        Path folder = xfs.mount.resolve("ws");
        fill(folder);
        Path original = Files.createDirectory(xfs.mount.resolve("original"));
        // Dated an hour on, so the files' identities are trusted and only what changed is written back.
        FolderSnapshots snapshots = new FolderSnapshots(xfs.mount.resolve("store"), FolderSnapshotsTest.LATER,
                Hooks.NONE);
        snapshots.capture(folder, "c1");
        snapshots.copyTo("c1", original);

        Files.writeString(folder.resolve("sub/f3"), "overwritten");
        Files.delete(folder.resolve("sub/f4"));
        long before = xfs.usedBytes();
        Restore r = snapshots.restore("c1", folder);
        assertThat(r.filesCloned()).isEqualTo(2);
        assertThat(xfs.usedBytes() - before).isLessThan(FILE_BYTES);
        assertSame(original, folder);

        // The clone is read back and checked as a copy is: a damaged object is refused, the file left as it was.
        Path object = objectOf(xfs.mount.resolve("store"), folder.resolve("sub/f5"));
        Files.setPosixFilePermissions(object, PosixFilePermissions.fromString("rw-r--r--"));
        try (var ch = java.nio.channels.FileChannel.open(object, java.nio.file.StandardOpenOption.WRITE)) {
            ch.write(java.nio.ByteBuffer.wrap(new byte[] {1, 2, 3}), 100);
        }
        Files.writeString(folder.resolve("sub/f5"), "current");
        assertThatThrownBy(() -> snapshots.restore("c1", folder)).isInstanceOf(IOException.class)
                .hasMessageContaining("is damaged");
        assertThat(Files.readString(folder.resolve("sub/f5"))).isEqualTo("current");
    }

    @Test
    void whereTheFileSystemCannotCloneTheSameCallsCopy() throws Exception {
        Path folder = tmp.resolve("ws");
        fill(folder);
        FolderSnapshots snapshots = new FolderSnapshots(tmp.resolve("store"));
        snapshots.capture(folder, "c1");
        Path copy = Files.createDirectory(tmp.resolve("fork"));
        Restore r = snapshots.copyTo("c1", copy);
        String type = Files.getFileStore(tmp).type();
        assumeThat(type).as("a file system without reflinks (this machine's /tmp: ext4)").isIn("ext4", "tmpfs", "ext3");
        assertThat(r.filesCloned()).isZero();
        assertThat(r.filesWritten()).isGreaterThanOrEqualTo(FILES + 2);
        assertSame(folder, copy);
    }

    private static Path objectOf(Path store, Path file) throws Exception {
        String hash = java.util.HexFormat.of().formatHex(java.security.MessageDigest.getInstance("SHA-256")
                .digest(Files.readAllBytes(file)));
        return store.resolve("objects").resolve(hash.substring(0, 2)).resolve(hash.substring(2));
    }
}
