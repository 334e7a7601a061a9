package dev.kosa8.daemon;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kosa8.checkpoint.TreeRemoval;
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
        // what a guest may do through the folder: a directory its owner can neither list nor enter
        Path closed = Files.createDirectories(tmp.resolve("fork/closed/inner"));
        Files.writeString(closed.resolve("f"), "x");
        Files.setPosixFilePermissions(closed, PosixFilePermissions.fromString("---------"));
        Files.setPosixFilePermissions(closed.getParent(), PosixFilePermissions.fromString("-wx------"));
        return tmp.resolve("fork");
    }

    @Test
    void aFolderTheForkMadeGoesWholeAndNoSymlinkIsFollowed() throws Exception {
        Path fork = guestMadeFolder();
        TreeRemoval.empty(fork, true);
        assertThat(fork).doesNotExist();
        assertThat(tmp.resolve("outside/keep")).hasContent("the user's");
    }

    @Test
    void aFolderThatWasThereEmptyIsLeftEmpty() throws Exception {
        Path fork = guestMadeFolder();
        Files.setPosixFilePermissions(fork, PosixFilePermissions.fromString("rwxr-x---"));
        TreeRemoval.empty(fork, false);
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
        // a link the guest made in its folder, to an empty folder of the user's: named inside, so refused too
        Path usersEmpty = Files.createDirectories(tmp.resolve("users-empty"));
        Files.createSymbolicLink(parentWs.resolve("out"), usersEmpty);
        org.assertj.core.api.Assertions.assertThatThrownBy(() -> ForkFolder.prepare(parentWs.resolve("out"), folders))
                .hasMessageContaining("inside the folder of sandbox abc123");
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
    void aFolderMadeAgainSinceTheForkTookItIsLeftAsItIs() throws Exception {
        ForkFolder made = ForkFolder.prepare(tmp.resolve("again"), java.util.Map.of());
        Files.delete(made.path());
        Files.createDirectory(made.path());
        Files.writeString(made.path().resolve("the user's work"), "x");
        ForkFolder read = ForkFolder.fromMarker(made.path(), made.marker());
        org.assertj.core.api.Assertions.assertThatThrownBy(read::takeBack)
                .hasMessageContaining("no longer the folder the fork took");
        assertThat(made.path().resolve("the user's work")).hasContent("x");
        // a marker of an older daemon names no inode: taken back as before
        assertThat(ForkFolder.fromMarker(made.path(), "made").identity()).isEmpty();
    }

    @Test
    void aFolderIsTheForksOwnOnlyIfThisPrepareMadeIt() throws Exception {
        Path target = tmp.resolve("link-to-real/new");
        Files.createDirectories(tmp.resolve("real"));
        Files.createSymbolicLink(tmp.resolve("link-to-real"), tmp.resolve("real"));
        ForkFolder first = ForkFolder.prepare(target, java.util.Map.of());
        assertThat(first.made()).isTrue();
        assertThat(first.path()).isEqualTo(tmp.resolve("real/new").toRealPath());
        ForkFolder second = ForkFolder.prepare(target, java.util.Map.of());
        assertThat(second.made()).as("there, empty: not made by this call, so never deleted by it").isFalse();
    }

    @Test
    void aMissingFolderIsNothingToDo() throws Exception {
        TreeRemoval.empty(tmp.resolve("never-made"), true);
        assertThat(tmp.resolve("never-made")).doesNotExist();
    }
}
