package dev.kosa8.egress;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.file.Path;

/**
 * Does for a test what QEMU's guestfwd and socat do for a guest: a loopback
 * TCP port whose every connection is carried to a unix socket of the broker,
 * so real clients (curl, the JDK) can be pointed at a listener.
 */
final class UnixBridge implements AutoCloseable {
    private final ServerSocketChannel server;

    UnixBridge(Path socket) throws IOException {
        server = ServerSocketChannel.open();
        server.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0));
        Thread.ofVirtual().start(() -> {
            while (server.isOpen()) {
                try {
                    SocketChannel tcp = server.accept();
                    SocketChannel unix = SocketChannel.open(StandardProtocolFamily.UNIX);
                    unix.connect(UnixDomainSocketAddress.of(socket));
                    Thread.ofVirtual().start(() -> pump(tcp, unix));
                    Thread.ofVirtual().start(() -> pump(unix, tcp));
                } catch (IOException e) {
                    return;
                }
            }
        });
    }

    int port() {
        try {
            return ((InetSocketAddress) server.getLocalAddress()).getPort();
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
    }

    private static void pump(SocketChannel from, SocketChannel to) {
        ByteBuffer buf = ByteBuffer.allocate(64 * 1024);
        try {
            while (from.read(buf) >= 0) {
                buf.flip();
                while (buf.hasRemaining()) {
                    to.write(buf);
                }
                buf.clear();
            }
            to.shutdownOutput();
        } catch (IOException e) {
            try {
                from.close();
                to.close();
            } catch (IOException ignored) {
                // both ends are going
            }
        }
    }

    @Override
    public void close() throws IOException {
        server.close();
    }
}
