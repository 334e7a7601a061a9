package dev.kosa8.egress;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The upstream leg in HTTP/2 ({@link UpstreamHttp2}): real curl speaking HTTP/2 to a real broker, which carries its
 * streams to a real loopback Netty server ({@link H2Upstream}) that speaks HTTP/2 too (or, as {@code h1only.test},
 * offers HTTP/1.1 only) and records the protocol and connection of every request. Each stream is judged as before
 * (a secret put in, a misplaced placeholder in a spooled body refused before anything goes upstream, the audit
 * line), big bodies both ways arrive intact, a slow guest holds the server back through HTTP/2 flow control, and a
 * stream the server resets or a connection it sends away ends only the guest's streams it carried. Netty's paranoid
 * leak detector finds nothing.
 */
@Timeout(value = 300, unit = TimeUnit.SECONDS)
class BrokerUpstreamHttp2Test {
    static final String HOST = "h2.test";
    static final String H1 = "h1only.test";
    static final String PLACEHOLDER = "h2p-aaaaBBBBccccDDDDeeeeFFFF0123456789";
    static final String REAL = "h2r-REALrealREALreal0123456789";
    static final long MIB = 1 << 20;
    static final Queue<String> problems = new ConcurrentLinkedQueue<>();
    @TempDir
    static Path dir;
    static EventLoopGroup group;
    static EventLoopGroup upstreamGroup;
    static H2Upstream up;
    static H2Upstream h1;
    static InterceptingBroker intercepting;
    static Broker broker;
    static UnixBridge tls;
    static Path caPem;
    static NettyWarnings netty;

    @BeforeAll
    static void start() throws Exception {
        netty = NettyWarnings.into(problems);
        group = new MultiThreadIoEventLoopGroup(1, dev.kosa8.host.NettyTransport.CURRENT.ioHandler());
        upstreamGroup = new MultiThreadIoEventLoopGroup(1, dev.kosa8.host.NettyTransport.CURRENT.ioHandler());
        up = new H2Upstream(dir.resolve("up"), HOST, true, upstreamGroup);
        h1 = new H2Upstream(dir.resolve("up"), H1, false, upstreamGroup);
        EgressTestSettings test = new EgressTestSettings(Map.of(HOST + ":443", up.port(), H1 + ":443", h1.port()),
                Map.of(), Optional.of(up.caPem));
        intercepting = InterceptingBroker.start("sbx-h2up", dir,
                new EgressPolicy(false, List.of(AllowRule.parse(HOST), AllowRule.parse(H1))), test, problems::add,
                group);
        broker = intercepting.broker();
        caPem = intercepting.caPem();
        tls = intercepting.tls();
        broker.secrets(new SecretBindings(List.of(
                new SecretBinding("H2_TOKEN", HOST, 443, "Authorization", "Bearer {}", PLACEHOLDER, REAL),
                new SecretBinding("OTHER_TOKEN", "other.test", 443, "Authorization", "Bearer {}",
                        BrokerBigBodyTest.FOREIGN, "ot-REALrealREALreal0123456789"))));
    }

    @AfterAll
    static void stop() throws Exception {
        intercepting.close();
        up.close();
        h1.close();
        group.shutdownGracefully(0, 1, TimeUnit.SECONDS).sync();
        upstreamGroup.shutdownGracefully(0, 1, TimeUnit.SECONDS).sync();
        netty.close();
    }

    /** After every case: no spool held, no buffer leaked (collected, then found at later allocations). */
    @AfterEach
    void nothingLeft() throws Exception {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (broker.spool().used() != 0 && System.nanoTime() < deadline) {
            Thread.sleep(50);
        }
        assertThat(broker.spool().used()).as("bytes the spool still counts").isZero();
        for (int i = 0; i < 3; i++) {
            System.gc();
            Thread.sleep(50);
            assertThat(curl("--http2", https("/hello")).out()).isEqualTo("hello over h2\n");
        }
        assertThat(problems).as("leaks, Netty warnings, audit failures").isEmpty();
    }

