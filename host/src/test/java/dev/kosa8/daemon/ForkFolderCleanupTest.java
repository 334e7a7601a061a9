package dev.kosa8.daemon;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** What a failed fork leaves of the folder it was writing: nothing, and nothing outside it touched. */
class ForkFolderCleanupTest {
    @TempDir
    Path tmp;

    Path guestMadeFolder() throws Exception {
        Path folder = Files.createDirectories(tmp.resolve("fork/sub/deeper"));
        Files.writeString(folder.resolve("f"), "copy");
        Path outside = Files.createDirectories(tmp.resolve("outside"));
        Files.writeString(outside.resolve("keep"), "the user's");
        Files.createSymbolicLink(tmp.resolve("fork/out"), outside);
        Files.createSymbolicLink(tmp.resolve("fork/sub/keep-link"), outside.resolve("keep"));
        Files.setPosixFilePermissions(tmp.resolve("fork/sub"), PosixFilePermissions.fromString("r-xr-xr-x"));
        return tmp.resolve("fork");
    }

    @Test
    void aFolderTheForkMadeGoesWholeAndNoSymlinkIsFollowed() throws Exception {
        Path fork = guestMadeFolder();
        Forks.emptyFolder(fork, true);
        assertThat(fork).doesNotExist();
        assertThat(tmp.resolve("outside/keep")).hasContent("the user's");
    }

    @Test
    void aFolderThatWasThereEmptyIsLeftEmpty() throws Exception {
        Path fork = guestMadeFolder();
        Files.setPosixFilePermissions(fork, PosixFilePermissions.fromString("rwxr-x---"));
        Forks.emptyFolder(fork, false);
        assertThat(fork).isEmptyDirectory();
        assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(fork))).as("its mode kept")
                .isEqualTo("rwxr-x---");
        assertThat(tmp.resolve("outside/keep")).hasContent("the user's");
    }

    @Test
    void aMissingFolderIsNothingToDo() throws Exception {
        Forks.emptyFolder(tmp.resolve("never-made"), true);
        assertThat(tmp.resolve("never-made")).doesNotExist();
    }
}
