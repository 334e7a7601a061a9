package dev.kosa8.egress;

import dev.kosa8.egress.tls.SandboxCa;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelPipeline;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.SimpleChannelInboundHandler;
import io.netty.handler.codec.http.DefaultFullHttpResponse;
import io.netty.handler.codec.http.DefaultHttpContent;
import io.netty.handler.codec.http.DefaultHttpResponse;
import io.netty.handler.codec.http.HttpChunkedInput;
import io.netty.handler.codec.http.HttpContent;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpObject;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpServerCodec;
import io.netty.handler.codec.http.HttpVersion;
import io.netty.handler.codec.http.LastHttpContent;
import io.netty.handler.codec.http2.DefaultHttp2GoAwayFrame;
import io.netty.handler.codec.http2.Http2Error;
import io.netty.handler.codec.http2.Http2FrameCodecBuilder;
import io.netty.handler.codec.http2.Http2MultiplexHandler;
import io.netty.handler.codec.http2.Http2StreamChannel;
import io.netty.handler.codec.http2.Http2StreamFrameToHttpObjectCodec;
import io.netty.handler.ssl.ApplicationProtocolNames;
import io.netty.handler.ssl.ApplicationProtocolNegotiationHandler;
import io.netty.handler.ssl.SslContext;
import io.netty.handler.stream.ChunkedInput;
import io.netty.handler.stream.ChunkedWriteHandler;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.util.HexFormat;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

/**
 * A real loopback HTTPS server in Netty that speaks HTTP/2 when its client offers it in ALPN (or HTTP/1.1 only,
 * when made so), with a certificate for its name from a test CA, recording the protocol, request and connection
 * of every request it gets. Paths: {@code /hello}; {@code /big?n=N} (N bytes of {@link #pattern}, as fast as the
 * client takes them); {@code /sink} (the SHA-256 of the body and its length); {@code /reset?n=N} (N bytes, then
 * RST_STREAM); {@code /goaway?n=N} (N bytes, then GOAWAY and the connection closes); {@code /events} (one event,
 * then a second once {@link #eventGate} opens).
 */
final class H2Upstream implements AutoCloseable {
    /** One request as the server got it: the protocol it came in, "METHOD /path", its headers, its connection. */
    record Seen(String protocol, String request, String headers, InetSocketAddress peer) {
    }

    final Path caPem;
    final List<Seen> seen = new CopyOnWriteArrayList<>();
    /** The connections requests came on. */
    final Set<InetSocketAddress> peers = ConcurrentHashMap.newKeySet();
    final CountDownLatch eventGate = new CountDownLatch(1);
    private final Channel server;

    /** @param h2 offer {@code h2} (then {@code http/1.1}) in ALPN; else {@code http/1.1} only */
    H2Upstream(Path caDir, String name, boolean h2, EventLoopGroup group) throws Exception {
        SandboxCa ca = SandboxCa.loadOrCreate(caDir.resolve("test-ca"), "test-upstream");
        caPem = caDir.resolve("test-ca.pem");
        Files.writeString(caPem, ca.certificatePem());
        SslContext ssl = h2 ? ca.http2ServerContextFor(name) : ca.serverContextFor(name);
        server = new ServerBootstrap().group(group).channel(tcpServer())
                .childHandler(new ChannelInitializer<>() {
                    @Override
                    protected void initChannel(Channel ch) {
                        ch.pipeline().addLast(ssl.newHandler(ch.alloc()));
                        ch.pipeline().addLast(new ApplicationProtocolNegotiationHandler(ApplicationProtocolNames.HTTP_1_1) {
                            @Override
                            protected void configurePipeline(ChannelHandlerContext ctx, String protocol) {
                                InetSocketAddress peer = (InetSocketAddress) ctx.channel().remoteAddress();
                                if (ApplicationProtocolNames.HTTP_2.equals(protocol)) {
                                    ctx.pipeline().addLast(Http2FrameCodecBuilder.forServer().build());
                                    ctx.pipeline().addLast(new Http2MultiplexHandler(new ChannelInitializer<Http2StreamChannel>() {
                                        @Override
                                        protected void initChannel(Http2StreamChannel s) {
                                            serve(s.pipeline(), new Http2StreamFrameToHttpObjectCodec(true), "h2", peer);
                                        }
                                    }));
                                } else {
                                    serve(ctx.pipeline(), new HttpServerCodec(), "http/1.1", peer);
                                }
                            }
                        });
                    }
                }).bind(new InetSocketAddress("127.0.0.1", 0)).sync().channel();
    }

