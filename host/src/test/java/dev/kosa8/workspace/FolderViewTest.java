package dev.kosa8.workspace;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assumptions.assumeThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** A real overlayfs view, mounted by the real helper, as the daemon uses it for a fork's folder. */
class FolderViewTest {
    @TempDir
    Path dir;
    Path base;
    Path parts;

    @BeforeEach
    void views() throws IOException {
        assumeThat(FolderView.unavailable(dir.resolve("probe"))).as("views on this host").isEmpty();
        base = Files.createDirectories(dir.resolve("base"));
        Files.createDirectories(base.resolve("src"));
        Files.writeString(base.resolve("src/a.txt"), "base a\n");
        Files.writeString(base.resolve("b.txt"), "base b\n");
        parts = dir.resolve("fork/folder-view");
        FolderView.prepare(parts);
    }

    @Test
    void theViewShowsTheBaseAndKeepsEveryChangeInItsOwnLayer() throws IOException {
        try (FolderView v = FolderView.mount(base, parts, Duration.ofSeconds(10))) {
            Path p = v.path();
            assertThat(Files.readString(p.resolve("src/a.txt"))).isEqualTo("base a\n");
            Files.writeString(p.resolve("src/a.txt"), "changed\n");
            Files.delete(p.resolve("b.txt"));
            Files.writeString(p.resolve("new.txt"), "new\n");
            try (Stream<Path> walk = Files.walk(p)) {
                assertThat(walk.map(x -> p.relativize(x).toString()).sorted().toList())
                        .containsExactly("", "new.txt", "src", "src/a.txt");
            }
            assertThat(Files.readString(base.resolve("src/a.txt"))).as("the base").isEqualTo("base a\n");
            assertThat(base.resolve("b.txt")).as("the base").exists();
            assertThat(Files.readString(parts.resolve("upper/src/a.txt"))).isEqualTo("changed\n");
            assertThat(Files.readString(parts.resolve("upper/new.txt"))).isEqualTo("new\n");
            assertThat(Files.exists(parts.resolve("upper/b.txt"), LinkOption.NOFOLLOW_LINKS)
                    && Files.readAttributes(parts.resolve("upper/b.txt"),
                    java.nio.file.attribute.BasicFileAttributes.class, LinkOption.NOFOLLOW_LINKS).isOther()).as("the deletion: a whiteout").isTrue();
            assertThat(parts.resolve("mnt")).as("the host's mount point: the view is not mounted there")
                    .isEmptyDirectory();
        }
    }

    @Test
    void twoViewsOfOneBaseAreApartAndAViewMountedAgainKeepsWhatItChanged() throws IOException {
        Path other = dir.resolve("other/folder-view");
        FolderView.prepare(other);
        try (FolderView a = FolderView.mount(base, parts, Duration.ofSeconds(10));
             FolderView b = FolderView.mount(base, other, Duration.ofSeconds(10))) {
            Files.writeString(a.path().resolve("b.txt"), "a's\n");
            assertThat(Files.readString(b.path().resolve("b.txt"))).isEqualTo("base b\n");
        }
        try (FolderView again = FolderView.mount(base, parts, Duration.ofSeconds(10))) {
            assertThat(Files.readString(again.path().resolve("b.txt"))).isEqualTo("a's\n");
        }
    }

    @Test
    void aClosedViewIsGoneAndItsPathFindsNothing() throws Exception {
        FolderView v = FolderView.mount(base, parts, Duration.ofSeconds(10));
        Path p = v.path();
        assertThat(v.alive()).isTrue();
        v.close();
        assertThat(v.alive()).isFalse();
        assertThat(Files.exists(p.resolve("b.txt"))).isFalse();
        FolderView.unlock(parts);
        dev.kosa8.host.FileTrees.delete(parts);
        assertThat(parts).doesNotExist();
    }

    @Test
    void aBaseNamedWithCharactersOverlayOptionsCannotCarryIsRefusedAndAMissingBaseSaysWhy() throws IOException {
        Path odd = Files.createDirectories(dir.resolve("a,b"));
        assertThatThrownBy(() -> FolderView.mount(odd, parts, Duration.ofSeconds(10)))
                .isInstanceOf(IOException.class).hasMessageContaining("cannot be named");
        assertThatThrownBy(() -> FolderView.mount(dir.resolve("missing"), parts, Duration.ofSeconds(10)))
                .isInstanceOf(IOException.class).hasMessageContaining("cannot mount the folder's view");
        assertThat(List.of(parts.resolve("upper"), parts.resolve("work"))).allMatch(Files::isDirectory);
    }
}
