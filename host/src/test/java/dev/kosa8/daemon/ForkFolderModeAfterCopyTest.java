package dev.kosa8.daemon;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kosa8.checkpoint.FolderSnapshots;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Found by review: docs/checkpoints.md says a failed fork leaves a folder that was there empty "left empty, its mode
 * kept". The copy (Forks.start: Undo.copyFolder) puts the snapshot's root mode on the folder, and emptying it
 * never put the user's back, so a failure after the copy leaves the user's folder with the parent's mode.
 */
class ForkFolderModeAfterCopyTest {
    @TempDir
    Path tmp;

    @Test
    void aFolderThatWasThereEmptyKeepsItsModeAfterACopyIntoItFails() throws Exception {
        Path parent = Files.createDirectories(tmp.resolve("parent"));
        Files.writeString(parent.resolve("f"), "x");
        Files.setPosixFilePermissions(parent, PosixFilePermissions.fromString("rwxr-xr-x"));
        FolderSnapshots s = new FolderSnapshots(tmp.resolve("store"));
        s.capture(parent, "c1");
        Path users = Files.createDirectory(tmp.resolve("users-empty"));
        Files.setPosixFilePermissions(users, PosixFilePermissions.fromString("rwx------"));
        ForkFolder f = ForkFolder.prepare(users, java.util.List.of());
        assertThat(f.made()).isFalse();
        s.copyTo("c1", users); // what Forks.start does before the step that fails (QEMU dies)
        f.takeBack(); // what Forks.discard then does
        assertThat(users).isEmptyDirectory();
        assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(users))).as("its mode kept")
                .isEqualTo("rwx------");
    }
}
