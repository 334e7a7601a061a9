package dev.kosa8.host;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.bootstrap.Bootstrap;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class NettyTransportTest {
    @TempDir
    Path dir;

    @Test
    void epollOnLinuxWhereItLoadsNioElsewhere() {
        assertThat(NettyTransport.choose("Linux", true)).isEqualTo(NettyTransport.EPOLL);
        assertThat(NettyTransport.choose("Linux", false)).isEqualTo(NettyTransport.NIO);
        assertThat(NettyTransport.choose("Mac OS X", false)).isEqualTo(NettyTransport.NIO);
        assertThat(NettyTransport.CURRENT).isEqualTo(NettyTransport.EPOLL); // this suite runs on Linux
    }

    /** Each transport serves a unix socket and connects to one, as the daemon and the broker do. */
    @Test
    void bothTransportsCarryBytesOverAUnixSocket() throws Exception {
        for (NettyTransport t : NettyTransport.values()) {
            EventLoopGroup group = new MultiThreadIoEventLoopGroup(1, t.ioHandler());
            try {
                Path socket = dir.resolve(t.name().toLowerCase() + ".sock");
                Channel server = new ServerBootstrap().group(group).channel(t.serverDomainSocket())
                        .childHandler(new ChannelInboundHandlerAdapter() {
                            @Override
                            public void channelRead(ChannelHandlerContext ctx, Object msg) {
                                ctx.writeAndFlush(msg); // an echo
                            }
                        }).bind(t.domainAddress(socket)).sync().channel();
                CompletableFuture<String> echoed = new CompletableFuture<>();
                Channel client = new Bootstrap().group(group).channel(t.domainSocket())
                        .handler(new ChannelInboundHandlerAdapter() {
                            @Override
                            public void channelRead(ChannelHandlerContext ctx, Object msg) {
                                echoed.complete(((ByteBuf) msg).toString(StandardCharsets.UTF_8));
                                ((ByteBuf) msg).release();
                            }
                        }).connect(t.domainAddress(socket)).sync().channel();
                client.writeAndFlush(Unpooled.copiedBuffer("ping " + t, StandardCharsets.UTF_8));
                assertThat(echoed.get(10, TimeUnit.SECONDS)).isEqualTo("ping " + t);
                client.close().sync();
                server.close().sync();
            } finally {
                group.shutdownGracefully(0, 1, TimeUnit.SECONDS).sync();
            }
        }
    }
}
