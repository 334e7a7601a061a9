package dev.kosa8.daemon;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kosa8.host.HostPaths;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The bases of forks' folder views: kept while a view names one, removed with the last. */
class FolderBasesTest {
    @TempDir
    Path root;

    @Test
    void aBaseIsKeptWhileAnySandboxsViewNamesItAndRemovedWithTheLast() throws Exception {
        SandboxLayout layout = new SandboxLayout(new HostPaths(root.resolve("data"), root, root.resolve("run")));
        List<String> said = new ArrayList<>();
        FolderBases bases = new FolderBases(layout, said::add);
        Path used = bases.treeOf("aaaaaaaaaaaa", "c20260101T000000-0000");
        Path unused = bases.treeOf("aaaaaaaaaaaa", "c20260102T000000-0000");
        Files.createDirectories(used);
        Files.writeString(used.resolve("f"), "x");
        Files.createDirectories(unused);
        for (String fork : List.of("bbbbbbbbbbbb", "cccccccccccc")) {
            SandboxFolder f = new SandboxFolder(layout.folderView(fork));
            f.makeView(used);
            assertThat(f.base()).isEqualTo(used);
        }
        Files.createDirectories(layout.directory("dddddddddddd")); // a sandbox with no view

        bases.dropUnused();
        assertThat(used).isDirectory();
        assertThat(unused.getParent()).doesNotExist();
        assertThat(said).anyMatch(l -> l.contains("c20260102T000000-0000 removed"));

        layout.folderView("bbbbbbbbbbbb").resolve("base").toFile().delete();
        bases.dropUnused();
        assertThat(used).as("the other fork still names it").isDirectory();

        new SandboxStore(layout.sandboxes()).delete("cccccccccccc");
        bases.dropUnused();
        assertThat(used.getParent()).as("the last view of it is gone").doesNotExist();
    }

    @Test
    void aViewForkIsToldFromAFolderByItsRecordAlone() {
        SandboxLayout layout = new SandboxLayout(new HostPaths(root.resolve("data"), root, root.resolve("run")));
        SandboxFolder f = new SandboxFolder(layout.folderView("bbbbbbbbbbbb"));
        SandboxRecord view = record("bbbbbbbbbbbb", layout.folderView("bbbbbbbbbbbb").toString());
        SandboxRecord folder = record("bbbbbbbbbbbb", root.resolve("project").toString());
        assertThat(f.isView(view)).isTrue();
        assertThat(f.isView(folder)).isFalse();
        assertThat(f.access(folder, false)).isEqualTo(root.resolve("project"));
        assertThat(f.access(record("bbbbbbbbbbbb", ""), false)).isNull();
        assertThat(f.isView(record("bbbbbbbbbbbb", "/elsewhere/spelled/otherwise/sandboxes/bbbbbbbbbbbb/folder-view")))
                .as("the data directory spelled otherwise by another run").isTrue();
        assertThat(f.isView(record("bbbbbbbbbbbb", "/home/u/sandboxes/cccccccccccc/folder-view")))
                .as("another sandbox's parts").isFalse();
    }

    @Test
    void aViewsBaseFileNamingAnythingButAFolderBaseIsRefused() throws Exception {
        SandboxLayout layout = new SandboxLayout(new HostPaths(root.resolve("data"), root, root.resolve("run")));
        SandboxFolder f = new SandboxFolder(layout.folderView("bbbbbbbbbbbb"));
        Path good = new FolderBases(layout, s -> { }).treeOf("aaaaaaaaaaaa", "c20260101T000000-0000");
        f.makeView(good);
        assertThat(f.base()).isEqualTo(good);
        for (String bad : List.of("/root/.ssh", "relative/folder-bases/aaaaaaaaaaaa-c1/tree",
                root.resolve("data/folder-bases/../../x/tree").toString(), "/x/folder-bases/not-a-base/tree")) {
            Files.writeString(layout.folderView("bbbbbbbbbbbb").resolve("base"), bad + "\n");
            org.assertj.core.api.Assertions.assertThatThrownBy(f::base).as(bad)
                    .isInstanceOf(java.io.IOException.class).hasMessageContaining("names no folder base");
        }
    }

    private static SandboxRecord record(String id, String workspace) {
        return new SandboxRecord(id, java.time.Instant.EPOCH, false, 1, 256, "tcg", "img", SandboxState.STOPPED, 0,
                null, "", workspace, null, null, null, null, null);
    }
}
