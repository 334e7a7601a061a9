package dev.kosa8.workspace;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.kosa8.host.KosaException;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class WorkspaceFolderTest {
    @TempDir
    Path tmp;

    @Test
    void aProjectFolderIsSharedByItsRealPath() throws Exception {
        Path project = Files.createDirectories(tmp.resolve("project"));
        Path link = Files.createSymbolicLink(tmp.resolve("via-link"), project);
        assertThat(WorkspaceFolder.check(link.toString(), tmp.resolve("home"))).isEqualTo(project.toRealPath().toString());
        assertThat(WorkspaceFolder.check("", tmp)).as("none").isEmpty();
    }

    @Test
    void theWholeFileSystemAndTheHomeDirectoryAreRefused() throws Exception {
        Path home = Files.createDirectories(tmp.resolve("home"));
        assertThatThrownBy(() -> WorkspaceFolder.check("/", home)).isInstanceOf(KosaException.class)
                .hasMessageContaining("refusing to share the whole file system");
        assertThatThrownBy(() -> WorkspaceFolder.check(home.toString(), home)).isInstanceOf(KosaException.class)
                .hasMessageContaining("refusing to share your home directory");
    }

    @Test
    void missingRelativeOrNonDirectoryFoldersSayWhatToDo() throws Exception {
        Path file = Files.writeString(tmp.resolve("file"), "x");
        assertThatThrownBy(() -> WorkspaceFolder.check(tmp.resolve("missing").toString(), tmp))
                .hasMessageContaining("does not exist").isInstanceOf(KosaException.class);
        assertThatThrownBy(() -> WorkspaceFolder.check("relative/dir", tmp)).hasMessageContaining("absolute");
        assertThatThrownBy(() -> WorkspaceFolder.check(file.toString(), tmp)).hasMessageContaining("not a folder");
    }
}
