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
        ForkFolder.emptyFolder(fork, true);
        assertThat(fork).doesNotExist();
        assertThat(tmp.resolve("outside/keep")).hasContent("the user's");
    }

    @Test
    void aFolderThatWasThereEmptyIsLeftEmpty() throws Exception {
        Path fork = guestMadeFolder();
        Files.setPosixFilePermissions(fork, PosixFilePermissions.fromString("rwxr-x---"));
        ForkFolder.emptyFolder(fork, false);
        assertThat(fork).isEmptyDirectory();
        assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(fork))).as("its mode kept")
                .isEqualTo("rwxr-x---");
        assertThat(tmp.resolve("outside/keep")).hasContent("the user's");
    }

    @Test
    void aForkFolderInsideASandboxsFolderIsRefusedEvenThroughASymlink() throws Exception {
        Path parentWs = Files.createDirectories(tmp.resolve("parent-ws")).toRealPath();
        Files.createSymbolicLink(tmp.resolve("alias"), parentWs);
        var folders = java.util.Map.of("abc123", parentWs.toString(), "none", "");
        for (Path target : java.util.List.of(parentWs.resolve("try"), tmp.resolve("alias/try/deeper"), parentWs)) {
            org.assertj.core.api.Assertions.assertThatThrownBy(() -> ForkFolder.prepare(target, folders))
                    .hasMessageContaining("inside the folder of sandbox abc123");
            assertThat(parentWs.resolve("try")).doesNotExist();
        }
        ForkFolder beside = ForkFolder.prepare(tmp.resolve("parent-ws-fork"), folders);
        assertThat(beside.made()).isTrue();
        assertThat(beside.path()).isDirectory();
    }

    @Test
    void theMarkerLineSaysWhatTheFolderWasAndANewDaemonTakesItBackTheSameWay() throws Exception {
        Path kept = Files.createDirectory(tmp.resolve("kept"));
        Files.setPosixFilePermissions(kept, PosixFilePermissions.fromString("rwxr-x---"));
        ForkFolder before = ForkFolder.prepare(kept, java.util.Map.of());
        ForkFolder read = ForkFolder.fromMarker(kept, before.marker());
        assertThat(read).isEqualTo(before);
        Files.writeString(kept.resolve("copied"), "x");
        Files.setPosixFilePermissions(kept, PosixFilePermissions.fromString("rwxrwxrwx"));
        read.takeBack();
        assertThat(kept).isEmptyDirectory();
        assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(kept))).isEqualTo("rwxr-x---");

        ForkFolder made = ForkFolder.prepare(tmp.resolve("made"), java.util.Map.of());
        Files.writeString(made.path().resolve("copied"), "x");
        ForkFolder.fromMarker(made.path(), made.marker()).takeBack();
        assertThat(made.path()).doesNotExist();
        assertThat(ForkFolder.fromMarker(kept, "garbage here")).isNull();
        assertThat(ForkFolder.fromMarker(kept, "kept rwzzzzzzz 1")).isNull();
    }

    @Test
    void aMissingFolderIsNothingToDo() throws Exception {
        ForkFolder.emptyFolder(tmp.resolve("never-made"), true);
        assertThat(tmp.resolve("never-made")).doesNotExist();
    }
}
