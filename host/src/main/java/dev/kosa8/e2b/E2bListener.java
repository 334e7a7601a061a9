package dev.kosa8.e2b;

import io.netty.bootstrap.ServerBootstrap;
import io.netty.channel.Channel;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.nio.NioIoHandler;
import io.netty.channel.socket.SocketChannel;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import io.netty.handler.codec.http.HttpServerCodec;
import java.net.InetSocketAddress;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

/**
 * kosa8's E2B listener (docs/e2b.md): E2B's control plane and envd on one HTTP/1.1 address, over the daemon's
 * sandboxes and kept processes. Started by the daemon; the API key is the daemon's to keep.
 */
public final class E2bListener implements AutoCloseable {
    private final E2bSandboxes sandboxes;
    private final EventLoopGroup group;
    private final Channel server;
    private final InetSocketAddress address;

    private E2bListener(E2bSandboxes sandboxes, EventLoopGroup group, Channel server) {
        this.sandboxes = sandboxes;
        this.group = group;
        this.server = server;
        this.address = (InetSocketAddress) server.localAddress();
    }

    /** Listens on {@code host:port} (port 0: any free one). */
    public static E2bListener start(E2bBackend backend, String host, int port, String apiKey, Consumer<String> log)
            throws InterruptedException {
        return start(backend, host, port, apiKey, null, log);
    }

    /**
     * As above, its sandboxes' records kept in {@code store} (0600; it holds their access tokens) across restarts;
     * null: in memory only.
     */
    public static E2bListener start(E2bBackend backend, String host, int port, String apiKey, java.nio.file.Path store,
                                    Consumer<String> log) throws InterruptedException {
        E2bSandboxes sandboxes = new E2bSandboxes(backend, log, store);
        E2bRouter router = new E2bRouter(new ControlPlane(sandboxes, apiKey), new Envd(sandboxes), log);
        EventLoopGroup group = new MultiThreadIoEventLoopGroup(1, NioIoHandler.newFactory());
        try {
            Channel ch = new ServerBootstrap()
                    .group(group)
                    .channel(NioServerSocketChannel.class)
                    .childHandler(new ChannelInitializer<SocketChannel>() {
                        @Override
                        protected void initChannel(SocketChannel c) {
                            c.pipeline().addLast(new HttpServerCodec(8192, 16384, 64 * 1024));
                            c.pipeline().addLast(new E2bHandler(router));
                        }
                    })
                    .bind(host, port).sync().channel();
            return new E2bListener(sandboxes, group, ch);
        } catch (RuntimeException | InterruptedException e) {
            group.shutdownGracefully(0, 1, TimeUnit.SECONDS);
            sandboxes.close();
            throw e;
        }
    }

    /** The URL clients use for both the API and the sandboxes. */
    public String url() {
        String host = address.getAddress().getHostAddress();
        if (host.contains(":")) {
            host = "[" + host + "]";
        }
        return "http://" + host + ":" + address.getPort();
    }

    public int port() {
        return address.getPort();
    }

    /** Whether kosa8 sandbox {@code id} was made through E2B. */
    public boolean owns(String id) {
        return sandboxes.find(id).isPresent();
    }

    @Override
    public void close() {
        sandboxes.close();
        server.close().awaitUninterruptibly(2000);
        group.shutdownGracefully(0, 1, TimeUnit.SECONDS).awaitUninterruptibly(3000);
    }

    /** A new API key, as E2B's look: {@code e2b_} and 40 hex digits. */
    public static String newApiKey() {
        return "e2b_" + E2bSandboxes.token();
    }
}
