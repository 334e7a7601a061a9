package dev.kosa8.egress;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.handler.codec.http2.DefaultHttp2FrameReader;
import io.netty.handler.codec.http2.DefaultHttp2Headers;
import io.netty.handler.codec.http2.DefaultHttp2HeadersEncoder;
import io.netty.handler.codec.http2.Http2FrameAdapter;
import io.netty.handler.codec.http2.Http2Headers;
import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Queue;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.ConcurrentLinkedQueue;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.ShrinkingMode;
import net.jqwik.api.lifecycle.AfterContainer;
import net.jqwik.api.lifecycle.BeforeContainer;
import net.jqwik.api.statistics.Statistics;
import net.jqwik.api.statistics.StatisticsReport;

/**
 * A hostile guest speaking HTTP/2 inside intercepted TLS: the broker's guest-facing HTTP/2 pipeline
 * ({@link GuestHttp2}, Netty's codec under the broker's limits, one {@link HttpEntry} per stream) is fed
 * the connection preface, SETTINGS and streams of HEADERS (HPACK-encoded, with the authority, host
 * header, method and path drawn from good and bad values), DATA, CONTINUATION, PING, PRIORITY,
 * WINDOW_UPDATE, RST_STREAM, GOAWAY and unknown frames; then bits flipped, frames cut, bytes
 * repeated and length fields that lie. The host's only rule allows a path no input asks for, so
 * nothing is ever carried on: every stream the broker answers gets a refusal of its own.
 *
 * <p>What must hold: nothing escapes the pipeline as an exception or reaches Netty's log as an
 * unhandled one or a leak; every frame the broker writes back parses, and every answer is one of
 * its refusals (never a 2xx, never something it carried). For inputs left whole, each complete
 * stream is answered on its own: {@code 421} when its authority is another host's, else a policy
 * or path refusal.
 */
class GuestHttp2FuzzTest {
    private static final String HOST = "fuzz.test";
    private static final byte[] PREFACE = "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n".getBytes(StandardCharsets.US_ASCII);
    private static final List<String> AUTHORITIES = List.of(HOST, HOST, HOST, "FUZZ.TEST", HOST + ":443",
            "other.test", "other.test", HOST + ":8443", "", "a b", "127.0.0.1", "user@" + HOST, HOST + ".evil",
            "x".repeat(300));
    private static final List<String> PATHS = List.of("/", "/x", "/a/../b", "/%2e%2e/x", "*", "x", "/" + "p".repeat(
            5000));
    private static final List<String> METHODS = List.of("GET", "GET", "POST", "CONNECT", "OPTIONS", "G E T", "");
    private static final Set<Integer> REFUSALS = Set.of(400, 403, 413, 421, 431);
    private static final Queue<String> problems = new ConcurrentLinkedQueue<>();
    private static FuzzBroker fuzz;
    private static Broker broker;
    private static NettyWarnings netty;

    @BeforeContainer
    static void start() throws Exception {
        netty = NettyWarnings.into(problems);
        fuzz = FuzzBroker.start("sbx-h2-fuzz", new EgressPolicy(false,
                List.of(AllowRule.parse("GET " + HOST + "/only-this-path-is-allowed"))), problems::add);
        broker = fuzz.broker();
    }

    @AfterContainer
    static void stop() throws Exception {
        fuzz.close();
        netty.close();
    }

    /**
     * One stream the input opens, and what the broker must answer it when the input is left whole.
     *
     * @param headerList the decoded size of its header block (RFC 7541 4.1: name, value and 32 per field)
     * @param extra      what followed the stream's frames: 0 nothing, 1 a frame for the stream (PRIORITY, RST_STREAM,
     *                   WINDOW_UPDATE: the guest may have cancelled it), 2 a frame for the connection
     * @param body       a DATA frame followed the header block
     * @param headerBlockEnds whether a frame of the header block carries END_HEADERS: the generator's split into
     *                   HEADERS and CONTINUATION may put the whole block in the HEADERS frame, without the flag,
     *                   and write no CONTINUATION after it
     */
    record Stream2(int id, String authority, String hostHeader, String method, String path, boolean ends,
                   int headerList, int extra, boolean body, boolean headerBlockEnds) {
        boolean otherHost() {
            Authority a = Authority.parse(authority, 443);
            Authority h = hostHeader == null ? null : Authority.parse(hostHeader, 443);
            return a == null || !a.host().equals(HOST) || a.port() != 443
                    || hostHeader != null && (h == null || !h.host().equals(HOST) || h.port() != 443);
        }

        /**
         * Netty's codec refuses the request itself before the broker sees it: RST_STREAM, a 431 of its own, or
         * GOAWAY for the connection.
         */
        boolean malformed() {
            // a header block that never ends (RFC 9113 4.3, 6.2, 6.10): the stream never opens, and any frame after it
            // but a CONTINUATION of the same stream is a connection error of type PROTOCOL_ERROR
            // a host header that is not the :authority: the codec resets the stream ("Conflicting ':authority' and
            // 'host' headers", RFC 9113 8.3.1), so it never reaches the broker either
            return !headerBlockEnds || headerList > GuestHttp2.MAX_HEADER_LIST || !path.startsWith("/")
                    || method.isEmpty() || authority.isEmpty()
                    || hostHeader != null && !hostHeader.equals(authority) || method.contains(" ") || path.isEmpty()
                    || authority.contains(" ") || method.equals("CONNECT");
        }
    }

