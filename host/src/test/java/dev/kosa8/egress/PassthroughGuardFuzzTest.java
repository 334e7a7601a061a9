package dev.kosa8.egress;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kosa8.net.HostName;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.embedded.EmbeddedChannel;
import java.io.ByteArrayOutputStream;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HexFormat;
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
import net.jqwik.api.statistics.Statistics;
import net.jqwik.api.statistics.StatisticsReport;

/**
 * A hostile guest on a passed-through TLS connection: {@link PassthroughGuard} reads the plaintext handshake the
 * guest sends after its first ClientHello (which {@link TlsRouter} checked) and must not let a later one name
 * another server or carry Encrypted Client Hello. It is fed records holding one to three ClientHellos (the right
 * name, another name, none, ECH), ClientHellos split across records, ChangeCipherSpec, application data and alerts,
 * cut into reads at random places; the server's side of the handshake (a TLS 1.3 or 1.2 ServerHello or a
 * HelloRetryRequest) arrives between two reads or not at all; then bits flipped, bytes cut or repeated and record
 * lengths that lie.
 *
 * <p>What must hold, checked against a reading of its own of what reached the upstream: the upstream gets a prefix
 * of the guest's bytes, unchanged; every ClientHello it got while the handshake was still plaintext names the
 * allowed host and has no ECH, one only (two after a HelloRetryRequest); a refusal is exactly the
 * {@code access_denied} alert, with both connections closed; nothing escapes as an exception, a Netty warning or a
 * leaked buffer. For inputs left whole with no server answer, the guest is refused exactly when a ClientHello after
 * the first, or a bad first one, is complete.
 */
class PassthroughGuardFuzzTest {
    private static final String HOST = "fuzz.test";
    private static final List<String> NAMES = Arrays.asList(HOST, HOST, HOST, "FUZZ.TEST", "other.test", null,
            HOST + ".evil", "xfuzz.test");
    private static final byte[] ALERT = {0x15, 0x03, 0x03, 0x00, 0x02, 0x02, 0x31};
    private static final byte[] HRR_RANDOM = HexFormat.of()
            .parseHex("cf21ad74e59a6111be1d8c021e65b891c2a211167abb8c5e079e09e2c8a8339c");
    private static final Queue<String> problems = new ConcurrentLinkedQueue<>();
    private static FuzzBroker fuzz;
    private static Broker broker;
    private static NettyWarnings netty;

    @BeforeContainer
    static void start() throws Exception {
        netty = NettyWarnings.into(problems);
        fuzz = FuzzBroker.start("sbx-guard-fuzz", new EgressPolicy(false,
                List.of(AllowRule.parse("passthrough " + HOST))), problems::add);
        broker = fuzz.broker();
    }

    @AfterContainer
    static void stop() throws Exception {
        fuzz.close();
        netty.close();
    }

    /** What the server says, between two of the guest's reads. */
    enum Server { NONE, TLS13, TLS12, RETRY }

    /**
     * @param reads      the guest's bytes, as its reads deliver them
     * @param server     what the server says, and {@code serverAfter}: after how many reads
     * @param bad        for an input left whole: whether some complete ClientHello must be refused when the server
     *                   says nothing
     */
    record Input(List<byte[]> reads, Server server, int serverAfter, int mutations, boolean bad, String what) {
        @Override
        public String toString() {
            return what + ", server " + server + " after read " + serverAfter + " (" + reads.size() + " reads, "
                    + mutations + " mutations)";
        }
    }

