package dev.kosa8.image.debian;

import dev.kosa8.host.KosaException;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicLong;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;

/**
 * The archive client's HTTP against a raw server on loopback that misbehaves
 * the ways a broken mirror or proxy does: answers nothing, sends headers and
 * then stalls the body, or sends a body that never ends. Each fails the fetch
 * in bounded time and memory, naming the URL.
 */
class ArchiveHttpTest {
    static final Duration IDLE = Duration.ofSeconds(1);

    @TempDir
    Path tmp;
    ServerSocket server;
    final List<Socket> open = new CopyOnWriteArrayList<>();
    final AtomicLong sent = new AtomicLong();
    volatile String mode;

    @BeforeEach
    void start() throws IOException {
        server = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
        Thread.ofVirtual().start(() -> {
            while (!server.isClosed()) {
                try {
                    Socket s = server.accept();
                    open.add(s);
                    Thread.ofVirtual().start(() -> serve(s));
                } catch (IOException e) {
                    return;
                }
            }
        });
    }

    @AfterEach
    void stop() throws IOException {
        server.close();
        for (Socket s : open) {
            s.close();
        }
    }

    private void serve(Socket s) {
        try {
            InputStream in = s.getInputStream();
            // the request's head, up to its blank line
            int matched = 0;
            while (matched < 4) {
                int c = in.read();
                if (c < 0) {
                    return;
                }
                matched = (c == "\r\n\r\n".charAt(matched)) ? matched + 1 : (c == '\r' ? 1 : 0);
            }
            OutputStream out = s.getOutputStream();
            switch (mode) {
                case "silent" -> Thread.sleep(Long.MAX_VALUE);
                case "stall" -> {
                    out.write("HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n\r\n0123456789".getBytes(
                            StandardCharsets.US_ASCII));
                    out.flush();
                    Thread.sleep(Long.MAX_VALUE);
                }
                case "endless" -> {
                    out.write("HTTP/1.1 200 OK\r\nConnection: close\r\n\r\n".getBytes(StandardCharsets.US_ASCII));
                    byte[] chunk = new byte[64 * 1024];
                    while (true) {
                        out.write(chunk);
                        sent.addAndGet(chunk.length);
                    }
                }
                default -> throw new IllegalStateException(mode);
            }
        } catch (IOException | InterruptedException e) {
            // the client went away
        }
    }

    URI uri() {
        return URI.create("http://127.0.0.1:" + server.getLocalPort() + "/debian/pool/main/b/bash/bash.deb");
    }

    ArchiveHttp http() {
        return new ArchiveHttp(new ProxySettings(Map.of()), IDLE);
    }

    @Test
    void aBodyThatStallsAfterTheHeadersFailsAfterTheIdleBoundNamingTheUrl() {
        mode = "stall";
        assertTimeoutPreemptively(Duration.ofSeconds(15), () -> {
            assertThatThrownBy(() -> http().fetch(uri(), 10_000, "bookworm's InRelease"))
                    .isInstanceOf(KosaException.class)
                    .hasMessageContaining("could not fetch bookworm's InRelease (" + uri() + ")")
                    .hasMessageContaining("no data for 1 s in the middle of the body");
            Path target = tmp.resolve("cache/bash.deb");
            assertThatThrownBy(() -> http().download(uri(), target, 1000, "0".repeat(64), "bash.deb",
                    DownloadProgress.silent())).isInstanceOf(KosaException.class)
                    .hasMessageContaining("could not fetch bash.deb (" + uri() + ")")
                    .hasMessageContaining("no data for 1 s");
            try (var s = Files.list(target.getParent())) {
                assertThat(s.toList()).as("no partial file left").isEmpty();
            }
        });
    }

    @Test
    void aServerThatNeverAnswersFailsAfterTheIdleBoundNamingTheUrl() {
        mode = "silent";
        assertTimeoutPreemptively(Duration.ofSeconds(15), () ->
                assertThatThrownBy(() -> http().fetch(uri(), 10_000, "bookworm's InRelease"))
                        .isInstanceOf(KosaException.class)
                        .hasMessageContaining("could not fetch bookworm's InRelease (" + uri() + ")")
                        .hasMessageContaining("no answer within 1 s"));
    }

    @Test
    void aBodyLongerThanPromisedIsCutOffNotReadToItsEnd() {
        mode = "endless";
        assertTimeoutPreemptively(Duration.ofSeconds(15), () -> {
            assertThatThrownBy(() -> http().download(uri(), tmp.resolve("bash.deb"), 100_000, "0".repeat(64),
                    "bash.deb", DownloadProgress.silent())).isInstanceOf(KosaException.class)
                    .hasMessageContaining("bash.deb is longer than the 100000 bytes its signed index says");
            assertThatThrownBy(() -> http().fetch(uri(), 100_000, "bookworm's InRelease"))
                    .isInstanceOf(KosaException.class)
                    .hasMessageContaining("bookworm's InRelease is larger than 100000 bytes");
        });
        // what the server got out before the client hung up: socket buffers, not the endless body
        assertThat(sent.get()).isLessThan(64L << 20);
    }

    @Test
    void aServerThatCannotBeConnectedToIsReportedAsAConnectTimeoutNotAStall() throws Exception {
        // a listener that never accepts, its backlog filled: Linux drops further SYNs, so a connect hangs
        try (ServerSocket full = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            List<Socket> queued = new java.util.ArrayList<>();
            try {
                boolean hangs = false;
                for (int i = 0; i < 64 && !hangs; i++) {
                    Socket c = new Socket();
                    queued.add(c);
                    try {
                        c.connect(full.getLocalSocketAddress(), 200);
                    } catch (java.net.SocketTimeoutException e) {
                        hangs = true;
                    }
                }
                assertThat(hangs).as("a connect to the full listener hangs").isTrue();
                URI uri = URI.create("http://127.0.0.1:" + full.getLocalPort() + "/debian/dists/bookworm/InRelease");
                assertTimeoutPreemptively(Duration.ofSeconds(15), () ->
                        assertThatThrownBy(() -> http().fetch(uri, 10_000, "bookworm's InRelease"))
                                .isInstanceOf(KosaException.class)
                                .hasMessageContaining("could not fetch bookworm's InRelease (" + uri + ")")
                                .hasMessageContaining("could not connect to 127.0.0.1:" + full.getLocalPort()
                                        + " within 1 s, the connect timeout")
                                .hasMessageContaining("proxy settings")
                                .hasMessageNotContaining("stalled"));
            } finally {
                for (Socket c : queued) {
                    c.close();
                }
            }
        }
    }
}
