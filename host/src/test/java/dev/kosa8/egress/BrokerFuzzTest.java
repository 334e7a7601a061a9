package dev.kosa8.egress;

import static java.nio.charset.StandardCharsets.ISO_8859_1;
import static org.assertj.core.api.Assertions.assertThat;

import dev.kosa8.net.HostName;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.handler.codec.dns.DefaultDnsRecordEncoder;
import io.netty.handler.codec.dns.DnsOpCode;
import io.netty.handler.codec.dns.DnsQuery;
import io.netty.handler.codec.dns.DnsRecordType;
import io.netty.handler.codec.dns.DnsSection;
import io.netty.handler.codec.http.FullHttpRequest;
import io.netty.util.ReferenceCountUtil;
import io.netty.util.ResourceLeakDetector;
import io.netty.util.internal.PlatformDependent;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.lang.management.BufferPoolMXBean;
import java.lang.management.ManagementFactory;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Queue;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.GenerationMode;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.ShrinkingMode;
import net.jqwik.api.constraints.Size;
import net.jqwik.api.lifecycle.AfterContainer;
import net.jqwik.api.lifecycle.AfterProperty;
import net.jqwik.api.lifecycle.BeforeContainer;
import net.jqwik.api.statistics.Statistics;
import net.jqwik.api.statistics.StatisticsReport;

/**
 * A hostile guest on the broker's listeners, through its real unix sockets: random bytes; DNS
 * queries with bits flipped, cut, lying length prefixes, labels over 63 octets, compression
 * pointers that loop or point past the end, odd counts and names far over 255 octets; HTTP
 * requests (CONNECT, absolute-form, origin-form, with bodies, chunked) with line ends removed, NUL
 * bytes, duplicated or conflicting framing headers, bad chunk sizes, header lines without a
 * colon, obs-fold and lines past the limits; TLS ClientHellos with bogus record, handshake and
 * SNI lengths, on the TLS port and inside a CONNECT tunnel; the same HTTP requests inside TLS that a
 * third broker ends itself (a method rule for the name), with its sandbox CA. Against a broker that allows one name
 * (dialed at a loopback port where nothing listens, every other name "resolving" to loopback,
 * which the broker refuses: nothing leaves the test) and one that denies everything.
 *
 * <p>Netty's own decoders, configured as the broker configures them and fed the same bytes, say
 * what must come back: every DNS query they decode is answered, in order, under its id, with the
 * code and address the policy gives (FORMERR, echoing nothing, for a name Netty reads but will
 * not write back), in a frame no longer than one question and one A record allow; every HTTP request or aggregator answer they produce means a well-formed HTTP answer
 * comes back; every ClientHello that reaches a lookup means a TLS alert. Either way the broker
 * closes the connection within seconds of the guest ending its side, and nothing reaches Netty's
 * log as an unhandled exception or a leak. Floods of tens of MiB past every documented limit
 * (request line, headers, body, ClientHello, DNS answers a guest never reads) are refused without
 * the broker holding more than a bound. After every property each listener still answers.
 */
class BrokerFuzzTest {
    private static final Duration ANSWER = Duration.ofSeconds(3);
    private static final String ALLOWED = "allowed.test";
    private static final EgressPolicy POLICY = new EgressPolicy(false,
            List.of(AllowRule.parse(ALLOWED), AllowRule.parse("*.wild.test")));
    private static final byte[] ALERT = {0x15, 0x03, 0x03, 0x00, 0x02, 0x02, 0x31};
    private static final byte[] CRLFCRLF = {'\r', '\n', '\r', '\n'};
    private static final byte[] BROKER_A = {0, 4, 10, 0, 2, 100};
    /** A header, one question and one A record, each name at its 255-octet limit. */
    private static final int MAX_DNS_ANSWER = 12 + (255 + 4) + (255 + 10 + 4);
    private static final long FOOTPRINT_BOUND = 64L << 20;
    /** The broker's answer to {@code frame(query(7, ALLOWED, 1))}: the query and one A record, its name written out. */
    private static final int ANSWER_TO_UNIT = 2 + 12 + (14 + 4) + (14 + 10 + 4);
    private static final Set<Integer> HTTP_STATUSES = Set.of(100, 200, 400, 403, 405, 413, 414, 417, 431, 502);
    private static final Pattern HEAD = Pattern.compile(
            "HTTP/1\\.1 (\\d{3}) [ -~]*(?:\r\n[!#$%&'*+.^_`|~0-9A-Za-z-]+: [ -~]*)*");
    private static final Pattern CONTENT_LENGTH = Pattern.compile("(?i)\r\ncontent-length: (\\d+)");
    private static final List<String> HOSTS = List.of(ALLOWED, ALLOWED, "denied.test", "x.wild.test",
            "ALLOWED.TEST.", "wild.test", "127.0.0.1", "[::1]", "10.0.2.100", "", "a..b", "-x.test",
            "allowed.test.evil", "x".repeat(64) + ".test", "a b", "user@allowed.test", "\u00e9.test",
            "allowed.test:8080", "allowed.test:0", "allowed.test:99999", "allowed.test:", ":443",
            "a".repeat(300));
    /** How many mutations an input gets: often none, so that valid inputs reach the broker's judgment too. */
    private static final List<Integer> MUTATIONS = List.of(0, 0, 0, 1, 1, 1, 1, 2, 2, 3);
    private static final List<String> DNS_NAMES = List.of(ALLOWED, ALLOWED, "API.TEST.", "x.wild.test",
            "ALLOWED.TEST.", "denied.test", "wild.test", "a.b.allowed.test", "", "-.test", "x_y.wild.test",
            "10.0.2.100", "a".repeat(63) + ".test", "b".repeat(63) + "." + "c".repeat(63) + "." + "d".repeat(63)
                    + "." + "e".repeat(61));

    private static Path dir;
    private static EventLoopGroup group;
    private static Socket nothingListens;
    private static Broker allowing;
    private static Broker denying;
    /** Ends TLS for {@link #ALLOWED} itself (a method rule), so HTTP inside its TLS is fuzzed too. */
    private static Broker intercepting;
    private static UnixBridge interceptBridge;
    private static javax.net.ssl.SSLContext trustsInterceptCa;
    private static final Queue<String> problems = new ConcurrentLinkedQueue<>();
    private static Thread.UncaughtExceptionHandler previousHandler;
    private static NettyWarnings netty;

