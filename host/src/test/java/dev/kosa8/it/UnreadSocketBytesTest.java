package dev.kosa8.it;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@link UnreadSocketBytes}, which WorkspaceIT relies on: what a stopped
 * process has not read from its connection is seen, and left for it to read
 * when it runs again.
 */
class UnreadSocketBytesTest {
    @TempDir
    Path dir;

    @Test
    void bytesAStoppedProcessHasNotReadAreSeenAndLeftForIt() throws Exception {
        Path path = dir.resolve("console.sock");
        try (ServerSocketChannel server = ServerSocketChannel.open(StandardProtocolFamily.UNIX)) {
            server.bind(UnixDomainSocketAddress.of(path));
            Process reader = new ProcessBuilder("socat", "-u", "UNIX-CONNECT:" + path, "STDOUT").start();
            try (SocketChannel conn = server.accept()) {
                new ProcessBuilder("kill", "-STOP", Long.toString(reader.pid())).start().waitFor();
                conn.write(ByteBuffer.wrap("before\nkosa8-test: a marker\n".getBytes(StandardCharsets.UTF_8)));
                String seen = UnreadSocketBytes.of(reader.pid(), List.of(dir.resolve("other.sock"), path), 1 << 20);
                assertThat(seen).isEqualTo("before\nkosa8-test: a marker\n");
                assertThat(UnreadSocketBytes.of(reader.pid(), List.of(path), 1 << 20)).as("looked at, not taken")
                        .isEqualTo(seen);
                new ProcessBuilder("kill", "-CONT", Long.toString(reader.pid())).start().waitFor();
            }
            assertThat(reader.waitFor(10, TimeUnit.SECONDS)).isTrue();
            assertThat(new String(reader.getInputStream().readAllBytes(), StandardCharsets.UTF_8))
                    .as("what the process read once it ran again").isEqualTo("before\nkosa8-test: a marker\n");
        }
    }

    @Test
    void aProcessWithoutSuchAConnectionIsSaid() throws Exception {
        Process sleeper = new ProcessBuilder("sleep", "30").start();
        try {
            org.assertj.core.api.Assertions.assertThatThrownBy(() -> UnreadSocketBytes.of(sleeper.pid(),
                    List.of(dir.resolve("none.sock")), 64)).hasMessageContaining("has no connection to any of");
        } finally {
            sleeper.destroyForcibly().waitFor();
        }
    }
}
