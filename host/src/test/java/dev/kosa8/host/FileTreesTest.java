package dev.kosa8.host;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class FileTreesTest {
    @TempDir
    Path dir;

    @Test
    void aTreeGoesWholeAndALinkInItIsDeletedNotFollowed() throws Exception {
        Path outside = Files.createDirectories(dir.resolve("outside"));
        Files.writeString(outside.resolve("keep"), "the user's");
        Path tree = Files.createDirectories(dir.resolve("tree/a/b"));
        Files.writeString(tree.resolve("f"), "x");
        Files.createSymbolicLink(dir.resolve("tree/a/out"), outside);
        Files.createSymbolicLink(dir.resolve("tree/file-link"), outside.resolve("keep"));
        FileTrees.delete(dir.resolve("tree"));
        assertThat(dir.resolve("tree")).doesNotExist();
        assertThat(outside.resolve("keep")).hasContent("the user's");
    }

    @Test
    void nothingThereIsNoErrorAndALinkAsTheRootIsItselfDeleted() throws Exception {
        FileTrees.delete(dir.resolve("missing"));
        Path target = Files.createDirectories(dir.resolve("target"));
        Files.writeString(target.resolve("keep"), "x");
        Path link = Files.createSymbolicLink(dir.resolve("link"), target);
        FileTrees.delete(link);
        assertThat(Files.exists(link, LinkOption.NOFOLLOW_LINKS)).isFalse();
        assertThat(target.resolve("keep")).exists();
    }
}
