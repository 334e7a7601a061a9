package dev.kosa8.workspace;

import static dev.kosa8.workspace.P9TestClient.O_RDONLY;
import static dev.kosa8.workspace.P9TestClient.ROOT;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Quiet clone walks and opens (Twalkq, Tlopenq, {@link dev.kosa8.protocol.Ws9p}): the guest's module
 * answers a clone walk or a read-only open itself and sends the server a Twalkq or Tlopenq, never
 * answered; the request on the fid sent right behind it finds the clone, or the fid open. A walk that
 * names no fid changes nothing; an open that fails leaves its error for the fid's next use. Each is
 * logged once. The client plays the module.
 */
class QuietWalksAndOpensTest {
    private static final int ENOENT = 2;
    private static final int EBADF = 9;
    private static final int EINVAL = 22;

    @TempDir
    Path tmp;
    P9TestClient c;

    @BeforeEach
    void serve() throws Exception {
        Path folder = Files.createDirectory(tmp.resolve("share"));
        Files.writeString(folder.resolve("f"), "the file");
        c = P9TestClient.attached(folder, tmp);
    }

    @AfterEach
    void close() {
        c.closeWithoutInternalErrors();
    }

    @Test
    void theRequestBehindATwalkqFindsTheCloneAndTheTwalkqIsNotAnswered() throws Exception {
        WorkspaceServerTest.walkOk(c, ROOT, 1, "f");
        int quiet = c.cloneQuietly(1, 2);
        assertThat(c.lopen(2, O_RDONLY)).isInstanceOf(P9Reply.Lopen.class);
        assertThat(WorkspaceServerTest.text(c.read(2, 0, 100))).isEqualTo("the file");
        assertThatThrownBy(() -> c.awaitFrame(quiet, Duration.ofMillis(300)))
                .hasMessageContaining("no reply to tag " + quiet);
    }

    @Test
    void aTwalkqOfNoFidChangesNothingAndIsLoggedOnce() throws Exception {
        c.cloneQuietly(40, 41);
        c.cloneQuietly(42, 43);
        assertThat(c.lopen(41, O_RDONLY)).isEqualTo(new P9Reply.Lerror(EBADF));
        assertThat(c.log()).filteredOn(l -> l.contains("quiet clone walk")).hasSize(1);
    }

    @Test
    void theReadBehindATlopenqFindsTheFidOpenAndTheTlopenqIsNotAnswered() throws Exception {
        WorkspaceServerTest.walkOk(c, ROOT, 1, "f");
        int quiet = c.openQuietly(1, O_RDONLY);
        assertThat(WorkspaceServerTest.text(c.read(1, 0, 100))).isEqualTo("the file");
        assertThatThrownBy(() -> c.awaitFrame(quiet, Duration.ofMillis(300)))
                .hasMessageContaining("no reply to tag " + quiet);
        assertThat(c.log()).noneMatch(l -> l.contains("quiet open"));
    }

    @Test
    void aTlopenqThatFailsLeavesItsErrorForTheFidsNextUseAndIsLoggedOnce() throws Exception {
        WorkspaceServerTest.walkOk(c, ROOT, 1, "f");
        WorkspaceServerTest.walkOk(c, ROOT, 2, "f");
        Files.delete(tmp.resolve("share/f")); // gone on the host between the guest's walk and its open
        c.openQuietly(1, O_RDONLY);
        c.openQuietly(2, O_RDONLY);
        assertThat(c.read(1, 0, 100)).isEqualTo(new P9Reply.Lerror(ENOENT));
        assertThat(c.read(2, 0, 100)).isEqualTo(new P9Reply.Lerror(ENOENT));
        c.openQuietly(40, O_RDONLY); // no such fid: nothing to open
        assertThat(c.read(40, 0, 100)).isEqualTo(new P9Reply.Lerror(EBADF));
        assertThat(c.log()).filteredOn(l -> l.contains("quiet open")).hasSize(1);
    }

    /** Only a read-only open may be answered before it is made: a Tlopenq that writes or truncates opens nothing. */
    @Test
    void aTlopenqThatWritesOrTruncatesOpensNothing() throws Exception {
        WorkspaceServerTest.walkOk(c, ROOT, 1, "f");
        WorkspaceServerTest.walkOk(c, ROOT, 2, "f");
        c.openQuietly(1, P9TestClient.O_RDWR);
        c.openQuietly(2, O_RDONLY | P9TestClient.O_TRUNC);
        assertThat(c.read(1, 0, 100)).isEqualTo(new P9Reply.Lerror(EINVAL));
        assertThat(c.read(2, 0, 100)).isEqualTo(new P9Reply.Lerror(EINVAL));
        assertThat(Files.readString(tmp.resolve("share/f"))).isEqualTo("the file");
    }
}