    record Input(byte[] bytes, List<Stream2> streams, int mutations, String what) {
        @Override
        public String toString() {
            return what + " (" + bytes.length + " bytes, " + mutations + " mutations)";
        }
    }

    @StatisticsReport(StatisticsReport.StatisticsReportMode.OFF) // kept for the coverage checks
    @Property(tries = 600, shrinking = ShrinkingMode.OFF)
    void mutatedHttp2FramesAreAnsweredStreamByStreamOrTheConnectionEnds(@ForAll("inputs") Input in) {
        // a connection accepted by a server channel, as the broker's are: Netty's HTTP/2 multiplexer tells a server
        // from a client by that
        EmbeddedChannel ch = new EmbeddedChannel(new io.netty.channel.local.LocalServerChannel(),
                io.netty.channel.DefaultChannelId.newInstance(), true, false);
        GuestHttp2.install(ch.pipeline(), broker, Listener.TLS, HOST, 443);
        Map<Integer, Integer> statuses = new LinkedHashMap<>();
        try {
            ch.writeInbound(Unpooled.wrappedBuffer(in.bytes()));
            ch.runPendingTasks();
            ch.checkException();
            readAnswers(ch, statuses);
        } finally {
            ch.finishAndReleaseAll();
        }
        Map<Integer, Integer> answers = new LinkedHashMap<>(statuses);
        answers.keySet().removeIf(id -> id <= 0);
        assertThat(answers.values()).as(in.toString()).allMatch(REFUSALS::contains);
        if (in.mutations() == 0) {
            // a stream further on that the codec takes as a protocol error ends the connection (GOAWAY) in the same
            // read, and the answers of streams before it that were still being made are then never written: Netty's
            // multiplexer starts each stream's handler in a task after the read. Those may go unanswered, nothing
            // else: the connection ended, and any answer written is checked above to be a refusal.
            boolean endedByALaterError = statuses.getOrDefault(0, 0) != 0 // GOAWAY with an error code
                    && in.streams().stream().anyMatch(s -> s.malformed() || s.extra() == 2);
            for (Stream2 s : in.streams()) {
                if (!s.headerBlockEnds()) {
                    // RFC 9113 6.2 and 6.10: a header block is HEADERS and CONTINUATION frames of its stream in a row,
                    // the last with END_HEADERS. This one has none, so its request never began (RFC 9113 4.3), and
                    // whatever frame came next (its body's DATA, another stream's HEADERS, a control frame) must end
                    // the connection with PROTOCOL_ERROR; if none came the block is simply still incomplete.
                    boolean followed = s.body() || s.extra() != 0 || s != in.streams().getLast();
                    assertThat(statuses).as(s + " in " + in + ": a stream whose header block never ended")
                            .doesNotContainKey(s.id());
                    if (followed) {
                        assertThat(statuses.get(0)).as(s + " in " + in + ": GOAWAY's error code, after a frame in "
                                + "an unfinished header block; " + statuses).isEqualTo(1);
                    }
                    break;
                }
                if (s.malformed()) {
                    break; // the codec may end the whole connection for it (a protocol error), answering nothing more
                }
                if (s.extra() == 2) {
                    break; // GOAWAY, new SETTINGS, a PING or an unknown frame: what follows is the codec's call
                }
                if (!s.ends() || s.extra() == 1) {
                    continue;
                }
                Integer status = statuses.get(s.id());
                if (status == null && endedByALaterError) {
                    continue;
                }
                assertThat(status).as(s + " in " + in + "; answers, resets (negative) and GOAWAY (0): " + statuses)
                        .isNotNull();
                if (s.otherHost()) {
                    assertThat(status).as(s.toString()).isEqualTo(421);
                } else {
                    assertThat(status).as(s.toString()).isIn(400, 403);
                }
            }
        }
        List<String> seen = new ArrayList<>();
        for (String p; (p = problems.poll()) != null; ) {
            seen.add(p);
        }
        assertThat(seen).as("unhandled exceptions, leaks or audit failures, after " + in).isEmpty();
        // an input opens several streams: each kind of answer is counted where it occurs at all, so that both the
        // fronting refusal and the policy's own refusal are reached often
        Statistics.label("421").collect(answers.containsValue(421));
        Statistics.label("403").collect(answers.containsValue(403));
        Statistics.label("421").coverage(c -> c.check(true).percentage(p -> p > 10));
        Statistics.label("403").coverage(c -> c.check(true).percentage(p -> p > 10));
    }

