package dev.kosa8.egress;

import io.netty.channel.Channel;
import io.netty.channel.ChannelDuplexHandler;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.handler.codec.http2.Http2CodecUtil;
import io.netty.handler.codec.http2.Http2Exception;
import io.netty.handler.codec.http2.Http2FrameCodec;
import io.netty.handler.codec.http2.Http2FrameCodecBuilder;
import io.netty.handler.codec.http2.Http2MultiplexHandler;
import io.netty.handler.codec.http2.Http2Settings;
import io.netty.handler.codec.http2.Http2StreamChannel;
import io.netty.handler.codec.http2.Http2StreamChannelBootstrap;
import io.netty.handler.codec.http2.Http2StreamFrameToHttpObjectCodec;
import io.netty.util.concurrent.Future;

/**
 * The upstream leg in HTTP/2, where the server picks {@code h2} from the
 * broker's ALPN offer ({@code h2, http/1.1}): one connection per guest
 * connection and upstream host, whose streams carry that guest connection's
 * requests, each judged on its own first exactly as an HTTP/1.1 one
 * ({@link HttpEntry}). Netty's codec reads the server's frames under the
 * limits below; a stream is read only as fast as the guest takes its response
 * ({@link ResponseRelay} reads on when the guest's side is writable),
 * and HTTP/2 flow control holds the server to {@link #STREAM_WINDOW} ahead of
 * that per stream and {@link #CONNECTION_WINDOW} per connection, so a slow
 * guest holds the server back instead of filling the daemon's heap.
 */
final class UpstreamHttp2 {
    /** What the server may send on one stream ahead of what the guest has taken: as the guest side's window. */
    static final int STREAM_WINDOW = GuestHttp2.STREAM_WINDOW;
    /**
     * What the server may send on the whole connection ahead of the guest: one stream window for each stream the
     * guest connection may have open, so one stalled stream does not stall the others (16 MiB).
     */
    static final int CONNECTION_WINDOW = GuestHttp2.MAX_CONCURRENT_STREAMS * STREAM_WINDOW;
    /** A response's header block, decoded: the HTTP/1.1 leg's bound on a response head (64 KiB). */
    static final int MAX_HEADER_LIST = 64 * 1024;
    /** The name of the codec that turns a stream's frames into HTTP objects, as the HTTP/1.1 codec is named. */
    static final String CODEC = "codec";

    private UpstreamHttp2() {
    }

    /**
     * One HTTP/2 connection to an upstream.
     *
     * @param key    "host:port"
     * @param target where it goes, as the audit log says it
     */
    record Session(String key, Channel channel, Http2FrameCodec codec, Upstreams.Target target) {
        /** Open, not told to go away, and under the server's limit of concurrent streams. */
        boolean canOpen() {
            return channel.isActive() && !codec.connection().goAwayReceived()
                    && codec.connection().local().canOpenStream();
        }

        /** A new stream, reading only when asked ({@code read()}), its frames as HTTP objects under {@link #CODEC}. */
        Future<Http2StreamChannel> open() {
            return new Http2StreamChannelBootstrap(channel).option(ChannelOption.AUTO_READ, false)
                    .handler(new ChannelInitializer<Http2StreamChannel>() {
                        @Override
                        protected void initChannel(Http2StreamChannel ch) {
                            ch.pipeline().addLast(new StatusCheck());
                            ch.pipeline().addLast(CODEC, new Http2StreamFrameToHttpObjectCodec(false, true));
                            ch.pipeline().addLast(new HeadFirst());
                        }
                    }).open();
        }
    }

    /** An HTTP status code: three digits, 1xx to 5xx. */
    private static final java.util.regex.Pattern STATUS = java.util.regex.Pattern.compile("[1-5][0-9][0-9]");

    /**
     * Refuses a response head whose {@code :status} is not an HTTP status code before Netty's conversion sees it:
     * the conversion throws after taking a buffer it does not give back (found by {@code UpstreamHttp2FuzzTest}), as
     * on the guest's side ({@link GuestHttp2.RequestHeadCheck}). The stream ends with an error (a {@code 502}).
     */
    static final class StatusCheck extends io.netty.channel.ChannelInboundHandlerAdapter {
        @Override
        public void channelRead(ChannelHandlerContext ctx, Object msg) {
            if (msg instanceof io.netty.handler.codec.http2.Http2HeadersFrame h) {
                CharSequence status = h.headers().status();
                if (status != null && !STATUS.matcher(status).matches()) {
                    io.netty.util.ReferenceCountUtil.release(msg);
                    ctx.fireExceptionCaught(new IllegalStateException("the server's HTTP/2 response has the status '"
                            + (status.length() > 20 ? status.subSequence(0, 20) + "..." : status)
                            + "', which is not an HTTP status"));
                    ctx.close();
                    return;
                }
            }
            ctx.fireChannelRead(msg);
        }
    }

    /**
     * Drops the frames of unknown types the codec passes on, and refuses a response body that comes before the
     * response's (final) head: Netty's codec passes a DATA frame the
     * server sends first on as content, which would reach the guest as a body with no head (found by
     * {@code UpstreamHttp2FuzzTest}). The stream ends with an error its relay answers as a {@code 502}.
     */
    static final class HeadFirst extends io.netty.channel.ChannelInboundHandlerAdapter {
        private boolean head;

