package dev.kosa8.egress;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kosa8.secrets.SentinelDetector;
import io.netty.buffer.Unpooled;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.handler.codec.http.DefaultHttpContent;
import io.netty.handler.codec.http.DefaultHttpRequest;
import io.netty.handler.codec.http.DefaultLastHttpContent;
import io.netty.handler.codec.http.FullHttpRequest;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpVersion;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.lifecycle.AfterContainer;
import net.jqwik.api.lifecycle.BeforeContainer;
import net.jqwik.api.statistics.Statistics;

/**
 * The guest's request bodies as {@link BodySpool} gathers them, cut into pieces of the guest's choosing, framed by
 * a declared length or not, with a memory bound lowered so that most go to the spool: the request passed on holds
 * exactly the bytes sent, in memory or on disk; a spooled one reports a misplaced placeholder exactly when the whole
 * body searched at once holds one; and once released, nothing stays counted or open, and Netty's paranoid leak
 * detector reports nothing (a leak shows up in a later try, when the buffer is collected).
 */
class BodySpoolFuzzTest {
    static final String FOREIGN = "ot-aaaaBBBBccccDDDDeeeeFFFF0123456789";
    static final SecretBindings SECRETS = new SecretBindings(List.of(new SecretBinding("OTHER_TOKEN", "other.test",
            443, "Authorization", "Bearer {}", FOREIGN, "ot-REALrealREALreal0123456789")));
    static final SentinelDetector DETECTOR = SECRETS.misplacedDetector("body.test", 443, true).orElseThrow();
    private static FuzzBroker fuzz;
    private static Broker broker;
    private static NettyWarnings netty;
    private static final java.util.Queue<String> leaks = new java.util.concurrent.ConcurrentLinkedQueue<>();

    record Upload(byte[] body, List<Integer> cuts, boolean declared, int memoryBound) {
        @Override
        public String toString() {
            return body.length + " bytes, cut at " + cuts + (declared ? ", Content-Length" : ", chunked")
                    + ", memory bound " + memoryBound;
        }
    }

    @BeforeContainer
    static void start() throws Exception {
        netty = NettyWarnings.into(leaks);
        fuzz = FuzzBroker.start("sbx-spool-fuzz", EgressPolicy.DENY_ALL, m -> { });
        broker = fuzz.broker();
        broker.secrets(SECRETS);
        broker.spool().io(Runnable::run); // the spool's file I/O in line: an embedded channel is one thread's
    }

    @AfterContainer
    static void stop() throws Exception {
        fuzz.close();
        netty.close();
    }

    @Provide
    Arbitrary<Upload> uploads() {
        Arbitrary<String> pieces = Arbitraries.oneOf(
                Arbitraries.of(FOREIGN, FOREIGN.substring(0, 20), FOREIGN.substring(7), "%", "%6f%74-", "=", "\r\n"),
                Arbitraries.strings().withChars("abcdefABCDEF0123456789%-=").ofMaxLength(24),
                Arbitraries.strings().ofMaxLength(8),
                Arbitraries.integers().between(0, 40_000).map("x"::repeat));
        Arbitrary<byte[]> bodies = pieces.list().ofMaxSize(16).map(l -> String.join("", l)
                .getBytes(StandardCharsets.ISO_8859_1));
        return bodies.flatMap(b -> Combinators.combine(
                Arbitraries.integers().between(0, b.length).list().ofMaxSize(10).map(c -> c.stream().sorted().toList()),
                Arbitraries.of(true, false),
                Arbitraries.of(0, 1, 16, 1024, 65_536)).as((cuts, declared, bound) -> new Upload(b, cuts, declared,
                bound)));
    }

    @Property(tries = 400)
    void whatIsPassedOnIsWhatWasSentAndNothingStays(@ForAll("uploads") Upload up) throws Exception {
        EmbeddedChannel ch = new EmbeddedChannel(new BodySpool(broker, Listener.TLS, "body.test", 443,
                up.memoryBound()));
        try {
            DefaultHttpRequest head = new DefaultHttpRequest(HttpVersion.HTTP_1_1, HttpMethod.POST, "/up");
            if (up.declared()) {
                head.headers().setInt(HttpHeaderNames.CONTENT_LENGTH, up.body().length);
            } else {
                head.headers().set(HttpHeaderNames.TRANSFER_ENCODING, "chunked");
            }
            ch.writeInbound(head);
            int from = 0;
            for (int cut : up.cuts()) {
                ch.writeInbound(new DefaultHttpContent(Unpooled.copiedBuffer(up.body(), from, cut - from)));
                from = cut;
            }
            ch.writeInbound(new DefaultLastHttpContent(Unpooled.copiedBuffer(up.body(), from,
                    up.body().length - from)));
            FullHttpRequest got = ch.readInbound();
            assertThat((Object) ch.readInbound()).isNull();
            assertThat(got).as(up.toString()).isNotNull();
            try {
                boolean spooled = got instanceof SpooledRequest;
                assertThat(spooled).as(up.toString()).isEqualTo(up.body().length > up.memoryBound());
                byte[] held;
                if (got instanceof SpooledRequest s) {
                    ByteBuffer all = ByteBuffer.allocate((int) s.spool().size());
                    while (all.hasRemaining() && s.spool().channel().read(all, all.position()) > 0) {
                        // read on
                    }
                    held = all.array();
                    Optional<String> whole = DETECTOR.find(up.body(), up.body().length);
                    assertThat(s.misplaced(broker.secrets())).as(up.toString()).isEqualTo(whole);
                    if (whole.isPresent()) {
                        held = null; // the rest was not kept once the placeholder showed up
                    }
                } else {
                    held = io.netty.buffer.ByteBufUtil.getBytes(got.content());
                }
                if (held != null) {
                    assertThat(held).as(up.toString()).isEqualTo(up.body());
                    assertThat(got.headers().get(HttpHeaderNames.CONTENT_LENGTH)).isEqualTo(
                            Integer.toString(up.body().length));
                }
                Statistics.label("spooled").collect(spooled);
                Statistics.label("spooled").coverage(c -> c.check(true).percentage(p -> p > 40));
            } finally {
                got.release();
            }
            assertThat(broker.spool().used()).as("bytes counted after the release").isZero();
            assertThat(BrokerBigBodyTest.openSpoolFiles()).as("files open after the release").isEmpty();
            assertThat(leaks).as("Netty's warnings (leaks)").isEmpty();
        } finally {
            ch.finishAndReleaseAll();
        }
    }
}
