package dev.kosa8.egress;

import static dev.kosa8.egress.GuestHttp2FuzzTest.frame;
import static org.assertj.core.api.Assertions.assertThat;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.handler.codec.http.DefaultFullHttpRequest;
import io.netty.handler.codec.http.HttpContent;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpObject;
import io.netty.handler.codec.http.HttpResponse;
import io.netty.handler.codec.http.HttpVersion;
import io.netty.handler.codec.http2.DefaultHttp2Headers;
import io.netty.handler.codec.http2.DefaultHttp2HeadersEncoder;
import io.netty.handler.codec.http2.Http2Headers;
import io.netty.handler.codec.http2.Http2StreamChannel;
import io.netty.util.ReferenceCountUtil;
import java.io.ByteArrayOutputStream;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.List;
import java.util.Queue;
import java.util.Random;
import java.util.concurrent.ConcurrentLinkedQueue;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.ShrinkingMode;
import net.jqwik.api.lifecycle.AfterContainer;
import net.jqwik.api.lifecycle.BeforeContainer;

/**
 * A hostile upstream speaking HTTP/2 to the broker ({@link UpstreamHttp2}: Netty's client codec under the broker's
 * settings, streams as HTTP objects): after the broker's request on a stream, the server's bytes are SETTINGS,
 * HEADERS (HPACK-encoded, statuses good and bad, headers past the bound), DATA, RST_STREAM, GOAWAY, WINDOW_UPDATE,
 * PING, PUSH_PROMISE (which the broker turned off), unknown frames, for the broker's stream and others; then bits
 * flipped, frames cut, bytes repeated and lengths that lie. What must hold: nothing escapes the pipeline as an
 * exception or reaches Netty's log (no leak either, under the paranoid detector), and what the broker's stream
 * passes on is a response head first, then its content, never content without a head.
 */
class UpstreamHttp2FuzzTest {
    private static final List<String> STATUSES = List.of("200", "200", "204", "404", "103", "100", "999", "abc", "");
    private static final Queue<String> problems = new ConcurrentLinkedQueue<>();
    private static NettyWarnings netty;

    @BeforeContainer
    static void start() {
        netty = NettyWarnings.into(problems);
    }

    @AfterContainer
    static void stop() {
        netty.close();
    }

    record Input(byte[] bytes, int mutations) {
        @Override
        public String toString() {
            return bytes.length + " bytes, " + mutations + " mutations";
        }
    }