    @Test
    void concurrentStreamsGoUpstreamAsHttp2StreamsOfOneConnectionEachJudgedAlone() throws Exception {
        int before = up.seen.size();
        List<String> args = new ArrayList<>(List.of("--http2", "-Z", "-H", "Authorization: Bearer " + PLACEHOLDER));
        for (int i = 0; i < 12; i++) {
            args.add(https("/hello?i=" + i));
        }
        BrokerTest.Run r = curl(args.toArray(String[]::new));
        assertThat(r.out()).as(r.toString()).isEqualTo("hello over h2\n".repeat(12));
        List<H2Upstream.Seen> got = up.seen.subList(before, up.seen.size());
        assertThat(got).hasSize(12);
        assertThat(got).allSatisfy(s -> {
            assertThat(s.protocol()).isEqualTo("h2");
            assertThat(s.headers()).contains("authorization: Bearer " + REAL).doesNotContain(PLACEHOLDER);
        });
        assertThat(new HashSet<>(got.stream().map(H2Upstream.Seen::peer).toList()))
                .as("upstream connections the 12 streams of one guest connection took").hasSize(1);
        assertThat(log()).contains("\"host\":\"" + HOST + "\"").contains("\"method\":\"GET\"")
                .contains("\"path\":\"/hello").contains("H2_TOKEN").doesNotContain(REAL);
    }

    @Test
    void anotherAuthorityOnTheGuestsConnectionIsStill421AndNeverGoesUpstream() throws Exception {
        int before = up.seen.size();
        BrokerTest.Run r = curl("--http2", "-w", "%{http_code}", "-H", "Host: " + H1, https("/hello"));
        assertThat(r.out()).as(r.toString()).endsWith("421");
        assertThat(up.seen.size()).isEqualTo(before);
        assertThat(h1.seen).noneMatch(s -> s.request().contains("/hello") && s.headers().contains(HOST));
    }

    @Test
    void a100MiBDownloadAndUploadArriveIntactOverHttp2() throws Exception {
        Path down = dir.resolve("down");
        BrokerTest.Run d = curl("--http2", "-w", "%{http_version}", "-o", down.toString(),
                https("/big?n=" + 100 * MIB));
        assertThat(d.out()).as(d.toString()).isEqualTo("2");
        assertThat(sha(down)).isEqualTo(H2Upstream.patternSha(100 * MIB));
        Files.delete(down);
        Path body = dir.resolve("body100");
        String bodySha = BrokerBigBodyTest.writeBody(body, 100 * MIB, -1);
        BrokerTest.Run u = curl("--http2", "--data-binary", "@" + body, https("/sink"));
        assertThat(u.out()).as(u.toString()).isEqualTo(bodySha + " " + 100 * MIB);
        Files.delete(body);
        assertThat(up.protocols().subList(up.protocols().size() - 2, up.protocols().size()))
                .containsExactly("h2", "h2");
    }

    @Test
    void aPlaceholderInASpooledBodyIsRefusedAndNothingGoesUpstream() throws Exception {
        Path b = dir.resolve("foreign");
        BrokerBigBodyTest.writeBody(b, 20 * MIB, 15 * MIB);
        int before = up.seen.size();
        BrokerTest.Run r = curl("--http2", "-w", "%{http_code}", "--data-binary", "@" + b, https("/sink"));
        assertThat(r.out()).as(r.toString()).endsWith("403").contains("OTHER_TOKEN");
        assertThat(up.seen.size()).as("requests the upstream got").isEqualTo(before);
        Files.delete(b);
    }

    @Test
    void aStreamTheServerResetsEndsThatGuestStreamAlone() throws Exception {
        Path other = dir.resolve("other");
        int before = up.peers.size();
        BrokerTest.Run r = curl("--http2", "-Z", "-o", "/dev/null", https("/reset?n=65536"),
                "-o", other.toString(), https("/big?n=" + 8 * MIB));
        assertThat(r.exit()).as(r.toString()).isNotZero();
        assertThat(r.err()).contains("HTTP/2 stream");
        assertThat(sha(other)).as(r.toString()).isEqualTo(H2Upstream.patternSha(8 * MIB));
        assertThat(up.peers.size() - before).as("upstream connections both streams took").isEqualTo(1);
        Files.delete(other);
    }

    @Test
    void aServerSendingItsConnectionAwayEndsItsStreamAndTheNextGoesOnANewOne() throws Exception {
        int before = up.peers.size();
        BrokerTest.Run r = curl("--http2", "-o", "/dev/null", https("/goaway?n=65536"), https("/hello"));
        assertThat(r.err()).as(r.toString()).contains("HTTP/2 stream");
        assertThat(r.out()).as(r.toString()).isEqualTo("hello over h2\n");
        assertThat(up.peers.size() - before).as("upstream connections").isEqualTo(2);
    }