        @Override
        public void channelRead(ChannelHandlerContext ctx, Object msg) {
            if (!(msg instanceof io.netty.handler.codec.http.HttpObject)) {
                io.netty.util.ReferenceCountUtil.release(msg); // an unknown frame type: ignored (RFC 9113 4.1)
                return;
            }
            if (msg instanceof io.netty.handler.codec.http.HttpResponse r) {
                head |= r.status().codeClass() != io.netty.handler.codec.http.HttpStatusClass.INFORMATIONAL;
            } else if (!head && msg instanceof io.netty.handler.codec.http.HttpContent) {
                io.netty.util.ReferenceCountUtil.release(msg);
                ctx.fireExceptionCaught(new IllegalStateException("the server sent an HTTP/2 response body before "
                        + "its head"));
                ctx.close();
                return;
            }
            ctx.fireChannelRead(msg);
        }
    }

    /**
     * Drops, on the connection before the streams, what flow control does not bound: a stream's frames wait in its
     * channel until its relay reads, which it does only as the guest takes the response, so a server could
     * otherwise queue frames of unknown types, or interim (1xx) heads, without end for a guest that does not read.
     * Unknown frames are dropped here (RFC 9113 4.1); past {@link #MAX_INTERIM} interim heads a stream is reset.
     */
    static final class FrameGuard extends io.netty.channel.ChannelInboundHandlerAdapter {
        /** Interim responses (100 Continue, 103 Early Hints) passed on per stream; a server needs one or two. */
        static final int MAX_INTERIM = 8;
        private final io.netty.handler.codec.http2.Http2Connection connection;
        private final io.netty.handler.codec.http2.Http2Connection.PropertyKey interim;

        FrameGuard(io.netty.handler.codec.http2.Http2Connection connection) {
            this.connection = connection;
            this.interim = connection.newKey();
        }

        @Override
        public void channelRead(ChannelHandlerContext ctx, Object msg) {
            if (msg instanceof io.netty.handler.codec.http2.Http2UnknownFrame) {
                io.netty.util.ReferenceCountUtil.release(msg);
                return;
            }
            if (msg instanceof io.netty.handler.codec.http2.Http2HeadersFrame h && interim(h)) {
                var stream = h.stream() == null ? null : connection.stream(h.stream().id());
                if (stream != null) {
                    Integer seen = stream.getProperty(interim);
                    int n = seen == null ? 1 : seen + 1;
                    stream.setProperty(interim, n);
                    if (n > MAX_INTERIM) {
                        ctx.writeAndFlush(new io.netty.handler.codec.http2.DefaultHttp2ResetFrame(
                                io.netty.handler.codec.http2.Http2Error.ENHANCE_YOUR_CALM).stream(h.stream()));
                        return;
                    }
                }
            }
            ctx.fireChannelRead(msg);
        }

        private static boolean interim(io.netty.handler.codec.http2.Http2HeadersFrame h) {
            CharSequence status = h.headers().status();
            return !h.isEndStream() && status != null && status.length() == 3 && status.charAt(0) == '1';
        }
    }

    /** The client frame codec with the broker's limits; the fuzz test drives the same one. */
    static Http2FrameCodec frameCodec() {
        return Http2FrameCodecBuilder.forClient()
                .initialSettings(Http2Settings.defaultSettings()
                        .pushEnabled(false)
                        .maxConcurrentStreams(0) // the server may open none (push is off)
                        .maxHeaderListSize(MAX_HEADER_LIST)
                        .initialWindowSize(STREAM_WINDOW))
                .validateHeaders(true)
                .build();
    }

    /**
     * Makes {@code ch}, whose TLS handshake chose {@code h2}, an HTTP/2 connection: the codec with its connection
     * window widened, streams opened by the broker only, and the connection read on its own from here (each stream
     * is bounded by its window instead).
     */
    static Session install(Channel ch, String key, Upstreams.Target target) {
        Http2FrameCodec codec = frameCodec();
        var p = ch.pipeline();
        p.addLast("h2", codec);
        p.addLast("frames", new FrameGuard(codec.connection()));
        p.addLast("streams", new Http2MultiplexHandler(new ChannelInitializer<Http2StreamChannel>() {
            @Override
            protected void initChannel(Http2StreamChannel stream) {
                stream.close(); // never: the server may not open streams (push is off)
            }
        }));
        p.addLast("end", new ChannelDuplexHandler() {
            /** A stream's error is that stream's (its relay sees it end); anything else ends the connection. */
            @Override
            public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
                if (Http2CodecUtil.getEmbeddedHttp2Exception(cause) == null
                        && !(cause instanceof io.netty.handler.codec.http2.Http2FrameStreamException)) {
                    ctx.close();
                }
            }
        });
        try {
            codec.connection().local().flowController().incrementWindowSize(codec.connection().connectionStream(),
                    CONNECTION_WINDOW - Http2CodecUtil.DEFAULT_WINDOW_SIZE);
        } catch (Http2Exception e) {
            throw new IllegalStateException("cannot widen the upstream HTTP/2 connection's window", e);
        }
        ch.flush();
        ch.config().setAutoRead(true);
        return new Session(key, ch, codec, target);
    }
}
