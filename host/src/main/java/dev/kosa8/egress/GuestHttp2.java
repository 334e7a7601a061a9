package dev.kosa8.egress;

import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelPipeline;
import io.netty.channel.ChannelDuplexHandler;
import io.netty.handler.codec.http2.Http2FrameCodec;
import io.netty.handler.codec.http2.Http2FrameCodecBuilder;
import io.netty.handler.codec.http2.Http2MultiplexHandler;
import io.netty.handler.codec.http2.Http2Settings;
import io.netty.handler.codec.http2.Http2StreamChannel;
import io.netty.handler.codec.http2.Http2StreamFrameToHttpObjectCodec;
import io.netty.handler.timeout.IdleStateEvent;
import io.netty.handler.timeout.IdleStateHandler;

/**
 * The HTTP/2 side of an intercepted connection whose guest chose {@code h2}
 * in ALPN: Netty's HTTP/2 codec reads the guest's frames under the limits
 * below (the guest's bytes are hostile), and each stream becomes one request
 * that {@link HttpEntry} judges on its own: its {@code :authority} (and any
 * {@code host} header) must name the server the connection was opened for,
 * else that stream alone gets {@code 421}. A stream is carried on as an
 * HTTP/1.1 request over TLS the broker verifies, reusing idle upstream
 * connections of the same guest connection.
 */
final class GuestHttp2 {
    /**
     * Streams open at once per connection. Each may hold a request body of up to {@link Broker#MAX_BODY} in memory
     * while it is judged and sent (a longer one waits on disk), so this bounds what one connection can make the
     * daemon hold (128 MiB).
     */
    static final int MAX_CONCURRENT_STREAMS = 16;
    /** A request's header block, decoded: the same bound as HTTP/1.1's headers. */
    static final int MAX_HEADER_LIST = StrictRequestDecoder.MAX_HEADERS;
    /**
     * How much of a stream's request body the guest may send ahead of what the broker has read: the default
     * (64 KiB) held an upload to 74 MB/s where HTTP/1.1 made 197 (bench/egress.sh). The broker reads a body as it
     * comes (into memory or its spool file), so what a window lets in is soon taken; the connection's window is
     * one of these per stream.
     */
    static final int STREAM_WINDOW = 1 << 20;
    /** The protocol's smallest maximum frame size, which every peer must accept. */
    static final int MAX_FRAME = 16 * 1024;
    /** RST_STREAM frames from the guest in {@link #RST_WINDOW_SECONDS} before the connection ends (rapid reset). */
    static final int MAX_RESETS = 200;
    static final int RST_WINDOW_SECONDS = 30;
    /** Consecutive empty DATA frames before the connection ends. */
    static final int MAX_EMPTY_DATA = 2;
    /** Small CONTINUATION frames in a row before the connection ends (the CONTINUATION flood). */
    static final int MAX_SMALL_CONTINUATIONS = 16;

    /** An HTTP method: a token (RFC 9110 5.6.2). */
    private static final java.util.regex.Pattern TOKEN = java.util.regex.Pattern.compile("[!#$%&'*+.^_`|~0-9A-Za-z-]{1,32}");
    /** What an HTTP/1.1 request line may carry as its target: visible ASCII. */
    private static final java.util.regex.Pattern VISIBLE = java.util.regex.Pattern.compile("[!-~]+");

    private GuestHttp2() {
    }

    /**
     * Refuses, with a {@code 400} of its own, a stream whose request head Netty's conversion to HTTP/1.1 cannot
     * take: no {@code :method} or one that is not a token, CONNECT (which the broker never offers, and which the
     * conversion turns into a request for its {@code :authority}), no {@code :path} or one that is not visible
     * ASCII. The conversion would throw after taking a buffer it does not give back, so a guest could
     * make the daemon leak one per stream; and the answer says what was wrong.
     */
    static final class RequestHeadCheck extends io.netty.channel.ChannelInboundHandlerAdapter {
        private final Broker broker;
        private final Listener listener;
        private final String host;
        private final int port;
        private boolean refused;
        private boolean headSeen;

        RequestHeadCheck(Broker broker, Listener listener, String host, int port) {
            this.broker = broker;
            this.listener = listener;
            this.host = host;
            this.port = port;
        }

