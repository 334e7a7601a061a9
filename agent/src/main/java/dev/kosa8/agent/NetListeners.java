package dev.kosa8.agent;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.StandardSocketOptions;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The network relay's listeners ({@link NetRelay}): one non-blocking server socket per guest port, registered with
 * the relay's selector for accepts, and how a connection the relay will not take is refused ({@link #abort}).
 * Used by the relay's thread alone, once built.
 */
final class NetListeners {
    private final Map<ServerSocketChannel, Integer> ports = new LinkedHashMap<>();

    /** Binds a listener for each guest port where {@code bind} says, and registers it with {@code selector}. */
    NetListeners(Map<Integer, InetSocketAddress> bind, Selector selector) throws IOException {
        for (var e : bind.entrySet()) {
            ServerSocketChannel server = ServerSocketChannel.open();
            server.setOption(StandardSocketOptions.SO_REUSEADDR, true);
            server.bind(e.getValue(), 512);
            server.configureBlocking(false);
            server.register(selector, SelectionKey.OP_ACCEPT);
            ports.put(server, e.getKey());
        }
    }

    /** The guest port {@code server} listens for. */
    int port(ServerSocketChannel server) {
        return ports.get(server);
    }

    /** Where each guest port's listener is bound (for tests binding port 0). */
    Map<Integer, InetSocketAddress> bound() throws IOException {
        Map<Integer, InetSocketAddress> out = new LinkedHashMap<>();
        for (var e : ports.entrySet()) {
            out.put(e.getValue(), (InetSocketAddress) e.getKey().getLocalAddress());
        }
        return out;
    }

    /** A connection closed with a reset (SO_LINGER 0): its program sees ECONNRESET at once. */
    static void abort(SocketChannel c) {
        try {
            c.setOption(StandardSocketOptions.SO_LINGER, 0);
        } catch (IOException ignored) {
            // closed as it is
        }
        try {
            c.close();
        } catch (IOException ignored) {
            // closed either way
        }
    }
}