    /** The frames the broker wrote, parsed as a client would: the {@code :status} of each stream's answer. */
    private static void readAnswers(EmbeddedChannel ch, Map<Integer, Integer> statuses) {
        ByteBuf all = Unpooled.buffer();
        for (Object o; (o = ch.readOutbound()) != null; ) {
            ByteBuf b = (ByteBuf) o;
            all.writeBytes(b);
            b.release();
        }
        try (DefaultHttp2FrameReader reader = new DefaultHttp2FrameReader(true)) {
            EmbeddedChannel client = new EmbeddedChannel();
            ChannelHandlerContext ctx = client.pipeline().firstContext() == null
                    ? client.pipeline().addLast(new io.netty.channel.ChannelInboundHandlerAdapter()).firstContext()
                    : client.pipeline().firstContext();
            reader.readFrame(ctx, all, new Http2FrameAdapter() {
                @Override
                public void onHeadersRead(ChannelHandlerContext c, int streamId, Http2Headers headers, int padding,
                                          boolean endStream) {
                    CharSequence st = headers.status();
                    if (st != null) {
                        statuses.putIfAbsent(streamId, Integer.parseInt(st.toString()));
                    }
                }

                @Override
                public void onRstStreamRead(ChannelHandlerContext c, int streamId, long errorCode) {
                    statuses.putIfAbsent(-streamId, (int) errorCode); // resets, kept apart under negative ids
                }

                @Override
                public void onGoAwayRead(ChannelHandlerContext c, int lastStreamId, long errorCode,
                                         ByteBuf debugData) {
                    statuses.put(0, (int) errorCode);
                }

                @Override
                public void onHeadersRead(ChannelHandlerContext c, int streamId, Http2Headers headers,
                                          int streamDependency, short weight, boolean exclusive, int padding,
                                          boolean endStream) {
                    onHeadersRead(c, streamId, headers, padding, endStream);
                }
            });
            assertThat(all.readableBytes()).as("the broker's frames parse to their end").isZero();
            client.finishAndReleaseAll();
        } catch (io.netty.handler.codec.http2.Http2Exception e) {
            throw new AssertionError("the broker wrote a frame a client cannot read: " + e, e);
        } finally {
            all.release();
        }
    }

    @Provide
    Arbitrary<Input> inputs() {
        return Arbitraries.longs().map(seed -> input(new Random(seed)));
    }