        @Override
        public void channelRead(ChannelHandlerContext ctx, Object msg) {
            if (refused) {
                io.netty.util.ReferenceCountUtil.release(msg);
                return;
            }
            if (!headSeen && msg instanceof io.netty.handler.codec.http2.Http2HeadersFrame head) {
                headSeen = true;
                CharSequence method = head.headers().method();
                String problem = method == null || !TOKEN.matcher(method).matches()
                        ? "an HTTP/2 request whose :method is not an HTTP method"
                        : io.netty.handler.codec.http.HttpMethod.CONNECT.asciiName().contentEquals(method)
                        ? "an HTTP/2 CONNECT, which the broker does not offer"
                        : head.headers().path() == null || head.headers().path().isEmpty()
                        ? "an HTTP/2 request with no :path"
                        : !VISIBLE.matcher(head.headers().path()).matches()
                        ? "an HTTP/2 request whose :path has a space, a control or a non-ASCII character" : null;
                if (problem != null) {
                    refused = true;
                    io.netty.util.ReferenceCountUtil.release(msg);
                    broker.audit().write(new AuditEvent(java.time.Instant.now(), listener.label(), host, port, null,
                            null, null, "deny", "malformed request: " + problem, null, null, null));
                    var answer = new io.netty.handler.codec.http2.DefaultHttp2Headers().status("400")
                            .set("x-kosa8-denied", "policy");
                    ctx.writeAndFlush(new io.netty.handler.codec.http2.DefaultHttp2HeadersFrame(answer, true))
                            .addListener(f -> Denials.lingerClose(ctx.channel()));
                    return;
                }
            }
            ctx.fireChannelRead(msg);
        }
    }

    /** The frame codec with the broker's limits; the fuzz test drives the same one. */
    static Http2FrameCodec frameCodec() {
        return Http2FrameCodecBuilder.forServer()
                .initialSettings(Http2Settings.defaultSettings()
                        .maxConcurrentStreams(MAX_CONCURRENT_STREAMS)
                        .maxHeaderListSize(MAX_HEADER_LIST)
                        .maxFrameSize(MAX_FRAME)
                        .initialWindowSize(STREAM_WINDOW))
                .validateHeaders(true)
                .validateRequiredPseudoHeaders(true)
                .decoderEnforceMaxRstFramesPerWindow(MAX_RESETS, RST_WINDOW_SECONDS)
                .decoderEnforceMaxConsecutiveEmptyDataFrames(MAX_EMPTY_DATA)
                .decoderEnforceMaxSmallContinuationFrames(MAX_SMALL_CONTINUATIONS)
                .build();
    }

    /**
     * Adds the HTTP/2 handlers at the end of {@code p}, for requests to {@code host:port} arriving on
     * {@code listener}.
     */
    static void install(ChannelPipeline p, Broker broker, Listener listener, String host, int port) {
        Http2FrameCodec codec = frameCodec();
        UpstreamSlot upstreams = new UpstreamSlot(p.channel(), MAX_CONCURRENT_STREAMS);
        p.addLast(HttpEntry.IDLE, new IdleStateHandler(Broker.IDLE_SECONDS, 0, 0));
        p.addLast("h2", codec);
        try {
            // the connection's own window grows by a WINDOW_UPDATE of its own, after the preface the codec sent
            codec.connection().local().flowController().incrementWindowSize(codec.connection().connectionStream(),
                    MAX_CONCURRENT_STREAMS * STREAM_WINDOW - io.netty.handler.codec.http2.Http2CodecUtil
                            .DEFAULT_WINDOW_SIZE);
            p.channel().flush();
        } catch (io.netty.handler.codec.http2.Http2Exception e) {
            throw new IllegalStateException("cannot widen the HTTP/2 connection's window", e);
        }
        p.addLast("h2-idle", new ChannelDuplexHandler() {
            /** A connection with no stream open for the idle time is closed, as an idle HTTP/1.1 one is. */
            @Override
            public void userEventTriggered(ChannelHandlerContext ctx, Object evt) {
                if (evt instanceof IdleStateEvent && codec.connection().numActiveStreams() == 0) {
                    ctx.close();
                    return;
                }
                ctx.fireUserEventTriggered(evt);
            }
        });
        p.addLast("streams", new Http2MultiplexHandler(new ChannelInitializer<Http2StreamChannel>() {
            @Override
            protected void initChannel(Http2StreamChannel ch) {
                ch.pipeline().addLast(new RequestHeadCheck(broker, listener, host, port));
                ch.pipeline().addLast(new Http2StreamFrameToHttpObjectCodec(true, true));
                ch.pipeline().addLast(new HeadGate(broker, listener, host, port));
                ch.pipeline().addLast(new BodySpool(broker, listener, host, port));
                ch.pipeline().addLast(new HttpEntry(broker, listener, host, port, upstreams, true));
            }
        }));
        p.addLast("end", new ChannelDuplexHandler() {
            /**
             * What the codec passes on after answering an error in the guest's frames itself (RST_STREAM for a
             * stream, GOAWAY and a close for the connection): the guest's affair, not the daemon log's. Closing here
             * would drop the answers the connection's other streams are owed. Anything else ends the connection.
             */
            @Override
            public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
                if (io.netty.handler.codec.http2.Http2CodecUtil.getEmbeddedHttp2Exception(cause) == null
                        && !(cause instanceof io.netty.handler.codec.http2.Http2FrameStreamException)) {
                    ctx.close();
                }
            }
        });
    }
}
