import dev.kosa8.egress.tls.SandboxCa;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelPipeline;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.SimpleChannelInboundHandler;
import io.netty.channel.epoll.EpollIoHandler;
import io.netty.channel.epoll.EpollServerSocketChannel;
import io.netty.handler.codec.http.*;
import io.netty.handler.codec.http2.Http2FrameCodecBuilder;
import io.netty.handler.codec.http2.Http2MultiplexHandler;
import io.netty.handler.codec.http2.Http2Settings;
import io.netty.handler.codec.http2.Http2StreamChannel;
import io.netty.handler.codec.http2.Http2StreamFrameToHttpObjectCodec;
import io.netty.handler.ssl.ApplicationProtocolNames;
import io.netty.handler.ssl.ApplicationProtocolNegotiationHandler;
import io.netty.handler.ssl.SslContext;
import io.netty.handler.stream.ChunkedInput;
import io.netty.handler.stream.ChunkedWriteHandler;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;

/**
 * The egress bench's second loopback HTTPS server (in the --serve process, beside the JDK's): Netty, offering
 * {@code h2, http/1.1} in ALPN with the bench CA's leaf for api.test, serving the same paths (/small, /big?n=N,
 * /sink), so the broker's upstream leg can be measured in HTTP/2 against HTTP/1.1 to the same server (issue 42).
 * 1 MiB HTTP/2 windows, as the broker's own.
 */
final class H2BenchServer {
    private H2BenchServer() {
    }

    static int start(SandboxCa ca) throws Exception {
        SslContext ssl = ca.http2ServerContextFor("api.test");
        var group = new MultiThreadIoEventLoopGroup(1, EpollIoHandler.newFactory());
        Channel server = new ServerBootstrap().group(group).channel(EpollServerSocketChannel.class)
                .childHandler(new ChannelInitializer<>() {
                    @Override
                    protected void initChannel(Channel ch) {
                        ch.pipeline().addLast(ssl.newHandler(ch.alloc()));
                        ch.pipeline().addLast(new ApplicationProtocolNegotiationHandler(ApplicationProtocolNames.HTTP_1_1) {
                            @Override
                            protected void configurePipeline(ChannelHandlerContext ctx, String protocol) {
                                if (ApplicationProtocolNames.HTTP_2.equals(protocol)) {
                                    var codec = Http2FrameCodecBuilder.forServer().initialSettings(
                                            Http2Settings.defaultSettings().initialWindowSize(1 << 20)).build();
                                    ctx.pipeline().addLast(codec);
                                    ctx.pipeline().addLast(new Http2MultiplexHandler(new ChannelInitializer<Http2StreamChannel>() {
                                        @Override
                                        protected void initChannel(Http2StreamChannel s) {
                                            serve(s.pipeline(), new Http2StreamFrameToHttpObjectCodec(true));
                                        }
                                    }));
                                    try {
                                        codec.connection().local().flowController().incrementWindowSize(
                                                codec.connection().connectionStream(), (16 << 20) - 65535);
                                    } catch (Exception e) {
                                        throw new IllegalStateException(e);
                                    }
                                } else {
                                    serve(ctx.pipeline(), new HttpServerCodec());
                                }
                            }
                        });
                    }
                }).bind(new InetSocketAddress("127.0.0.1", 0)).sync().channel();
        return ((InetSocketAddress) server.localAddress()).getPort();
    }

    private static void serve(ChannelPipeline p, io.netty.channel.ChannelHandler codec) {
        p.addLast(codec);
        p.addLast(new ChunkedWriteHandler());
        p.addLast(new SimpleChannelInboundHandler<HttpObject>() {
            private HttpRequest head;
            private long got;

            @Override
            protected void channelRead0(ChannelHandlerContext ctx, HttpObject msg) {
                if (msg instanceof HttpRequest r) {
                    head = r;
                    got = 0;
                }
                if (msg instanceof HttpContent c) {
                    got += c.content().readableBytes();
                }
                if (!(msg instanceof LastHttpContent)) {
                    return;
                }
                String uri = head.uri();
                if (uri.startsWith("/big")) {
                    long n = Long.parseLong(uri.substring(uri.indexOf("?n=") + 3));
                    DefaultHttpResponse res = new DefaultHttpResponse(HttpVersion.HTTP_1_1, HttpResponseStatus.OK);
                    res.headers().set(HttpHeaderNames.CONTENT_LENGTH, n);
                    ctx.write(res);
                    ctx.writeAndFlush(new HttpChunkedInput(new Zeros(n)));
                    return;
                }
                String text = uri.startsWith("/sink") ? Long.toString(got) : "0123456789abcdef0123456789abcdef";
                var res = new DefaultFullHttpResponse(HttpVersion.HTTP_1_1, HttpResponseStatus.OK,
                        Unpooled.copiedBuffer(text, StandardCharsets.US_ASCII));
                res.headers().setInt(HttpHeaderNames.CONTENT_LENGTH, res.content().readableBytes());
                ctx.writeAndFlush(res);
            }
        });
    }

    /** N zero bytes, 256 KiB at a time, as the JDK server's /big sends. */
    private static final class Zeros implements ChunkedInput<ByteBuf> {
        private static final ByteBuf CHUNK = Unpooled.unreleasableBuffer(Unpooled.directBuffer(256 * 1024)
                .writeZero(256 * 1024));
        private final long length;
        private long at;

        Zeros(long length) {
            this.length = length;
        }

        public boolean isEndOfInput() {
            return at >= length;
        }

        public void close() {
        }

        @Deprecated
        public ByteBuf readChunk(ChannelHandlerContext ctx) {
            return readChunk(ctx.alloc());
        }

        public ByteBuf readChunk(ByteBufAllocator alloc) {
            if (isEndOfInput()) {
                return null;
            }
            int n = (int) Math.min(CHUNK.capacity(), length - at);
            at += n;
            return CHUNK.retainedSlice(0, n);
        }

        public long length() {
            return length;
        }

        public long progress() {
            return at;
        }
    }
}