    static Input input(Random r) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        out.writeBytes(PREFACE);
        out.writeBytes(frame(4, 0, 0, new byte[0])); // SETTINGS
        List<Stream2> streams = new ArrayList<>();
        DefaultHttp2HeadersEncoder hpack = new DefaultHttp2HeadersEncoder();
        int n = 1 + r.nextInt(GuestHttp2.MAX_CONCURRENT_STREAMS);
        StringBuilder what = new StringBuilder();
        for (int i = 0; i < n; i++) {
            int id = 1 + 2 * i;
            String authority = pick(r, AUTHORITIES);
            String hostHeader = r.nextInt(6) == 0 ? pick(r, AUTHORITIES) : null;
            String method = pick(r, METHODS);
            String path = pick(r, PATHS);
            Http2Headers h = new DefaultHttp2Headers(false).method(method).scheme("https").path(path)
                    .authority(authority);
            if (hostHeader != null) {
                h.add("host", hostHeader);
            }
            if (r.nextInt(5) == 0) {
                h.add("x-filler", "v".repeat(r.nextInt(40_000)));
            }
            int size = 0;
            for (var e : h) {
                size += e.getKey().length() + e.getValue().length() + 32;
            }
            int extra = r.nextInt(5) == 0 ? 1 + r.nextInt(7) : 0;
            boolean ends = r.nextInt(8) != 0;
            ByteBuf block = Unpooled.buffer();
            try {
                hpack.encodeHeaders(id, h, block);
            } catch (io.netty.handler.codec.http2.Http2Exception e) {
                throw new IllegalStateException(e);
            }
            byte[] bytes = new byte[block.readableBytes()];
            block.readBytes(bytes);
            block.release();
            boolean body = r.nextInt(3) == 0;
            int flags = (ends && !body ? 0x1 : 0);
            boolean headerBlockEnds = true;
            if (bytes.length > 16_384 || r.nextInt(6) == 0) { // split into HEADERS and CONTINUATION frames
                // a cut at the block's end leaves a HEADERS frame without END_HEADERS and no CONTINUATION: kept, as a
                // header block that never ends
                int cut = Math.min(bytes.length, 1 + r.nextInt(Math.min(bytes.length, 16_384)));
                headerBlockEnds = cut < bytes.length;
                out.writeBytes(frame(1, flags, id, java.util.Arrays.copyOf(bytes, cut)));
                for (int pos = cut; pos < bytes.length; ) {
                    int len = Math.min(16_384, bytes.length - pos);
                    out.writeBytes(frame(9, pos + len == bytes.length ? 0x4 : 0, id,
                            java.util.Arrays.copyOfRange(bytes, pos, pos + len)));
                    pos += len;
                }
            } else {
                out.writeBytes(frame(1, flags | 0x4, id, bytes));
            }
            Stream2 s = new Stream2(id, authority, hostHeader, method, path, ends, size,
                    extra == 0 ? 0 : extra <= 3 ? 1 : 2, body, headerBlockEnds);
            streams.add(s);
            what.append(s.method()).append(' ').append(s.authority()).append(s.path().length() > 20 ? "/…" : s.path())
                    .append(headerBlockEnds ? "" : " (header block never ends)").append("; ");
            if (body) {
                byte[] data = new byte[r.nextInt(3000)];
                r.nextBytes(data);
                out.writeBytes(frame(0, s.ends() ? 0x1 : 0, id, data));
            }
            if (s.extra() != 0) {
                out.writeBytes(extra(r, extra - 1, id));
            }
        }
        byte[] bytes = out.toByteArray();
        int mutations = List.of(0, 0, 0, 1, 1, 2, 3).get(r.nextInt(7));
        for (int m = 0; m < mutations; m++) {
            bytes = mutate(r, bytes);
        }
        return new Input(bytes, streams, mutations, what.toString());
    }

    /** A control or unknown frame: PING, PRIORITY, WINDOW_UPDATE, RST_STREAM, GOAWAY, SETTINGS, type 0x42. */
    private static byte[] extra(Random r, int kind, int id) {
        return switch (kind) {
            case 0 -> frame(2, 0, id, new byte[] {0, 0, 0, 0, 16});
            case 1 -> frame(8, 0, id, new byte[] {0, 0, (byte) r.nextInt(256), 1});
            case 2 -> frame(3, 0, id, new byte[] {0, 0, 0, 8});
            case 3 -> frame(6, 0, 0, new byte[8]);
            case 4 -> frame(7, 0, 0, new byte[] {0, 0, 0, 0, 0, 0, 0, 0});
            case 5 -> frame(4, 0, 0, new byte[] {0, 3, 0, 0, 0x10, 0, 0, 5, 0, 0, 0x40, 0}); // streams, frame size
            default -> frame(0x42, 0, id, new byte[r.nextInt(20)]);
        };
    }

    private static byte[] mutate(Random r, byte[] b) {
        if (b.length <= PREFACE.length + 1) {
            return b;
        }
        int at = PREFACE.length + r.nextInt(b.length - PREFACE.length);
        byte[] c;
        switch (r.nextInt(5)) {
            case 0 -> { // flip a bit
                c = b.clone();
                c[at] ^= (byte) (1 << r.nextInt(8));
            }
            case 1 -> c = java.util.Arrays.copyOf(b, at); // cut
            case 2 -> { // repeat a slice
                int len = Math.min(b.length - at, 1 + r.nextInt(64));
                c = new byte[b.length + len];
                System.arraycopy(b, 0, c, 0, at + len);
                System.arraycopy(b, at, c, at + len, b.length - at);
            }
            case 3 -> { // a frame length that lies: the three bytes at a frame's start, or anywhere
                c = b.clone();
                c[at] = (byte) 0xff;
                if (at + 1 < c.length) {
                    c[at + 1] = (byte) r.nextInt(256);
                }
            }
            default -> { // a random byte
                c = b.clone();
                c[at] = (byte) r.nextInt(256);
            }
        }
        return c;
    }

    /** One HTTP/2 frame (RFC 9113 4.1): its 24-bit length, type, flags and 31-bit stream, then the payload. */
    static byte[] frame(int type, int flags, int stream, byte[] payload) {
        ByteArrayOutputStream f = new ByteArrayOutputStream();
        f.write(payload.length >> 16);
        f.write(payload.length >> 8);
        f.write(payload.length);
        f.write(type);
        f.write(flags);
        f.write(stream >> 24);
        f.write(stream >> 16);
        f.write(stream >> 8);
        f.write(stream);
        f.writeBytes(payload);
        return f.toByteArray();
    }

    private static <T> T pick(Random r, List<T> from) {
        return from.get(r.nextInt(from.size()));
    }
}