    @BeforeContainer
    static void startBrokers() throws IOException {
        dir = Files.createTempDirectory("broker-fuzz");
        // the models' embedded channels report the failures they are fed to
        netty = NettyWarnings.into(problems, r -> r.getLoggerName().startsWith("io.netty.channel.embedded."));
        previousHandler = Thread.getDefaultUncaughtExceptionHandler();
        Thread.setDefaultUncaughtExceptionHandler((t, e) -> problems.add("uncaught in " + t.getName() + ": " + e));
        group = new MultiThreadIoEventLoopGroup(1, dev.kosa8.host.NettyTransport.CURRENT.ioHandler());
        // bound and never listening: a dial to it is refused at once
        nothingListens = new Socket();
        nothingListens.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0));
        int dead = nothingListens.getLocalPort();
        EgressTestSettings test = new EgressTestSettings(Map.of(ALLOWED + ":443", dead, ALLOWED + ":80", dead),
                Map.of(), Optional.empty());
        // every other allowed name "resolves" to loopback, which the address check refuses
        Upstreams upstreams = new Upstreams(h -> new InetAddress[] {InetAddress.getLoopbackAddress()}, test);
        allowing = Broker.start("sbx-fuzz", dir.resolve("allowing"), POLICY,
                new AuditLog(dir.resolve("allowing.log"), problems::add), upstreams, null, null, group);
        // a flood of 40 MiB passes memory's bound (8 MiB) and then this one, on disk
        allowing.spool().limits(new SpoolLimits(16 << 20, 32 << 20));
        denying = Broker.start("sbx-deny", dir.resolve("denying"), EgressPolicy.DENY_ALL,
                new AuditLog(dir.resolve("denying.log"), problems::add), upstreams, null, null, group);
        var ca = dev.kosa8.egress.tls.SandboxCa.loadOrCreate(dir.resolve("ca"), "sbx-fuzz-i");
        intercepting = Broker.start("sbx-fuzz-i", dir.resolve("intercepting"),
                new EgressPolicy(false, List.of(AllowRule.parse("GET " + ALLOWED + "/"))),
                new AuditLog(dir.resolve("intercepting.log"), problems::add), upstreams, ca,
                dev.kosa8.egress.tls.UpstreamTls.clientContext(Optional.empty()), group);
        interceptBridge = new UnixBridge(intercepting.sockets().get(Listener.TLS));
        try {
            java.security.KeyStore trust = java.security.KeyStore.getInstance("PKCS12");
            trust.load(null, null);
            trust.setCertificateEntry("sandbox-ca", ca.certificate());
            var tmf = javax.net.ssl.TrustManagerFactory.getInstance(javax.net.ssl.TrustManagerFactory.getDefaultAlgorithm());
            tmf.init(trust);
            trustsInterceptCa = javax.net.ssl.SSLContext.getInstance("TLS");
            trustsInterceptCa.init(null, tmf.getTrustManagers(), null);
        } catch (java.security.GeneralSecurityException e) {
            throw new IOException(e);
        }
    }

    @AfterContainer
    static void stopBrokers() throws Exception {
        interceptBridge.close();
        intercepting.close();
        allowing.close();
        denying.close();
        nothingListens.close();
        netty.close();
        Thread.setDefaultUncaughtExceptionHandler(previousHandler);
        group.shutdownGracefully(0, 1, TimeUnit.SECONDS).sync();
        try (Stream<Path> all = Files.walk(dir)) {
            for (Path p : all.sorted(Comparator.reverseOrder()).toList()) {
                Files.deleteIfExists(p);
            }
        }
    }

    /** No fuzz case may have killed a listener or left an unhandled exception behind. */
    @AfterProperty
    void everyListenerStillAnswers() throws Exception {
        assertThat(dnsExchange(allowing, frame(query(0x4242, ALLOWED, 1)))).endsWith(BROKER_A);
        assertThat(dnsRcode(dnsFrames(dnsExchange(denying, frame(query(0x4243, ALLOWED, 1)))).getFirst()))
                .isEqualTo(3);
        for (Broker b : List.of(allowing, denying)) {
            assertThat(httpExchange(b, Listener.PROXY, ascii("CONNECT denied.test:443 HTTP/1.1\r\n\r\n"), true))
                    .startsWith(ascii("HTTP/1.1 403"));
            assertThat(httpExchange(b, Listener.HTTP, ascii("GET / HTTP/1.1\r\nHost: denied.test\r\n\r\n"), true))
                    .startsWith(ascii("HTTP/1.1 403"));
            assertThat(tlsExchange(b, null, hello(new Random(1), "denied.test"), true)).isEqualTo(ALERT);
        }
        // the upstream's port has nothing listening: an allowed request inside intercepted TLS gets a 502
        assertThat(interceptedExchange(ascii("GET / HTTP/1.1\r\nHost: " + ALLOWED + "\r\n\r\n"), true))
                .startsWith(ascii("HTTP/1.1 502"));
        noProblems();
    }

    /** Nothing the broker did reached Netty's log as an unhandled exception or a leak, nor failed the audit log. */
    private static void noProblems() {
        List<String> seen = new ArrayList<>();
        for (String p; (p = problems.poll()) != null; ) {
            seen.add(p);
        }
        assertThat(seen).as("unhandled exceptions, leaks or audit failures").isEmpty();
    }

    // --- the properties

    @StatisticsReport(StatisticsReport.StatisticsReportMode.OFF) // kept for the coverage checks
    @Property(tries = 400, shrinking = ShrinkingMode.OFF)
    void randomBytesAreAnsweredOrClosedOnEveryListener(@ForAll("listeners") Listener l,
            @ForAll @Size(max = 3000) byte[] junk, @ForAll boolean denyAll) throws Exception {
        Broker b = denyAll ? denying : allowing;
        switch (l) {
            case DNS -> checkDns(b, junk);
            case HTTP, PROXY -> checkHttp(b, l, junk);
            case TLS -> checkTls(b, null, junk);
        }
    }

    @StatisticsReport(StatisticsReport.StatisticsReportMode.OFF) // kept for the coverage checks
    @Property(tries = 700, shrinking = ShrinkingMode.OFF)
    void mutatedDnsQueriesAreAnsweredUnderTheirIdOrClosed(@ForAll("dnsStreams") Input in, @ForAll boolean denyAll)
            throws Exception {
        checkDns(denyAll ? denying : allowing, in.bytes());
        // the fuzzer must keep reaching the answerer, not only the decoder's refusals
        Statistics.label("dns").coverage(c -> {
            c.checkPattern("rcodes.*").percentage(p -> p > 20);
            c.checkPattern("rcodes .*\\b0\\b.*").percentage(p -> p > 2);
            c.checkPattern("rcodes .*\\b3\\b.*").percentage(p -> p > 5);
        });
    }

    @StatisticsReport(StatisticsReport.StatisticsReportMode.OFF) // kept for the coverage checks
    @Property(tries = 700, shrinking = ShrinkingMode.OFF)
    void mutatedHttpRequestsAreAnsweredOrClosed(@ForAll("httpRequests") Input in, @ForAll boolean proxy,
            @ForAll boolean denyAll) throws Exception {
        checkHttp(denyAll ? denying : allowing, proxy ? Listener.PROXY : Listener.HTTP, in.bytes());
        // and the policy and the limits, not only the parser's refusals
        Statistics.label("http").coverage(c -> {
            c.check("403").percentage(p -> p > 5);
            c.checkPattern("41[34]|431").percentage(p -> p > 2);
            c.check("closed").percentage(p -> p > 2);
        });
    }

    /**
     * The same requests inside TLS the broker ends itself, for a host whose rules look inside: decrypted, parsed and
     * judged by the intercepting pipeline (Host against the TLS name, the method rule, the upstream dial).
     */
    @StatisticsReport(StatisticsReport.StatisticsReportMode.OFF) // kept for the coverage checks
    @Property(tries = 150, shrinking = ShrinkingMode.OFF)
    void mutatedHttpRequestsInsideInterceptedTlsAreAnsweredOrClosed(@ForAll("interceptedRequests") Input in)
            throws Exception {
        boolean due = httpAnswerDue(in.bytes());
        byte[] out = interceptedExchange(in.bytes(), due);
        List<Integer> statuses = new ArrayList<>();
        parseHttp(out, statuses);
        if (due) {
            assertThat(statuses).as("a decoded request is answered").isNotEmpty();
        }
        // 421: a Host that is not the TLS name; 502: allowed, and the upstream's port refuses the dial
        assertThat(statuses).allMatch(st -> st != 200 && (HTTP_STATUSES.contains(st) || st == 421));
        Statistics.label("intercepted").collect(statuses.isEmpty() ? "closed" : "" + statuses.getFirst());
        Statistics.label("intercepted").coverage(c -> {
            c.check("502").percentage(p -> p > 2);
            c.check("421").percentage(p -> p > 2);
        });
        noProblems();
    }

    @StatisticsReport(StatisticsReport.StatisticsReportMode.OFF) // kept for the coverage checks
    @Property(tries = 400, shrinking = ShrinkingMode.OFF)
    void mutatedClientHellosGetAnAlertOrAClose(@ForAll("clientHellos") Input in, @ForAll boolean viaConnect,
            @ForAll boolean denyAll) throws Exception {
        // a CONNECT to the allowed name opens a tunnel only on the allowing broker
        checkTls(denyAll ? denying : allowing, viaConnect && !denyAll ? ALLOWED : null, in.bytes());
        Statistics.label("tls").coverage(c -> c.check("alert").percentage(p -> p > 30));
    }

    @Property(tries = 20, generation = GenerationMode.EXHAUSTIVE)
    void floodsPastEveryLimitAreRefusedAndHoldBoundedMemory(@ForAll Flood flood) throws Exception {
        ResourceLeakDetector.setLevel(ResourceLeakDetector.Level.SIMPLE); // tracking every buffer of 40 MiB is slow
        try {
            flood(flood);
        } finally {
            ResourceLeakDetector.setLevel(ResourceLeakDetector.Level.PARANOID);
        }
    }

    private static void flood(Flood flood) throws Exception {
        long before = footprint();
        try (Guest g = new Guest(allowing, flood.listener, flood != Flood.DNS_ANSWERS_NEVER_READ)) {
            AtomicLong limit = new AtomicLong(Long.MAX_VALUE);
            Supplier<ByteBuffer> source = flood.source();
            Thread writer = g.write(() -> g.sent.get() < limit.get() ? source.get() : null, false);
            if (flood == Flood.DNS_ANSWERS_NEVER_READ) {
                // the broker must stop reading once its answers back up, not buffer them all: the writer stalls
                long last = -1;
                long stillSince = System.nanoTime();
                while (writer.isAlive() && System.nanoTime() - stillSince < TimeUnit.MILLISECONDS.toNanos(1500)) {
                    writer.join(100);
                    if (g.sent.get() != last) {
                        last = g.sent.get();
                        stillSince = System.nanoTime();
                    }
                }
                assertThat(footprint() - before).as("held with %d bytes of queries unanswered", g.sent.get())
                        .isLessThan(FOOTPRINT_BOUND);
                // then, once the guest reads, reads on and answers every query: a quarter MiB more of them
                limit.set(g.sent.get() + (256 << 10));
                g.startReading();
            } else {
                writer.join(Duration.ofSeconds(20));
                assertThat(writer.isAlive()).as("the broker takes or refuses the flood; %d bytes sent", g.sent.get())
                        .isFalse();
                assertThat(footprint() - before).as("held after %d bytes sent", g.sent.get())
                        .isLessThan(FOOTPRINT_BOUND);
            }
            writer.join(Duration.ofSeconds(20));
            assertThat(writer.isAlive()).isFalse();
            if (flood == Flood.DNS_ANSWERS_NEVER_READ) {
                // every query sent is answered once the guest reads (before it ends its side: on the end of
                // input the broker closes, and answers still queued then would be lost)
                long answers = g.sent.get() / flood.unitBytes().length * ANSWER_TO_UNIT;
                assertThat(g.await(() -> g.received() >= answers, Duration.ofSeconds(10))).as("all answered").isTrue();
                assertThat(g.received()).isEqualTo(answers);
            }
            g.shutdownOutput();
            assertThat(g.awaitEnd(Duration.ofSeconds(10))).as("closed after the flood").isTrue();
            flood.check(g);
        }
        noProblems();
    }

    // --- what must come back

    private static void checkDns(Broker b, byte[] input) throws Exception {
        List<DnsQuery> queries = decodedQueries(input);
        try {
            byte[] out = dnsExchange(b, input);
            List<byte[]> answers = dnsFrames(out);
            assertThat(answers).as("one answer per decoded query, in order").hasSize(queries.size());
            Statistics.label("dns").collect(answers.isEmpty() ? "closed"
                    : "rcodes " + answers.stream().map(a -> "" + (a[3] & 0x0f)).toList());
            for (int i = 0; i < answers.size(); i++) {
                checkDnsAnswer(b, queries.get(i), answers.get(i));
            }
            noProblems();
        } finally {
            queries.forEach(ReferenceCountUtil::release);
        }
    }

    private static void checkDnsAnswer(Broker b, DnsQuery q, byte[] a) {
        assertThat(a.length).as("answer length").isBetween(12, MAX_DNS_ANSWER);
        assertThat((a[0] & 0xff) << 8 | a[1] & 0xff).as("id").isEqualTo(q.id());
        assertThat(a[2] & 0x80).as("QR").isNotZero();
        int expected;
        boolean address = false;
        if (q.opCode() != DnsOpCode.QUERY) {
            expected = 4;
        } else if (q.count(DnsSection.QUESTION) != 1) {
            expected = 1;
        } else if (!DnsAnswerer.NAMES.writable(q.recordAt(DnsSection.QUESTION).name())) {
            expected = 1; // a name Netty reads but will not write back: FORMERR, nothing echoed
        } else {
            var question = q.recordAt(DnsSection.QUESTION);
            String name = HostName.normalize(question.name());
            expected = name == null || !b.policy().answers(name) ? 3 : 0;
            address = expected == 0 && question.type() == DnsRecordType.A;
        }
        assertThat(dnsRcode(a)).as("rcode for %s", q).isEqualTo(expected);
        int ancount = (a[6] & 0xff) << 8 | a[7] & 0xff;
        assertThat(ancount).as("answers for %s", q).isEqualTo(address ? 1 : 0);
        if (address) {
            assertThat(Arrays.copyOfRange(a, a.length - BROKER_A.length, a.length)).isEqualTo(BROKER_A);
        }
    }

    private static void checkHttp(Broker b, Listener l, byte[] input) throws Exception {
        boolean due = httpAnswerDue(input);
        byte[] out = httpExchange(b, l, input, due);
        List<Integer> statuses = new ArrayList<>();
        byte[] tunnel = parseHttp(out, statuses);
        if (due) {
            assertThat(statuses).as("a decoded request is answered").isNotEmpty();
        }
        Statistics.label("http").collect(statuses.isEmpty() ? "closed" : "" + statuses.getFirst());
        assertThat(statuses).allMatch(HTTP_STATUSES::contains);
        if (statuses.contains(200)) {
            assertThat(l).isEqualTo(Listener.PROXY);
            assertThat(b).isSameAs(allowing);
            assertThat(tunnel).satisfiesAnyOf(t -> assertThat(t).isEmpty(), t -> assertThat(t).isEqualTo(ALERT));
        }
        noProblems();
    }

    private static void checkTls(Broker b, String connectTarget, byte[] hello) throws Exception {
        boolean due = alertDue(hello, connectTarget);
        byte[] out = tlsExchange(b, connectTarget, hello, due);
        Statistics.label("tls").collect(due ? "alert" : out.length == 0 ? "closed" : "alert after all");
        if (due) {
            assertThat(out).as("a ClientHello that was read gets an alert").isEqualTo(ALERT);
        } else {
            assertThat(out).satisfiesAnyOf(o -> assertThat(o).isEmpty(), o -> assertThat(o).isEqualTo(ALERT));
        }
        noProblems();
    }

    // --- models: Netty's decoders as the broker configures them, fed the same bytes

    /** The queries the broker's DNS decoder reads from these bytes before it fails or runs out. */
    private static List<DnsQuery> decodedQueries(byte[] input) {
        EmbeddedChannel model = new EmbeddedChannel(Broker.dnsDecoder());
        try {
            model.writeInbound(Unpooled.wrappedBuffer(input));
        } catch (Exception refused) {
            // where the broker closes the connection
        }
        List<DnsQuery> queries = new ArrayList<>();
        for (Object q; (q = model.readInbound()) != null; ) {
            queries.add((DnsQuery) q);
        }
        end(model);
        return queries;
    }

    /** True when the broker's HTTP decoder and aggregator produce a request or an answer of their own. */
    private static boolean httpAnswerDue(byte[] input) {
        EmbeddedChannel model = new EmbeddedChannel(new StrictRequestDecoder(),
                new BodySpool(allowing, Listener.HTTP, null, -1));
        try {
            model.writeInbound(Unpooled.wrappedBuffer(input));
        } catch (Exception refused) {
            // the broker closes
        }
        boolean due = model.inboundMessages().stream().anyMatch(FullHttpRequest.class::isInstance)
                || !model.outboundMessages().isEmpty();
        end(model);
        return due;
    }

    /** True when the router reads a ClientHello far enough to look its name up (which fails: an alert). */
    private static boolean alertDue(byte[] hello, String connectTarget) {
        EmbeddedChannel model = new EmbeddedChannel(new TlsRouter(denying,
                connectTarget == null ? Listener.TLS : Listener.PROXY, connectTarget, 443));
        try {
            model.writeInbound(Unpooled.wrappedBuffer(hello));
        } catch (Exception refused) {
            // closed without an alert
        }
        boolean due = model.outboundMessages().stream()
                .anyMatch(m -> m instanceof ByteBuf buf && Arrays.equals(ByteBufUtil.getBytes(buf), ALERT));
        end(model);
        return due;
    }

    /** Ends a model as the guest's end of input does (which may fail as well) and drops what it holds. */
    private static void end(EmbeddedChannel model) {
        try {
            model.finishAndReleaseAll();
        } catch (Exception refused) {
            // released all the same
        }
    }

    // --- talking to the broker

    /** Sends, ends the guest's side, and returns everything until the broker closes. */
    private static byte[] dnsExchange(Broker b, byte[] input) throws Exception {
        try (Guest g = new Guest(b, Listener.DNS, true)) {
            g.write(input, true);
            assertThat(g.awaitEnd(ANSWER)).as("closed once the guest's side ended").isTrue();
            return g.bytes();
        }
    }

    /**
     * Sends; when an answer is due, waits for its head before ending the guest's side (an answer
     * decided off the event loop would be lost to the close that the end of input causes).
     */
    private static byte[] httpExchange(Broker b, Listener l, byte[] input, boolean answerDue) throws Exception {
        try (Guest g = new Guest(b, l, true)) {
            Thread w = g.write(input, !answerDue);
            if (answerDue) {
                assertThat(g.await(() -> indexOf(g.got(), CRLFCRLF, 0) >= 0, ANSWER))
                        .as("an answer to a decoded request").isTrue();
                w.join(ANSWER);
                g.shutdownOutput();
            }
            assertThat(g.awaitEnd(ANSWER)).as("closed once the guest's side ended").isTrue();
            return g.bytes();
        }
    }

    /**
     * TLS to the intercepting broker for {@link #ALLOWED}, verified against its sandbox CA; then the input as
     * application data; the decrypted answer. When an answer is due its head is waited for before the guest's side
     * ends (close_notify); either way the broker must close within {@link #ANSWER} after that.
     */
    private static byte[] interceptedExchange(byte[] input, boolean answerDue) throws Exception {
        try (javax.net.ssl.SSLSocket s = (javax.net.ssl.SSLSocket) trustsInterceptCa.getSocketFactory()
                .createSocket(InetAddress.getLoopbackAddress(), interceptBridge.port())) {
            javax.net.ssl.SSLParameters params = s.getSSLParameters();
            params.setServerNames(List.of(new javax.net.ssl.SNIHostName(ALLOWED)));
            params.setEndpointIdentificationAlgorithm("HTTPS");
            s.setSSLParameters(params);
            s.setSoTimeout((int) ANSWER.toMillis());
            s.startHandshake();
            Thread writer = Thread.ofVirtual().start(() -> {
                try {
                    s.getOutputStream().write(input);
                    s.getOutputStream().flush();
                    if (!answerDue) {
                        s.shutdownOutput();
                    }
                } catch (IOException closed) {
                    // the broker answered and closed before taking all of it
                }
            });
            ByteArrayOutputStream got = new ByteArrayOutputStream();
            java.io.InputStream from = s.getInputStream();
            byte[] buf = new byte[16 * 1024];
            boolean shut = !answerDue;
            boolean ended = false;
            while (!ended) {
                int n;
                try {
                    n = from.read(buf);
                } catch (java.net.SocketTimeoutException late) {
                    break;
                } catch (IOException reset) {
                    n = -1;
                }
                if (n < 0) {
                    ended = true;
                } else {
                    got.write(buf, 0, n);
                    if (!shut && indexOf(got.toByteArray(), CRLFCRLF, 0) >= 0) {
                        writer.join(ANSWER);
                        try {
                            s.shutdownOutput(); // close_notify: the guest's side ends
                        } catch (IOException closed) {
                            // the broker closed first
                        }
                        shut = true;
                    }
                }
            }
            byte[] out = got.toByteArray();
            if (answerDue) {
                assertThat(indexOf(out, CRLFCRLF, 0)).as("an answer to a decoded request: %s", shown(out))
                        .isNotNegative();
            }
            assertThat(ended).as("closed once the guest's side ended: %s", shown(out)).isTrue();
            writer.join(ANSWER);
            return out;
        }
    }

    /** A ClientHello on the TLS port, or in a tunnel a CONNECT to {@code connectTarget} opened; the bytes after it. */
    private static byte[] tlsExchange(Broker b, String connectTarget, byte[] hello, boolean alertDue)
            throws Exception {
        try (Guest g = new Guest(b, connectTarget == null ? Listener.TLS : Listener.PROXY, true)) {
            int skip = 0;
            if (connectTarget != null) {
                g.write(ascii("CONNECT " + connectTarget + ":443 HTTP/1.1\r\nHost: " + connectTarget
                        + ":443\r\n\r\n"), false).join();
                assertThat(g.await(() -> indexOf(g.got(), CRLFCRLF, 0) >= 0, ANSWER)).isTrue();
                byte[] head = g.bytes();
                assertThat(new String(head, ISO_8859_1)).startsWith("HTTP/1.1 200 ");
                skip = indexOf(head, CRLFCRLF, 0) + 4;
            }
            Thread w = g.write(hello, !alertDue);
            if (alertDue) {
                assertThat(g.awaitEnd(ANSWER)).as("an alert and a close").isTrue();
                w.join(ANSWER);
            }
            assertThat(g.awaitEnd(ANSWER)).as("closed once the guest's side ended").isTrue();
            byte[] all = g.bytes();
            return Arrays.copyOfRange(all, skip, all.length);
        }
    }

    /** One guest connection: bytes written beside a reader that keeps (up to a MiB of) what comes back. */
    private static final class Guest implements AutoCloseable {
        private static final int KEEP = 1 << 20;
        private final SocketChannel ch;
        private final List<Thread> threads = new ArrayList<>();
        private final ByteArrayOutputStream got = new ByteArrayOutputStream();
        private long received;
        private boolean ended;
        final AtomicLong sent = new AtomicLong();

        Guest(Broker b, Listener l, boolean read) throws IOException {
            ch = SocketChannel.open(StandardProtocolFamily.UNIX);
            ch.connect(UnixDomainSocketAddress.of(b.sockets().get(l)));
            if (read) {
                startReading();
            }
        }

        void startReading() {
            threads.add(Thread.ofVirtual().start(() -> {
                ByteBuffer buf = ByteBuffer.allocate(64 * 1024);
                try {
                    for (int n; (n = ch.read(buf.clear())) >= 0; ) {
                        synchronized (this) {
                            received += n;
                            got.write(buf.array(), 0, Math.min(n, Math.max(0, KEEP - got.size())));
                            notifyAll();
                        }
                    }
                } catch (IOException e) {
                    // reset by the broker or closed by the test: the end either way
                }
                synchronized (this) {
                    ended = true;
                    notifyAll();
                }
            }));
        }

        Thread write(byte[] bytes, boolean thenEnd) {
            ByteBuffer[] once = {ByteBuffer.wrap(bytes)};
            return write(() -> {
                ByteBuffer next = once[0];
                once[0] = null;
                return next;
            }, thenEnd);
        }

        /** Writes in the background; the broker may close before taking it all, which is its right. */
        Thread write(Supplier<ByteBuffer> chunks, boolean thenEnd) {
            Thread t = Thread.ofVirtual().start(() -> {
                try {
                    for (ByteBuffer b; (b = chunks.get()) != null; ) {
                        while (b.hasRemaining()) {
                            sent.addAndGet(ch.write(b));
                        }
                    }
                    if (thenEnd) {
                        ch.shutdownOutput();
                    }
                } catch (IOException e) {
                    // the broker closed first
                }
            });
            threads.add(t);
            return t;
        }

        void shutdownOutput() {
            try {
                ch.shutdownOutput();
            } catch (IOException ignored) {
                // already closed by the broker
            }
        }

        synchronized boolean await(BooleanSupplier condition, Duration timeout) throws InterruptedException {
            long deadline = System.nanoTime() + timeout.toNanos();
            while (!condition.getAsBoolean() && !ended) {
                long left = deadline - System.nanoTime();
                if (left <= 0) {
                    return false;
                }
                TimeUnit.NANOSECONDS.timedWait(this, left);
            }
            return condition.getAsBoolean();
        }

        boolean awaitEnd(Duration timeout) throws InterruptedException {
            return await(() -> ended, timeout);
        }

        synchronized byte[] got() {
            return got.toByteArray();
        }

        byte[] bytes() {
            return got();
        }

        synchronized long received() {
            return received;
        }

        @Override
        public void close() throws Exception {
            ch.close();
            for (Thread t : threads) {
                assertThat(t.join(ANSWER)).as("a guest thread ends once its socket is closed").isTrue();
            }
        }
    }

    /** The broker's answers: each status in order; whatever follows a 200 (the tunnel) is returned. */
    private static byte[] parseHttp(byte[] out, List<Integer> statuses) {
        int pos = 0;
        while (pos < out.length) {
            int end = indexOf(out, CRLFCRLF, pos);
            assertThat(end).as("an answer's head ends: %s", shown(out)).isNotNegative();
            String head = new String(out, pos, end - pos, ISO_8859_1);
            Matcher m = HEAD.matcher(head);
            assertThat(m.matches()).as("a well-formed head: %s", shown(out)).isTrue();
            int status = Integer.parseInt(m.group(1));
            statuses.add(status);
            pos = end + 4;
            if (status == 200) {
                return Arrays.copyOfRange(out, pos, out.length);
            }
            Matcher length = CONTENT_LENGTH.matcher(head);
            int body = length.find() ? Integer.parseInt(length.group(1)) : 0;
            assertThat(pos + body).as("the body is all there: %s", shown(out)).isLessThanOrEqualTo(out.length);
            pos += body;
        }
        return new byte[0];
    }

    /** Splits an answer stream into its length-prefixed frames, which must fill it exactly. */
    private static List<byte[]> dnsFrames(byte[] out) {
        List<byte[]> frames = new ArrayList<>();
        int pos = 0;
        while (pos < out.length) {
            assertThat(out.length - pos).as("a length prefix").isGreaterThanOrEqualTo(2);
            int len = (out[pos] & 0xff) << 8 | out[pos + 1] & 0xff;
            assertThat(pos + 2 + len).as("a whole frame in %s", shown(out)).isLessThanOrEqualTo(out.length);
            frames.add(Arrays.copyOfRange(out, pos + 2, pos + 2 + len));
            pos += 2 + len;
        }
        return frames;
    }

    private static int dnsRcode(byte[] answer) {
        return answer[3] & 0x0f;
    }

    // --- floods

    enum Flood {
        LONG_REQUEST_LINE(Listener.PROXY, "GET http://allowed.test/", "a", 414),
        ENDLESS_HEADERS(Listener.HTTP, "GET / HTTP/1.1\r\nHost: allowed.test\r\n",
                "X-Junk: " + "j".repeat(90) + "\r\n", 431),
        ONE_ENDLESS_HEADER(Listener.PROXY, "GET http://allowed.test/ HTTP/1.1\r\nX-Junk: ", "j", 431),
        BODY_PAST_CONTENT_LENGTH_LIMIT(Listener.HTTP, "POST / HTTP/1.1\r\nHost: allowed.test\r\nContent-Length: "
                + (40 << 20) + "\r\n\r\n", "b", 413),
        CHUNKED_BODY_PAST_LIMIT(Listener.PROXY, "POST http://allowed.test/ HTTP/1.1\r\nHost: allowed.test\r\n"
                + "Transfer-Encoding: chunked\r\n\r\n", "1000\r\n" + "c".repeat(4096) + "\r\n", 413),
        ENDLESS_CHUNK_SIZE_LINE(Listener.HTTP, "POST / HTTP/1.1\r\nHost: allowed.test\r\n"
                + "Transfer-Encoding: chunked\r\n\r\n1;ext=", "e", 414), // Netty's line limit: the broker says 414
        PIPELINED_REQUESTS(Listener.HTTP, "", "GET / HTTP/1.1\r\nHost: denied.test\r\n\r\n", 403),
        // a handshake that claims just under the router's 64 KiB, then endless records of it
        ENDLESS_CLIENT_HELLO(Listener.TLS, "\u0016\u0003\u0001\u0000\u0004\u0001\u0000\u00ff\u00f0",
                "\u0016\u0003\u0001\u4000" + "h".repeat(0x4000), 0),
        DNS_ANSWERS_NEVER_READ(Listener.DNS, "", "", 0),
        DNS_LOOPING_NAMES(Listener.DNS, "", "", 0);

        final Listener listener;
        private final String head;
        private final String unit;
        private final int status;

        Flood(Listener listener, String head, String unit, int status) {
            this.listener = listener;
            this.head = head;
            this.unit = unit;
            this.status = status;
        }

        long size() {
            return this == DNS_ANSWERS_NEVER_READ ? 4L << 20 : this == DNS_LOOPING_NAMES ? 4L << 20 : 40L << 20;
        }

        byte[] unitBytes() {
            return switch (this) {
                case DNS_ANSWERS_NEVER_READ -> frame(query(7, ALLOWED, 1));
                case DNS_LOOPING_NAMES -> frame(loopingQuery(0x0707, 65535 - 2));
                case ENDLESS_CLIENT_HELLO -> hexOrLatin(unit);
                default -> ascii(unit);
            };
        }

        /** The head, then units until the flood's size, in chunks of about 64 KiB; one chunk buffer, reused. */
        Supplier<ByteBuffer> source() {
            byte[] u = unitBytes();
            byte[] h = this == ENDLESS_CLIENT_HELLO ? hexOrLatin(head) : ascii(head);
            int perChunk = Math.max(1, (64 * 1024) / u.length);
            ByteBuffer chunk = ByteBuffer.allocate(perChunk * u.length);
            for (int i = 0; i < perChunk; i++) {
                chunk.put(u);
            }
            long[] left = {size()};
            boolean[] headSent = {false};
            return () -> {
                if (!headSent[0]) {
                    headSent[0] = true;
                    return ByteBuffer.wrap(h);
                }
                if (left[0] <= 0) {
                    return null;
                }
                left[0] -= chunk.capacity();
                return chunk.clear();
            };
        }

        void check(Guest g) {
            byte[] out = g.bytes();
            switch (this) {
                case ENDLESS_CLIENT_HELLO -> assertThat(out).isEqualTo(ALERT);
                case DNS_ANSWERS_NEVER_READ -> // the answers kept: the first MiB, cut to whole ones
                        assertThat(dnsFrames(Arrays.copyOf(out, out.length / ANSWER_TO_UNIT * ANSWER_TO_UNIT)))
                                .allMatch(a -> a.length == ANSWER_TO_UNIT - 2 && (a[3] & 0x0f) == 0);
                case DNS_LOOPING_NAMES -> {
                    for (byte[] a : dnsFrames(out)) {
                        assertThat(a.length).isBetween(12, MAX_DNS_ANSWER);
                    }
                }
                default -> {
                    List<Integer> statuses = new ArrayList<>();
                    parseHttp(out, statuses);
                    assertThat(statuses).as(shown(out)).first().isEqualTo(status);
                }
            }
        }
    }

    /** Heap and direct memory in use, after the collector had a chance to reclaim what is unreachable. */
    private static long footprint() throws InterruptedException {
        for (int i = 0; i < 2; i++) {
            System.gc();
            Thread.sleep(30);
        }
        Runtime rt = Runtime.getRuntime();
        long direct = ManagementFactory.getPlatformMXBeans(BufferPoolMXBean.class).stream()
                .mapToLong(BufferPoolMXBean::getMemoryUsed).sum();
        return rt.totalMemory() - rt.freeMemory() + direct + Math.max(0, PlatformDependent.usedDirectMemory());
    }

    // --- generators

    record Input(String what, byte[] bytes) {
        @Override
        public String toString() {
            return what + " (" + bytes.length + " bytes) " + shown(bytes);
        }
    }

    @Provide
    Arbitrary<Listener> listeners() {
        return Arbitraries.of(Listener.class);
    }

    @Provide
    Arbitrary<Input> dnsStreams() {
        return Arbitraries.randomValue(BrokerFuzzTest::dnsStream);
    }

    @Provide
    Arbitrary<Input> httpRequests() {
        return Arbitraries.randomValue(BrokerFuzzTest::httpRequest);
    }

    @Provide
    Arbitrary<Input> interceptedRequests() {
        return Arbitraries.randomValue(BrokerFuzzTest::interceptedRequest);
    }

    @Provide
    Arbitrary<Input> clientHellos() {
        return Arbitraries.randomValue(BrokerFuzzTest::clientHello);
    }

    /** One to three queries, each perhaps mutated, each framed with a length prefix that may lie. */
    static Input dnsStream(Random r) {
        StringBuilder what = new StringBuilder();
        ByteArrayOutputStream s = new ByteArrayOutputStream();
        for (int n = 1 + r.nextInt(3); n > 0; n--) {
            String name = r.nextInt(6) == 0 ? randomName(r) : pick(r, DNS_NAMES);
            int type = r.nextInt(4) == 0 ? r.nextInt(65536) : pick(r, List.of(1, 1, 28, 16, 255));
            byte[] q = query(r.nextInt(65536), name, type);
            what.append("[").append(name.length() > 40 ? name.substring(0, 40) + "..." : name).append(" ")
                    .append(type);
            if (r.nextInt(4) == 0) {
                q = withEdns(q);
                what.append(" +edns");
            }
            for (int m = pick(r, MUTATIONS); m > 0; m--) {
                q = mutateDns(r, q, what);
            }
            int prefix = q.length;
            switch (r.nextInt(24)) {
                case 0 -> prefix = Math.max(0, q.length - 1 - r.nextInt(Math.max(1, q.length)));
                case 1 -> prefix = q.length + 1 + r.nextInt(20);
                case 2 -> prefix = r.nextBoolean() ? 0 : 65535;
                default -> { }
            }
            if (prefix != q.length) {
                what.append(" prefix ").append(prefix);
            }
            s.write(prefix >> 8);
            s.write(prefix);
            s.writeBytes(q);
            what.append("]");
        }
        if (r.nextInt(10) == 0) {
            s.write(r.nextInt(256)); // half a length prefix
            what.append(" +1 byte");
        }
        return new Input(what.toString(), s.toByteArray());
    }

    private static byte[] mutateDns(Random r, byte[] q, StringBuilder what) {
        if (q.length == 0) {
            return q; // cut to nothing already
        }
        ByteBuffer b;
        switch (r.nextInt(14)) {
            case 0 -> {
                q = q.clone();
                int bit = r.nextInt(q.length * 8);
                q[bit / 8] ^= (byte) (1 << (bit % 8));
                what.append(" flip ").append(bit);
            }
            case 1 -> {
                int to = r.nextInt(q.length);
                q = Arrays.copyOf(q, to);
                what.append(" cut ").append(to);
            }
            case 2 -> {
                q = insert(q, r.nextInt(q.length + 1), randomBytes(r, 1 + r.nextInt(8)));
                what.append(" insert");
            }
            case 3 -> {
                int count = pick(r, List.of(0, 2, 65535, r.nextInt(65536)));
                b = ByteBuffer.wrap(q = q.clone());
                if (q.length >= 6) {
                    b.putShort(4, (short) count);
                }
                what.append(" qdcount ").append(count);
            }
            case 4 -> {
                b = ByteBuffer.wrap(q = q.clone());
                if (q.length >= 12) {
                    b.putShort(6 + 2 * r.nextInt(3), (short) r.nextInt(65536));
                }
                what.append(" counts");
            }
            case 5 -> {
                int len = 64 + r.nextInt(128);
                q = withName(q, concat(new byte[] {(byte) len}, randomLabel(r, len), new byte[] {0}));
                what.append(" label ").append(len);
            }
            case 6 -> {
                q = withName(q, new byte[] {(byte) 0xc0, 12});
                what.append(" self-pointer");
            }
            case 7 -> {
                q = loopingQuery(r.nextInt(65536), 200 + r.nextInt(65535 - 200));
                what.append(" looping name ").append(q.length);
            }
            case 8 -> {
                q = withName(q, new byte[] {(byte) 0xff, (byte) 0xff});
                what.append(" pointer past the end");
            }
            case 9 -> {
                int labels = 5 + r.nextInt(1000);
                ByteArrayOutputStream name = new ByteArrayOutputStream();
                for (int i = 0; i < labels; i++) {
                    name.write(63);
                    name.writeBytes("x".repeat(63).getBytes(ISO_8859_1));
                }
                name.write(0);
                q = withName(q, name.toByteArray());
                what.append(" ").append(labels).append(" labels");
            }
            case 10 -> {
                q = q.clone();
                if (q.length > 2) {
                    q[2] |= (byte) 0x80;
                }
                what.append(" QR");
            }
            case 11 -> {
                q = q.clone();
                if (q.length > 2) {
                    q[2] = (byte) (q[2] & 0x87 | r.nextInt(16) << 3);
                }
                what.append(" opcode");
            }
            case 12 -> {
                int odd = pick(r, List.of(0, (int) '.', 0xff, 0xc3, (int) ' ', (int) '\\'));
                byte[] label = {'a', (byte) odd, 'b'};
                q = withName(q, concat(new byte[] {3}, label, new byte[] {4}, ascii("test"), new byte[] {0}));
                what.append(" odd label");
            }
            default -> {
                // two names pointing at each other
                q = withName(q, new byte[] {1, 'a', (byte) 0xc0, 16, 1, 'b', (byte) 0xc0, 12});
                what.append(" pointer ping-pong");
            }
        }
        if (q.length > 65535) {
            q = Arrays.copyOf(q, 65535);
        }
        return q;
    }

    /** A query for {@code name}: one question, recursion desired, as glibc sends it. */
    static byte[] query(int id, String name, int type) {
        ByteArrayOutputStream q = new ByteArrayOutputStream();
        q.writeBytes(new byte[] {(byte) (id >> 8), (byte) id, 0x01, 0x00, 0, 1, 0, 0, 0, 0, 0, 0});
        q.writeBytes(encodeName(name));
        q.writeBytes(new byte[] {(byte) (type >> 8), (byte) type, 0, 1});
        return q.toByteArray();
    }

    private static byte[] encodeName(String name) {
        ByteArrayOutputStream n = new ByteArrayOutputStream();
        for (String label : name.split("\\.")) {
            if (!label.isEmpty()) {
                byte[] l = label.getBytes(ISO_8859_1);
                n.write(l.length);
                n.writeBytes(l);
            }
        }
        n.write(0);
        return n.toByteArray();
    }

    /** A query whose name is one long label followed by a pointer back to it, padded to {@code size}. */
    static byte[] loopingQuery(int id, int size) {
        byte[] label = new byte[191];
        Arrays.fill(label, (byte) 'l');
        byte[] q = concat(new byte[] {(byte) (id >> 8), (byte) id, 0x01, 0x00, 0, 1, 0, 0, 0, 0, 0, 0},
                new byte[] {(byte) 191}, label, new byte[] {(byte) 0xc0, 12, 0, 1, 0, 1});
        return Arrays.copyOf(q, Math.max(q.length, size));
    }

    private static byte[] withName(byte[] q, byte[] name) {
        if (q.length < 12) {
            return q;
        }
        return concat(Arrays.copyOf(q, 12), name, new byte[] {0, 1, 0, 1});
    }

    private static byte[] withEdns(byte[] q) {
        byte[] r = concat(q, new byte[] {0, 0, 41, 0x10, 0, 0, 0, 0, 0, 0, 0});
        r[11] = 1;
        return r;
    }

    static byte[] frame(byte[] q) {
        return concat(new byte[] {(byte) (q.length >> 8), (byte) q.length}, q);
    }

    private static String randomName(Random r) {
        StringBuilder s = new StringBuilder();
        for (int labels = 1 + r.nextInt(5); labels > 0; labels--) {
            if (!s.isEmpty()) {
                s.append('.');
            }
            for (int i = 1 + r.nextInt(20); i > 0; i--) {
                s.append((char) (int) pick(r, List.of((int) 'a' + r.nextInt(26), (int) '0' + r.nextInt(10), (int) '-',
                        (int) '_', (int) 'A' + r.nextInt(26), 0x20 + r.nextInt(0xe0))));
            }
        }
        return s.toString();
    }

    /** A request of one of the shapes a client sends, then up to four mutations. */
    static Input httpRequest(Random r) {
        String host = host(r);
        String body = "x".repeat(r.nextInt(40));
        String req = switch (r.nextInt(9)) {
            case 0 -> "CONNECT " + host + (r.nextInt(4) == 0 ? "" : ":443") + " HTTP/1.1\r\nHost: " + host
                    + ":443\r\n\r\n";
            case 1 -> "GET http://" + host + "/p/a?q=1 HTTP/1.1\r\nHost: " + host + "\r\nAccept: */*\r\n\r\n";
            case 2 -> "GET /p HTTP/1.1\r\nHost: " + host + "\r\nUser-Agent: fuzz\r\n\r\n";
            case 3 -> "POST " + (r.nextBoolean() ? "http://" + host : "") + "/up HTTP/1.1\r\nHost: " + host
                    + "\r\nContent-Length: " + body.length() + "\r\n\r\n" + body;
            case 4 -> "POST " + (r.nextBoolean() ? "http://" + host : "") + "/up HTTP/1.1\r\nHost: " + host
                    + "\r\nTransfer-Encoding: chunked\r\n\r\n" + Integer.toHexString(body.length() + 1) + "\r\n"
                    + body + "y\r\n" + (r.nextBoolean() ? "3;ext=1\r\nabc\r\n" : "") + "0\r\n"
                    + (r.nextBoolean() ? "Trailer-X: t\r\n" : "") + "\r\n";
            case 5 -> pick(r, List.of("GET / HTTP/1.0\r\n\r\n", "OPTIONS * HTTP/1.1\r\nHost: " + host + "\r\n\r\n",
                    "HEAD http://" + host + "/ HTTP/1.1\r\n\r\n", "GET / HTTP/1.1\r\n\r\n",
                    "DELETE http://" + host + ":80/x HTTP/1.1\r\nHost: " + host + ":80\r\n\r\n"));
            case 6 -> "PUT http://" + host + "/e HTTP/1.1\r\nHost: " + host + "\r\nExpect: "
                    + (r.nextBoolean() ? "100-continue" : "something-else") + "\r\nContent-Length: "
                    + body.length() + "\r\n\r\n" + body;
            case 7 -> "GET http://" + host + "/ HTTP/1.1\r\nHost: " + host + "\r\nConnection: close, X-Drop\r\n"
                    + "X-Drop: 1\r\nProxy-Authorization: Basic eA==\r\n\r\n";
            default -> randomToken(r) + " " + (r.nextBoolean() ? "http://" + host + "/" : "/") + " HTTP/1.1\r\nHost: "
                    + host + "\r\n\r\n";
        };
        return mutated(r, req);
    }

    /**
     * Requests for the intercepting broker, whose rule lets only {@code GET allowed.test/} reach the upstream dial:
     * one in four is such a GET, then mutated as any other. The shared mix alone reached the dial in 1.3-3.3% of
     * tries (four runs of 150), so the check that the fuzzer gets that far (more than 2%) failed by chance about one
     * run in three; with this mix it was 8-18% in four runs, 421 staying at 7-13%.
     */
    static Input interceptedRequest(Random r) {
        if (r.nextInt(4) != 0) {
            return httpRequest(r);
        }
        return mutated(r, "GET /" + pick(r, List.of("", "p", "a/b?q=1")) + " HTTP/1.1\r\nHost: " + ALLOWED
                + pick(r, List.of("", ":443")) + "\r\n" + pick(r, List.of("", "Accept: */*\r\n",
                "Connection: close\r\n")) + "\r\n");
    }

    /** The request, mutated none to three times and perhaps grown past a limit. */
    private static Input mutated(Random r, String req) {
        StringBuilder what = new StringBuilder(req.length() > 60 ? req.substring(0, 60) : req);
        byte[] bytes = req.getBytes(ISO_8859_1);
        for (int m = pick(r, MUTATIONS); m > 0; m--) {
            bytes = mutateHttp(r, bytes, what);
        }
        // one request in twelve also grows past a limit, as a last step no other mutation undoes: at one mutation
        // in seventeen alone, the limits' answers came to about 2% of tries, the edge of what the coverage check
        // asks, and a run could fall short by chance
        if (r.nextInt(12) == 0) {
            String t = new String(bytes, ISO_8859_1);
            bytes = oversized(r, t, Math.max(0, t.indexOf("\r\n")), what).getBytes(ISO_8859_1);
        }
        return new Input(what.toString().replace("\r\n", "\\r\\n"), bytes);
    }

    /** A request target or a header around and past the decoder's limits (413, 414 and 431 territory). */
    private static String oversized(Random r, String s, int firstEnd, StringBuilder what) {
        int len = pick(r, List.of(StrictRequestDecoder.MAX_INITIAL_LINE - 40,
                StrictRequestDecoder.MAX_INITIAL_LINE + 1, StrictRequestDecoder.MAX_HEADERS - 60,
                StrictRequestDecoder.MAX_HEADERS + 1, 3 * StrictRequestDecoder.MAX_HEADERS));
        if (r.nextBoolean()) {
            int sp = s.indexOf(' ');
            what.append(" | long target ").append(len);
            return sp < 0 ? s + "l".repeat(len) : s.substring(0, sp + 1) + "/" + "l".repeat(len) + s.substring(sp + 1);
        }
        what.append(" | long header ").append(len);
        return header(s, firstEnd, "X-Long: " + "l".repeat(len));
    }

    private static byte[] mutateHttp(Random r, byte[] b, StringBuilder what) {
        String s = new String(b, ISO_8859_1);
        int firstEnd = Math.max(0, s.indexOf("\r\n"));
        int at = r.nextInt(b.length + 1);
        switch (r.nextInt(17)) {
            case 0 -> {
                int crlf = nth(s, "\r\n", r);
                if (crlf >= 0) {
                    s = s.substring(0, crlf) + pick(r, List.of("", "\n", "\r", "\r\r\n", "\n\r"))
                            + s.substring(crlf + 2);
                }
                what.append(" | line end changed");
            }
            case 1 -> {
                s = s.substring(0, Math.min(at, s.length())) + "\0" + s.substring(Math.min(at, s.length()));
                what.append(" | NUL at ").append(at);
            }
            case 2 -> {
                s = header(s, firstEnd, "Content-Length: " + pick(r, List.of("0", "5", "4", "7")));
                what.append(" | another Content-Length");
            }
            case 3 -> {
                s = header(s, firstEnd, "Transfer-Encoding: " + pick(r, List.of("chunked", "gzip, chunked",
                        "chunked, identity", "Chunked", "xchunked", " chunked")));
                what.append(" | Transfer-Encoding");
            }
            case 4 -> {
                String size = pick(r, List.of("zz", "-1", "ffffffffffffffffff", "7fffffff", "5;ext=\"", " 5", "5 ",
                        "0x5", "", "80000000"));
                int body = s.indexOf("\r\n\r\n");
                s = (body < 0 ? s : s.substring(0, body + 4)) + size + "\r\nhello\r\n0\r\n\r\n";
                what.append(" | chunk size ").append(size);
            }
            case 5 -> {
                s = header(s, firstEnd, pick(r, List.of("NoColonHere", ": no name", "Bad Name: x", "X-Y:")));
                what.append(" | header without a name or colon");
            }
            case 6 -> {
                s = header(s, firstEnd, "X-Folded: a\r\n" + pick(r, List.of(" folded", "\tfolded", " ")));
                what.append(" | obs-fold");
            }
            case 7 -> s = oversized(r, s, firstEnd, what);
            case 8 -> {
                if (b.length > 0) {
                    b = b.clone();
                    int i = r.nextInt(b.length);
                    b[i] ^= (byte) (1 << r.nextInt(8));
                    what.append(" | flip at ").append(i);
                    return b;
                }
            }
            case 9 -> {
                s = s.substring(0, Math.min(at, s.length()));
                what.append(" | cut at ").append(at);
            }
            case 10 -> {
                byte[] junk = randomBytes(r, 1 + r.nextInt(16));
                what.append(" | junk at ").append(at);
                return insert(b, Math.min(at, b.length), junk);
            }
            case 11 -> {
                s = s + s;
                what.append(" | pipelined twice");
            }
            case 12 -> {
                s = header(s, firstEnd, "Host: " + host(r));
                what.append(" | another Host");
            }
            case 13 -> {
                s = s.replaceFirst("(?i)\r\nhost:", pick(r, List.of("\r\nHost :", "\r\n Host:", "\r\nHOST:",
                        "\r\nHost:\t", "\r\nHost")));
                what.append(" | Host spacing");
            }
            case 14 -> {
                String v = pick(r, List.of("-1", "99999999999999999999", "1, 1", "+5", " 5 ", "0x10", "1 1", ""));
                s = s.replaceFirst("(?i)content-length: *[0-9]*", "Content-Length: " + v);
                what.append(" | Content-Length ").append(v);
            }
            case 15 -> {
                String v = pick(r, List.of("HTTP/2.0", "HTTP/1.10", "http/1.1", "HTTP/1.1 extra", "HTTP/0.9",
                        "HTTP/1", ""));
                s = s.replaceFirst("HTTP/1\\.[01]", v);
                what.append(" | version ").append(v);
            }
            default -> {
                int sp = s.indexOf(' ');
                String method = pick(r, List.of("get", "G\0ET", "GET\t", "", "CONNECT", "PRI", randomToken(r)));
                s = sp < 0 ? method + " " + s : method + s.substring(sp);
                what.append(" | method ").append(method);
            }
        }
        return s.getBytes(ISO_8859_1);
    }

    /** Mostly the names the policies judge, the rest odd. */
    private static String host(Random r) {
        int roll = r.nextInt(20);
        return roll < 7 ? ALLOWED : roll < 10 ? "denied.test" : roll < 12 ? "x.wild.test" : pick(r, HOSTS);
    }

    private static String header(String request, int firstLineEnd, String line) {
        return request.substring(0, firstLineEnd) + "\r\n" + line + request.substring(firstLineEnd);
    }

    private static int nth(String s, String what, Random r) {
        List<Integer> at = new ArrayList<>();
        for (int i = s.indexOf(what); i >= 0; i = s.indexOf(what, i + 1)) {
            at.add(i);
        }
        return at.isEmpty() ? -1 : pick(r, at);
    }

    private static String randomToken(Random r) {
        StringBuilder s = new StringBuilder();
        for (int i = 1 + r.nextInt(12); i > 0; i--) {
            s.append((char) (r.nextInt(4) == 0 ? 0x21 + r.nextInt(0x5e) : 'A' + r.nextInt(26)));
        }
        return s.toString();
    }

    /** A ClientHello with a server name, whose every length field may lie, cut into records, then mutated. */
    static Input clientHello(Random r) {
        String name = pick(r, List.of(ALLOWED, ALLOWED, "denied.test", "x.wild.test", "ALLOWED.TEST.", "",
                "1.2.3.4", "a".repeat(64) + ".test", "a".repeat(300), "a\0b.test", "\u00ff.test", "allowed.test:443"));
        StringBuilder what = new StringBuilder("hello sni=" + (name.length() > 30 ? name.substring(0, 30) : name));
        int[] lies = new int[6]; // record, handshake, extensions, sni extension, name list, name
        if (r.nextInt(3) == 0) {
            int field = r.nextInt(lies.length);
            lies[field] = pick(r, List.of(-1, 1, -3, 7, 0x7000, -0x40, 300));
            what.append(" lie ").append(field).append(" by ").append(lies[field]);
        }
        byte[] hello = hello(r, name, lies, r.nextInt(6) == 0, what);
        if (r.nextInt(4) == 0) {
            hello = fragment(r, hello);
            what.append(" fragmented");
        }
        for (int m = r.nextInt(3); m > 0; m--) {
            int at = r.nextInt(hello.length + 1);
            switch (r.nextInt(6)) {
                case 0 -> {
                    if (at < hello.length) {
                        hello = hello.clone();
                        hello[at] ^= (byte) (1 << r.nextInt(8));
                        what.append(" flip at ").append(at);
                    }
                }
                case 1 -> {
                    hello = Arrays.copyOf(hello, at);
                    what.append(" cut at ").append(at);
                }
                case 2 -> {
                    hello = insert(hello, at, randomBytes(r, 1 + r.nextInt(8)));
                    what.append(" junk at ").append(at);
                }
                case 3 -> {
                    hello = hello.clone();
                    if (hello.length > 0) {
                        hello[0] = (byte) (int) pick(r, List.of(0x17, 0x15, 0x14, 0x80, 0x00, 0x47));
                    }
                    what.append(" record type");
                }
                case 4 -> {
                    hello = hello.clone();
                    if (hello.length > 8) {
                        hello[6] = (byte) 0xff; // handshake length 0xff....: past the router's 64 KiB
                    }
                    what.append(" huge handshake length");
                }
                default -> {
                    hello = hello.clone();
                    if (hello.length > 2) {
                        hello[1] = (byte) r.nextInt(4);
                        hello[2] = (byte) r.nextInt(5);
                    }
                    what.append(" record version");
                }
            }
        }
        return new Input(what.toString(), hello);
    }

    static byte[] hello(Random r, String name) {
        return hello(r, name, new int[6], false, new StringBuilder());
    }

    private static byte[] hello(Random r, String name, int[] lies, boolean oddNames, StringBuilder what) {
        byte[] host = name.getBytes(ISO_8859_1);
        ByteBuffer names = ByteBuffer.allocate(host.length + 64);
        names.put((byte) 0).putShort((short) (host.length + lies[5])).put(host);
        if (oddNames) {
            names.put((byte) 1).putShort((short) 3).put(ascii("abc")); // a second entry of an unknown type
            what.append(" +odd name entry");
        }
        byte[] list = Arrays.copyOf(names.array(), names.position());
        ByteBuffer sni = ByteBuffer.allocate(list.length + 6).putShort((short) 0)
                .putShort((short) (list.length + 2 + lies[3])).putShort((short) (list.length + lies[4])).put(list);
        byte[] versions = {0x00, 0x2b, 0x00, 0x03, 0x02, 0x03, 0x04};
        byte[] extensions = r.nextBoolean() ? concat(sni.array(), versions) : concat(versions, sni.array());
        byte[] random = new byte[32];
        r.nextBytes(random);
        byte[] body = concat(new byte[] {3, 3}, random, new byte[] {0, 0, 4, 0x13, 0x01, 0x13, 0x02, 1, 0,
            (byte) ((extensions.length + lies[2]) >> 8), (byte) (extensions.length + lies[2])}, extensions);
        int hs = body.length + lies[1];
        byte[] handshake = concat(new byte[] {1, (byte) (hs >> 16), (byte) (hs >> 8), (byte) hs}, body);
        int rec = handshake.length + lies[0];
        return concat(new byte[] {0x16, 3, 1, (byte) (rec >> 8), (byte) rec}, handshake);
    }

    /** The handshake of a one-record hello split over several records (some perhaps empty). */
    private static byte[] fragment(Random r, byte[] hello) {
        if (hello.length <= 5) {
            return hello;
        }
        byte[] hs = Arrays.copyOfRange(hello, 5, hello.length);
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        int pos = 0;
        while (pos < hs.length) {
            int n = Math.min(hs.length - pos, r.nextInt(8) == 0 ? 0 : 1 + r.nextInt(Math.max(1, hs.length / 2)));
            out.writeBytes(new byte[] {0x16, 3, 1, (byte) (n >> 8), (byte) n});
            out.write(hs, pos, n);
            pos += n;
        }
        return out.toByteArray();
    }

    // --- bytes

    private static <T> T pick(Random r, List<T> from) {
        return from.get(r.nextInt(from.size()));
    }

    private static byte[] randomBytes(Random r, int n) {
        byte[] b = new byte[n];
        r.nextBytes(b);
        return b;
    }

    private static byte[] randomLabel(Random r, int n) {
        byte[] b = new byte[n];
        for (int i = 0; i < n; i++) {
            b[i] = (byte) ('a' + r.nextInt(26));
        }
        return b;
    }

    private static byte[] insert(byte[] b, int at, byte[] what) {
        return concat(Arrays.copyOf(b, at), what, Arrays.copyOfRange(b, at, b.length));
    }

    private static byte[] concat(byte[]... parts) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        for (byte[] p : parts) {
            out.writeBytes(p);
        }
        return out.toByteArray();
    }

    static byte[] ascii(String s) {
        return s.getBytes(ISO_8859_1);
    }

    /** Latin-1 text whose chars above 0xff stand for two bytes (big-endian): for binary flood heads. */
    private static byte[] hexOrLatin(String s) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        for (char c : s.toCharArray()) {
            if (c > 0xff) {
                out.write(c >> 8);
            }
            out.write(c);
        }
        return out.toByteArray();
    }

    static int indexOf(byte[] in, byte[] what, int from) {
        outer:
        for (int i = from; i <= in.length - what.length; i++) {
            for (int j = 0; j < what.length; j++) {
                if (in[i + j] != what[j]) {
                    continue outer;
                }
            }
            return i;
        }
        return -1;
    }

    static String shown(byte[] b) {
        StringBuilder s = new StringBuilder();
        for (int i = 0; i < Math.min(b.length, 300); i++) {
            int c = b[i] & 0xff;
            s.append(c >= 0x20 && c < 0x7f && c != '\\' ? String.valueOf((char) c)
                    : c == '\r' ? "\\r" : c == '\n' ? "\\n" : String.format("\\x%02x", c));
        }
        return b.length > 300 ? s + "..." : s.toString();
    }
}
