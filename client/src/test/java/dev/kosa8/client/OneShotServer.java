package dev.kosa8.client;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.Channels;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.CompletableFuture;

/**
 * A unix socket that answers each connection with fixed bytes after reading the request's head: the daemon's
 * side of {@link DaemonConnection} for tests of how the client reads answers, well-formed or not. (The SDK's
 * behaviour against the real daemon is SdkIT's.)
 */
final class OneShotServer implements AutoCloseable {
    private final ServerSocketChannel server;
    private final Path socket;
    final CompletableFuture<String> request = new CompletableFuture<>();

    OneShotServer(Path dir, byte[] answer) throws IOException {
        socket = dir.resolve("d.sock");
        Files.deleteIfExists(socket);
        server = ServerSocketChannel.open(StandardProtocolFamily.UNIX);
        server.bind(UnixDomainSocketAddress.of(socket));
        Thread t = new Thread(() -> {
            try (SocketChannel c = server.accept()) {
                request.complete(head(Channels.newInputStream(c)));
                c.write(ByteBuffer.wrap(answer));
                c.shutdownOutput();
            } catch (IOException e) {
                request.completeExceptionally(e);
            }
        }, "one-shot");
        t.setDaemon(true);
        t.start();
    }

    private static String head(InputStream in) throws IOException {
        ByteArrayOutputStream b = new ByteArrayOutputStream();
        int state = 0;
        for (int c = in.read(); c >= 0; c = in.read()) {
            b.write(c);
            state = (c == '\r' && (state == 0 || state == 2)) ? state + 1
                    : (c == '\n' && (state == 1 || state == 3)) ? state + 1 : 0;
            if (state == 4) {
                break;
            }
        }
        return b.toString(java.nio.charset.StandardCharsets.ISO_8859_1);
    }

    Path socket() {
        return socket;
    }

    @Override
    public void close() throws IOException {
        server.close();
        Files.deleteIfExists(socket);
    }
}
