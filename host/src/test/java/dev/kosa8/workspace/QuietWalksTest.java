package dev.kosa8.workspace;

import static dev.kosa8.workspace.P9TestClient.O_RDONLY;
import static dev.kosa8.workspace.P9TestClient.ROOT;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Quiet clone walks (Twalkq, {@link dev.kosa8.protocol.Ws9p}): the guest's module answers a clone
 * walk itself and sends the server a Twalkq, never answered; the request on the new fid sent right
 * behind it finds the clone. One that names no fid changes nothing and is logged once. The client
 * plays the module.
 */
class QuietWalksTest {
    private static final int EBADF = 9;

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
        c.close();
        assertThat(c.log()).noneMatch(line -> line.startsWith("internal error"));
    }

    @Test
    void theRequestBehindATwalkqFindsTheCloneAndTheTwalkqIsNotAnswered() throws Exception {
        WorkspaceServerTest.walkOk(c, ROOT, 1, "f");
        int quiet = c.cloneQuietly(1, 2);
        assertThat(c.lopen(2, O_RDONLY)).isInstanceOf(P9Reply.Lopen.class);
        ByteBuffer read = ((P9Reply.Read) c.read(2, 0, 100)).data();
        byte[] text = new byte[read.remaining()];
        read.duplicate().get(text);
        assertThat(new String(text, StandardCharsets.ISO_8859_1)).isEqualTo("the file");
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
}