    int port() {
        return ((InetSocketAddress) server.localAddress()).getPort();
    }

    /** The protocols requests came in, in order. */
    List<String> protocols() {
        return seen.stream().map(Seen::protocol).toList();
    }

    private void serve(ChannelPipeline p, io.netty.channel.ChannelHandler codec, String protocol, InetSocketAddress peer) {
        p.addLast(codec);
        p.addLast(new ChunkedWriteHandler());
        p.addLast(new Serve(protocol, peer));
    }

    /** A prime number of pseudo-random bytes, repeated: what {@code /big} sends. */
    private static final byte[] PERIOD = new byte[1_048_573];

    static {
        new java.util.Random(42).nextBytes(PERIOD);
    }

    /** Byte {@code i} of every body {@code /big} sends. */
    static byte pattern(long i) {
        return PERIOD[(int) (i % PERIOD.length)];
    }

    /** Writes bytes {@code at} to {@code at + len} of the pattern into {@code b}. */
    static void pattern(ByteBuf b, long at, int len) {
        while (len > 0) {
            int from = (int) (at % PERIOD.length);
            int n = Math.min(len, PERIOD.length - from);
            b.writeBytes(PERIOD, from, n);
            at += n;
            len -= n;
        }
    }

    /** The SHA-256 of the first {@code n} bytes of {@link #pattern}, in hex. */
    static String patternSha(long n) throws Exception {
        MessageDigest sha = MessageDigest.getInstance("SHA-256");
        for (long at = 0; at < n; ) {
            int from = (int) (at % PERIOD.length);
            int len = (int) Math.min(PERIOD.length - from, n - at);
            sha.update(PERIOD, from, len);
            at += len;
        }
        return HexFormat.of().formatHex(sha.digest());
    }

    private final class Serve extends SimpleChannelInboundHandler<HttpObject> {
        private final String protocol;
        private final InetSocketAddress peer;
        private HttpRequest head;
        private MessageDigest sha;
        private long length;

        Serve(String protocol, InetSocketAddress peer) {
            this.protocol = protocol;
            this.peer = peer;
        }

        @Override
        protected void channelRead0(ChannelHandlerContext ctx, HttpObject msg) throws Exception {
            if (msg instanceof HttpRequest r) {
                head = r;
                sha = MessageDigest.getInstance("SHA-256");
                length = 0;
                StringBuilder h = new StringBuilder();
                r.headers().forEach(e -> h.append(e.getKey().toLowerCase(java.util.Locale.ROOT)).append(": ")
                        .append(e.getValue()).append('\n'));
                seen.add(new Seen(protocol, r.method() + " " + r.uri(), h.toString(), peer));
                peers.add(peer);
            }
            if (msg instanceof HttpContent c) {
                ByteBuf b = c.content();
                length += b.readableBytes();
                sha.update(b.nioBuffer());
                if (msg instanceof LastHttpContent) {
                    answer(ctx);
                }
            }
        }