    @StatisticsReport(StatisticsReport.StatisticsReportMode.OFF) // kept for the coverage checks
    @Property(tries = 1500, shrinking = ShrinkingMode.OFF)
    void theUpstreamGetsOnlyTheCheckedClientHelloAndARefusalIsOneAlert(@ForAll("inputs") Input in) {
        EmbeddedChannel upstream = new EmbeddedChannel();
        PassthroughGuard guard = new PassthroughGuard(broker, Listener.TLS, HOST, 443, upstream);
        upstream.pipeline().addFirst("hello-watch", guard.serverSide());
        EmbeddedChannel guest = new EmbeddedChannel(guard);
        ByteArrayOutputStream forwarded = new ByteArrayOutputStream();
        int forwardedWhenServerSpoke = -1;
        try {
            for (int i = 0; i <= in.reads().size(); i++) {
                if (i == in.serverAfter() && in.server() != Server.NONE && upstream.isActive()) {
                    upstream.writeInbound(Unpooled.wrappedBuffer(serverHello(in.server())));
                    drain(upstream, null);
                    drain(guest, forwarded);
                    forwardedWhenServerSpoke = forwarded.size();
                }
                if (i < in.reads().size() && guest.isActive()) {
                    guest.writeInbound(Unpooled.wrappedBuffer(in.reads().get(i)));
                    guest.runPendingTasks();
                    guest.checkException();
                    drain(guest, forwarded);
                }
            }
            ByteArrayOutputStream answer = new ByteArrayOutputStream();
            for (Object o; (o = guest.readOutbound()) != null; ) {
                ByteBuf b = (ByteBuf) o;
                byte[] bytes = new byte[b.readableBytes()];
                b.readBytes(bytes);
                b.release();
                answer.writeBytes(bytes);
            }
            byte[] all = in.reads().stream().collect(ByteArrayOutputStream::new, ByteArrayOutputStream::writeBytes,
                    (a, b) -> a.writeBytes(b.toByteArray())).toByteArray();
            byte[] got = forwarded.toByteArray();
            assertThat(got.length).as("forwarded no more than the guest sent, " + in).isLessThanOrEqualTo(all.length);
            assertThat(got).as("the upstream gets the guest's bytes unchanged, " + in)
                    .isEqualTo(Arrays.copyOf(all, got.length));
            boolean refused = answer.size() > 0;
            if (refused) {
                assertThat(answer.toByteArray()).as("a refusal is one access_denied alert, " + in).isEqualTo(ALERT);
                assertThat(guest.isActive()).as("the guest's connection is closed after the alert").isFalse();
                assertThat(upstream.isActive()).as("the upstream is closed on a refusal").isFalse();
            }
            checkHellos(in, got, forwardedWhenServerSpoke);
            if (in.mutations() == 0 && in.server() == Server.NONE) {
                assertThat(refused).as("refused exactly when a complete ClientHello is bad, " + in).isEqualTo(in.bad());
            }
            Statistics.label("outcome").collect(refused ? "refused" : "passed");
            Statistics.label("outcome").coverage(c -> {
                c.check("refused").percentage(p -> p > 20);
                c.check("passed").percentage(p -> p > 20);
            });
        } finally {
            guest.finishAndReleaseAll();
            upstream.finishAndReleaseAll();
        }
        List<String> seen = new ArrayList<>();
        for (String p; (p = problems.poll()) != null; ) {
            seen.add(p);
        }
        assertThat(seen).as("unhandled exceptions, leaks or audit failures, after " + in).isEmpty();
    }

    /**
     * Reads what the upstream got as its TLS stack would: records, the plaintext handshake messages in those of type
     * handshake, and each ClientHello among them, for as long as the handshake is plaintext by what the server said
     * (TLS 1.3: until its ServerHello; TLS 1.2: until the guest's ChangeCipherSpec after it).
     */
    private static void checkHellos(Input in, byte[] got, int serverSpoke) {
        ByteArrayOutputStream handshake = new ByteArrayOutputStream();
        boolean changedCipher = false;
        for (int pos = 0; pos + 5 <= got.length; ) {
            int type = got[pos] & 0xff;
            int length = ((got[pos + 3] & 0xff) << 8) | (got[pos + 4] & 0xff);
            if (pos + 5 + length > got.length) {
                break;
            }
            boolean afterServer = serverSpoke >= 0 && pos >= serverSpoke;
            if (afterServer && (in.server() == Server.TLS13 || in.server() == Server.TLS12 && changedCipher)) {
                break; // encrypted from here on: the guard stepped aside
            }
            changedCipher |= type == PassthroughGuard.CHANGE_CIPHER_SPEC;
            if (type == PassthroughGuard.HANDSHAKE) {
                handshake.write(got, pos + 5, length);
            }
            pos += 5 + length;
        }
        byte[] h = handshake.toByteArray();
        int hellos = 0;
        for (int pos = 0; pos + 4 <= h.length; ) {
            int length = ((h[pos + 1] & 0xff) << 16) | ((h[pos + 2] & 0xff) << 8) | (h[pos + 3] & 0xff);
            if (pos + 4 + length > h.length) {
                break; // incomplete: the upstream never got it whole
            }
            if ((h[pos] & 0xff) == ClientHello.TYPE) {
                hellos++;
                ClientHello hello = ClientHello.parse(Unpooled.wrappedBuffer(h, pos + 4, length));
                assertThat(hello).as("a ClientHello the upstream got parses, " + in).isNotNull();
                assertThat(hello.ech()).as("a ClientHello the upstream got has no ECH, " + in).isFalse();
                assertThat(hello.serverName() == null ? null : HostName.normalize(hello.serverName()))
                        .as("a ClientHello the upstream got names the allowed host, " + in).isEqualTo(HOST);
            }
            pos += 4 + length;
        }
        assertThat(hellos).as("ClientHellos the upstream got whole, " + in)
                .isLessThanOrEqualTo(in.server() == Server.RETRY && serverSpoke >= 0 ? 2 : 1);
    }

    private static void drain(EmbeddedChannel ch, ByteArrayOutputStream into) {
        for (Object o; (o = ch.readInbound()) != null; ) {
            if (o instanceof ByteBuf b) {
                if (into != null) {
                    byte[] bytes = new byte[b.readableBytes()];
                    b.getBytes(b.readerIndex(), bytes);
                    into.writeBytes(bytes);
                }
                b.release();
            }
        }
    }