    /**
     * A sandbox holds at most {@link Broker#MAX_HTTP2_UPSTREAMS} HTTP/2 upstream connections (each lets its server
     * be 16 MiB ahead of a guest that does not read): with every permit taken, an HTTP/2 guest's request goes
     * upstream in HTTP/1.1, and each permit comes back when its connection ends.
     */
    @Test
    void pastTheSandboxsBoundOfHttp2UpstreamsTheUpstreamLegSpeaksHttp11() throws Exception {
        var permits = broker.http2Upstreams();
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
        while (permits.availablePermits() != Broker.MAX_HTTP2_UPSTREAMS && System.nanoTime() < deadline) {
            Thread.sleep(50); // the connections of the cases before end with their guest connections
        }
        assertThat(permits.availablePermits()).as("every permit back").isEqualTo(Broker.MAX_HTTP2_UPSTREAMS);
        permits.acquire(Broker.MAX_HTTP2_UPSTREAMS);
        try {
            BrokerTest.Run r = curl("--http2", "-w", "%{http_version}", https("/hello"));
            assertThat(r.out()).as(r.toString()).isEqualTo("hello over http/1.1\n2");
        } finally {
            permits.release(Broker.MAX_HTTP2_UPSTREAMS);
        }
        assertThat(curl("--http2", https("/hello")).out()).isEqualTo("hello over h2\n");
    }

    @Test
    void aServerOfferingOnlyHttp1IsSpokenHttp1ToWhileTheGuestSpeaksHttp2() throws Exception {
        BrokerTest.Run r = curl("--http2", "-w", "%{http_version}", "--connect-to", H1 + ":443:127.0.0.1:" + tls.port(),
                "https://" + H1 + "/hello", "https://" + H1 + "/hello");
        assertThat(r.out()).as(r.toString()).isEqualTo("hello over http/1.1\n2hello over http/1.1\n2");
        assertThat(h1.protocols()).contains("http/1.1").doesNotContain("h2");
    }

    @Test
    void serverSentEventsArriveAsTheyAreSent() throws Exception {
        List<String> cmd = new ArrayList<>(List.of("curl", "-sS", "-N", "--http2", "--max-time", "60", "--noproxy", "",
                "--cacert", caPem.toString(), "--connect-to", HOST + ":443:127.0.0.1:" + tls.port(), https("/events")));
        Process p = new ProcessBuilder(cmd).start();
        try (BufferedReader out = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8))) {
            assertThat(out.readLine()).isEqualTo("data: one"); // before the server sends the second
            assertThat(out.readLine()).isEmpty();
            up.eventGate.countDown();
            assertThat(out.readLine()).isEqualTo("data: two");
        }
        assertThat(p.waitFor(30, TimeUnit.SECONDS)).isTrue();
        assertThat(p.exitValue()).isZero();
    }

    @Test
    void aSlowGuestHoldsTheServerBackNotTheHeap() throws Exception {
        Path down = dir.resolve("slow");
        long[] most = {0};
        Thread watch = Thread.ofVirtual().start(() -> {
            while (!Thread.currentThread().isInterrupted()) {
                most[0] = Math.max(most[0], BrokerBigBodyTest.nettyMemory());
                try {
                    Thread.sleep(5);
                } catch (InterruptedException e) {
                    return;
                }
            }
        });
        long before = BrokerBigBodyTest.nettyMemory();
        BrokerTest.Run r = curl("--http2", "--limit-rate", "6M", "-o", down.toString(), https("/big?n=" + 64 * MIB));
        watch.interrupt();
        watch.join();
        assertThat(r.exit()).as(r.toString()).isZero();
        assertThat(sha(down)).isEqualTo(H2Upstream.patternSha(64 * MIB));
        // 64 MiB went at the guest's pace: the server may be a stream window (1 MiB) ahead of what the broker gave
        // the guest, the guest's side and the test's own server buffer some, and Netty's pool counts whole chunks
        // (measured: 17 MiB above the start for 40 MiB); sent at once, it would hold most of the 64 MiB
        assertThat(most[0] - before).as("Netty's memory above where it was").isLessThan(28 * MIB);
        Files.delete(down);
    }

    static String sha(Path f) throws Exception {
        MessageDigest sha = MessageDigest.getInstance("SHA-256");
        try (var in = Files.newInputStream(f)) {
            byte[] buf = new byte[1 << 16];
            for (int n; (n = in.read(buf)) > 0; ) {
                sha.update(buf, 0, n);
            }
        }
        return HexFormat.of().formatHex(sha.digest());
    }

    static String log() throws Exception {
        return Files.readString(dir.resolve("net.log"));
    }

    static String https(String path) {
        return "https://" + HOST + path;
    }

    static BrokerTest.Run curl(String... args) throws Exception {
        return intercepting.curl(HOST, args);
    }
}