        private void answer(ChannelHandlerContext ctx) {
            String uri = head.uri();
            String path = uri.contains("?") ? uri.substring(0, uri.indexOf('?')) : uri;
            long n = uri.contains("?n=") ? Long.parseLong(uri.substring(uri.indexOf("?n=") + 3)) : 0;
            switch (path) {
                case "/hello" -> text(ctx, "hello over " + protocol + "\n");
                case "/sink" -> text(ctx, HexFormat.of().formatHex(sha.digest()) + " " + length);
                case "/big" -> {
                    ctx.write(head(n));
                    ctx.writeAndFlush(new HttpChunkedInput(new Pattern(n)));
                }
                case "/reset", "/goaway" -> {
                    ctx.write(head(n * 2));
                    ByteBuf part = ctx.alloc().buffer((int) n);
                    pattern(part, 0, (int) n);
                    ctx.writeAndFlush(new DefaultHttpContent(part)).addListener((ChannelFutureListener) f -> {
                        if (path.equals("/reset")) {
                            f.channel().close(); // a stream channel closed before its end: RST_STREAM
                        } else {
                            Channel conn = f.channel().parent();
                            conn.writeAndFlush(new DefaultHttp2GoAwayFrame(Http2Error.NO_ERROR))
                                    .addListener(ChannelFutureListener.CLOSE);
                        }
                    });
                }
                case "/events" -> {
                    DefaultHttpResponse res = new DefaultHttpResponse(HttpVersion.HTTP_1_1, HttpResponseStatus.OK);
                    res.headers().set(HttpHeaderNames.CONTENT_TYPE, "text/event-stream");
                    if (protocol.equals("http/1.1")) {
                        res.headers().set(HttpHeaderNames.TRANSFER_ENCODING, "chunked");
                    }
                    ctx.write(res);
                    ctx.writeAndFlush(new DefaultHttpContent(Unpooled.copiedBuffer("data: one\n\n",
                            StandardCharsets.US_ASCII)));
                    Thread.ofVirtual().start(() -> {
                        try {
                            eventGate.await(30, TimeUnit.SECONDS);
                        } catch (InterruptedException e) {
                            return;
                        }
                        ctx.writeAndFlush(new io.netty.handler.codec.http.DefaultLastHttpContent(Unpooled.copiedBuffer(
                                "data: two\n\n", StandardCharsets.US_ASCII)));
                    });
                }
                default -> {
                    var res = new DefaultFullHttpResponse(HttpVersion.HTTP_1_1, HttpResponseStatus.NOT_FOUND);
                    res.headers().setInt(HttpHeaderNames.CONTENT_LENGTH, 0);
                    ctx.writeAndFlush(res);
                }
            }
        }

        private DefaultHttpResponse head(long n) {
            DefaultHttpResponse res = new DefaultHttpResponse(HttpVersion.HTTP_1_1, HttpResponseStatus.OK);
            res.headers().set(HttpHeaderNames.CONTENT_LENGTH, n);
            return res;
        }

        private void text(ChannelHandlerContext ctx, String s) {
            var res = new DefaultFullHttpResponse(HttpVersion.HTTP_1_1, HttpResponseStatus.OK,
                    Unpooled.copiedBuffer(s, StandardCharsets.UTF_8));
            res.headers().setInt(HttpHeaderNames.CONTENT_LENGTH, res.content().readableBytes());
            ctx.writeAndFlush(res);
        }
    }

    /** N bytes of {@link #pattern}, 64 KiB at a time. */
    private static final class Pattern implements ChunkedInput<ByteBuf> {
        private final long length;
        private long at;

        Pattern(long length) {
            this.length = length;
        }

        @Override
        public boolean isEndOfInput() {
            return at >= length;
        }

        @Override
        public void close() {
        }

        @Override
        @Deprecated
        public ByteBuf readChunk(ChannelHandlerContext ctx) {
            return readChunk(ctx.alloc());
        }

        @Override
        public ByteBuf readChunk(ByteBufAllocator alloc) {
            if (isEndOfInput()) {
                return null;
            }
            int len = (int) Math.min(64 * 1024, length - at);
            ByteBuf b = alloc.buffer(len);
            pattern(b, at, len);
            at += len;
            return b;
        }

        @Override
        public long length() {
            return length;
        }

        @Override
        public long progress() {
            return at;
        }
    }

    @Override
    public void close() {
        eventGate.countDown();
        server.close().syncUninterruptibly();
    }

    /** A TCP listener's channel of the transport the broker's loops run ({@code NettyTransport}). */
    private static Class<? extends io.netty.channel.ServerChannel> tcpServer() {
        return dev.kosa8.host.NettyTransport.CURRENT == dev.kosa8.host.NettyTransport.EPOLL
                ? io.netty.channel.epoll.EpollServerSocketChannel.class
                : io.netty.channel.socket.nio.NioServerSocketChannel.class;
    }
}