    @Property(tries = 500, shrinking = ShrinkingMode.OFF)
    void whateverTheServerSendsTheStreamGetsAHeadThenContentOrEnds(@ForAll("inputs") Input in) {
        EmbeddedChannel ch = new EmbeddedChannel();
        List<String> seen = new ArrayList<>();
        try {
            UpstreamHttp2.Session s = UpstreamHttp2.install(ch, "fuzz.test:443", new Upstreams.Target(
                    new InetSocketAddress("127.0.0.1", 443), "127.0.0.1"));
            var opened = s.open();
            ch.runPendingTasks();
            Http2StreamChannel stream = (Http2StreamChannel) opened.getNow();
            assertThat(stream).isNotNull();
            stream.pipeline().addLast(new ChannelInboundHandlerAdapter() {
                @Override
                public void channelRead(ChannelHandlerContext ctx, Object msg) {
                    try {
                        if (msg instanceof HttpObject o && o.decoderResult().isFailure()) {
                            seen.add("failure");
                        } else if (msg instanceof HttpResponse) {
                            seen.add("head");
                        } else if (msg instanceof HttpContent) {
                            seen.add("content");
                        } else {
                            seen.add(msg.getClass().getSimpleName());
                        }
                    } finally {
                        ReferenceCountUtil.release(msg);
                    }
                    ctx.read();
                }

                @Override
                public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
                    ctx.close(); // what the broker's relay does
                }
            });
            var req = new DefaultFullHttpRequest(HttpVersion.HTTP_1_1, HttpMethod.GET, "/x");
            req.headers().set("host", "fuzz.test");
            stream.writeAndFlush(req);
            stream.read();
            ch.runPendingTasks();
            ch.writeInbound(Unpooled.wrappedBuffer(in.bytes()));
            ch.runPendingTasks();
            ch.checkException();
        } finally {
            ch.finishAndReleaseAll();
        }
        assertThat(seen).as(in.toString()).allMatch(x -> x.equals("head") || x.equals("content")
                || x.equals("failure"));
        int head = seen.indexOf("head");
        int content = seen.indexOf("content");
        assertThat(content < 0 || head >= 0 && head < content).as(in + ": " + seen).isTrue();
        assertThat(problems).as(in.toString()).isEmpty();
    }

    @Provide
    Arbitrary<Input> inputs() {
        return Arbitraries.longs().map(seed -> input(new Random(seed)));
    }

    static Input input(Random r) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        out.writeBytes(frame(4, 0, 0, new byte[0])); // the server's SETTINGS: its preface
        out.writeBytes(frame(4, 1, 0, new byte[0])); // and its ACK of ours
        DefaultHttp2HeadersEncoder hpack = new DefaultHttp2HeadersEncoder();
        int frames = 1 + r.nextInt(8);
        for (int i = 0; i < frames; i++) {
            int id = List.of(3, 3, 3, 1, 5, 0).get(r.nextInt(6)); // 3: the broker's first stream
            switch (r.nextInt(9)) {
                case 0, 1, 2 -> {
                    Http2Headers h = new DefaultHttp2Headers(false);
                    String status = STATUSES.get(r.nextInt(STATUSES.size()));
                    if (!status.isEmpty()) {
                        h.status(status);
                    }
                    if (r.nextInt(3) == 0) {
                        h.add("content-length", List.of("5", "0", "-1", "x", "99999999999").get(r.nextInt(5)));
                    }
                    if (r.nextInt(6) == 0) {
                        h.add("x-filler", "v".repeat(r.nextInt(90_000)));
                    }
                    if (r.nextInt(8) == 0) {
                        h.add("connection", "close"); // connection-specific: malformed in HTTP/2
                    }
                    ByteBuf block = Unpooled.buffer();
                    try {
                        hpack.encodeHeaders(id, h, block);
                    } catch (io.netty.handler.codec.http2.Http2Exception e) {
                        block.release();
                        continue;
                    }
                    byte[] bytes = new byte[block.readableBytes()];
                    block.readBytes(bytes);
                    block.release();
                    int flags = 0x4 | (r.nextBoolean() ? 0x1 : 0);
                    if (bytes.length > 16_384) { // HEADERS, then CONTINUATION frames
                        out.writeBytes(frame(1, flags & 0x1, id, java.util.Arrays.copyOf(bytes, 16_384)));
                        for (int pos = 16_384; pos < bytes.length; pos += 16_384) {
                            int end = Math.min(bytes.length, pos + 16_384);
                            out.writeBytes(frame(9, end == bytes.length ? 0x4 : 0, id,
                                    java.util.Arrays.copyOfRange(bytes, pos, end)));
                        }
                    } else {
                        out.writeBytes(frame(1, flags, id, bytes));
                    }
                }
                case 3, 4 -> {
                    byte[] data = new byte[r.nextInt(20_000)];
                    r.nextBytes(data);
                    out.writeBytes(frame(0, r.nextBoolean() ? 0x1 : 0, id, data));
                }
                case 5 -> out.writeBytes(frame(3, 0, id, new byte[] {0, 0, 0, (byte) r.nextInt(14)})); // RST_STREAM
                case 6 -> out.writeBytes(frame(7, 0, 0, new byte[] {0, 0, 0, (byte) (r.nextBoolean() ? 3 : 1), 0, 0, 0,
                        (byte) r.nextInt(3)})); // GOAWAY, last stream 1 or 3
                case 7 -> out.writeBytes(frame(5, 0x4, id, new byte[] {0, 0, 0, 2, (byte) 0x82})); // PUSH_PROMISE
                default -> out.writeBytes(switch (r.nextInt(4)) {
                    case 0 -> frame(8, 0, id, new byte[] {0, 0, (byte) r.nextInt(256), 1}); // WINDOW_UPDATE
                    case 1 -> frame(6, 0, 0, new byte[8]); // PING
                    case 2 -> frame(4, 0, 0, new byte[] {0, 3, 0, 0, 0, 0}); // SETTINGS: no streams at all
                    default -> frame(0x42, 0, id, new byte[r.nextInt(20)]);
                });
            }
        }
        byte[] bytes = out.toByteArray();
        int mutations = List.of(0, 0, 1, 1, 2, 3).get(r.nextInt(6));
        for (int m = 0; m < mutations; m++) {
            bytes = mutate(r, bytes);
        }
        return new Input(bytes, mutations);
    }

    private static byte[] mutate(Random r, byte[] b) {
        if (b.length < 2) {
            return b;
        }
        int at = r.nextInt(b.length);
        byte[] c = b.clone();
        switch (r.nextInt(4)) {
            case 0 -> c[at] ^= (byte) (1 << r.nextInt(8));
            case 1 -> c = java.util.Arrays.copyOf(b, at);
            case 2 -> {
                int len = Math.min(b.length - at, 1 + r.nextInt(64));
                c = new byte[b.length + len];
                System.arraycopy(b, 0, c, 0, at + len);
                System.arraycopy(b, at, c, at + len, b.length - at);
            }
            default -> c[at] = (byte) 0xff;
        }
        return c;
    }
}