    /** One record with the server's ServerHello: TLS 1.3's, TLS 1.2's or a HelloRetryRequest. */
    static byte[] serverHello(Server s) {
        ByteArrayOutputStream body = new ByteArrayOutputStream();
        body.writeBytes(new byte[] {3, 3});
        body.writeBytes(s == Server.RETRY ? HRR_RANDOM : new byte[32]);
        body.writeBytes(new byte[] {0, 0x13, 0x01, 0}); // no session id, a cipher suite, no compression
        if (s == Server.TLS12) {
            body.writeBytes(new byte[] {0, 0});
        } else {
            body.writeBytes(new byte[] {0, 6, 0, 0x2b, 0, 2, 3, 4}); // supported_versions: TLS 1.3
        }
        byte[] b = body.toByteArray();
        byte[] hs = Hellos.concat(new byte[] {PassthroughGuard.SERVER_HELLO, 0, (byte) (b.length >> 8),
                (byte) b.length}, b);
        return Hellos.concat(new byte[] {0x16, 3, 3, (byte) (hs.length >> 8), (byte) hs.length}, hs);
    }

    @Provide
    Arbitrary<Input> inputs() {
        return Arbitraries.longs().map(seed -> input(new Random(seed)));
    }

    static Input input(Random r) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        StringBuilder what = new StringBuilder();
        int n = 1 + r.nextInt(3);
        boolean bad = false;
        for (int i = 0; i < n; i++) {
            String name = i == 0 && r.nextInt(3) != 0 ? HOST : NAMES.get(r.nextInt(NAMES.size()));
            boolean ech = r.nextInt(6) == 0;
            byte[] hs = Hellos.handshake(name, r.nextBoolean() ? List.of("h2", "http/1.1") : List.of(), ech);
            bad |= i > 0 || ech || name == null || !HOST.equals(HostName.normalize(name));
            what.append("hello(").append(name).append(ech ? ", ECH" : "").append(") ");
            if (r.nextInt(4) == 0) { // the message split across two records
                int cut = 1 + r.nextInt(hs.length - 1);
                out.writeBytes(record(0x16, Arrays.copyOf(hs, cut)));
                out.writeBytes(record(0x16, Arrays.copyOfRange(hs, cut, hs.length)));
            } else {
                out.writeBytes(record(0x16, hs));
            }
            for (int k = r.nextInt(3); k > 0; k--) {
                switch (r.nextInt(3)) {
                    case 0 -> {
                        out.writeBytes(record(0x14, new byte[] {1}));
                        what.append("ccs ");
                    }
                    case 1 -> {
                        byte[] data = new byte[r.nextInt(200)];
                        r.nextBytes(data);
                        out.writeBytes(record(0x17, data));
                        what.append("data ");
                    }
                    default -> {
                        out.writeBytes(record(0x15, new byte[] {1, 0}));
                        what.append("alert ");
                    }
                }
            }
        }
        byte[] bytes = out.toByteArray();
        int mutations = List.of(0, 0, 0, 1, 1, 2, 3).get(r.nextInt(7));
        for (int m = 0; m < mutations; m++) {
            bytes = mutate(r, bytes);
        }
        List<byte[]> reads = new ArrayList<>();
        int cuts = r.nextInt(5);
        int from = 0;
        for (int c = 0; c < cuts && from < bytes.length; c++) {
            int to = from + 1 + r.nextInt(Math.max(1, bytes.length - from));
            reads.add(Arrays.copyOfRange(bytes, from, Math.min(to, bytes.length)));
            from = Math.min(to, bytes.length);
        }
        if (from < bytes.length) {
            reads.add(Arrays.copyOfRange(bytes, from, bytes.length));
        }
        Server server = r.nextBoolean() ? Server.NONE : Server.values()[1 + r.nextInt(3)];
        return new Input(reads, server, r.nextInt(reads.size() + 1), mutations, bad, what.toString().strip());
    }

    private static byte[] record(int type, byte[] payload) {
        return Hellos.concat(new byte[] {(byte) type, 3, 3, (byte) (payload.length >> 8), (byte) payload.length},
                payload);
    }

    private static byte[] mutate(Random r, byte[] b) {
        if (b.length < 2) {
            return b;
        }
        int at = r.nextInt(b.length);
        byte[] c;
        switch (r.nextInt(5)) {
            case 0 -> { // flip a bit
                c = b.clone();
                c[at] ^= (byte) (1 << r.nextInt(8));
            }
            case 1 -> c = Arrays.copyOf(b, Math.max(1, at)); // cut
            case 2 -> { // repeat a slice
                int len = Math.min(b.length - at, 1 + r.nextInt(64));
                c = new byte[b.length + len];
                System.arraycopy(b, 0, c, 0, at + len);
                System.arraycopy(b, at, c, at + len, b.length - at);
            }
            case 3 -> { // a length that lies
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
}
