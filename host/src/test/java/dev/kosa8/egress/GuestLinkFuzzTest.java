package dev.kosa8.egress;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kosa8.protocol.Codec;
import dev.kosa8.protocol.FrameReader;
import dev.kosa8.protocol.Limits;
import dev.kosa8.protocol.Message;
import dev.kosa8.protocol.NetLink;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import java.io.IOException;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.Channels;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.Example;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.ShrinkingMode;
import net.jqwik.api.constraints.Size;
import net.jqwik.api.lifecycle.AfterContainer;
import net.jqwik.api.lifecycle.BeforeContainer;

/**
 * A hostile agent on the network link's port: what the daemon's end ({@link GuestLink}) decodes from the guest,
 * after a proper Hello. Random bytes; and sequences of link messages, valid and not (streams opened twice or to
 * ports with no listener, bytes on the host's stream, past a window or after an end, credits for bytes never sent,
 * resets of streams that never were, the network window's (ready said again, slots given back that were never lent
 * or under another serial), messages only the host sends), with bytes of their frames flipped, cut or
 * inserted, each frame's length then told truly or not. Through a real broker and a loopback server behind it.
 *
 * <p>After each: the daemon either still serves the link (a stream to a port with no listener is refused with a
 * reset, as ever) or has ended it with a reason that is a refusal of what the guest sent, never an exception of its
 * own; when the guest then hangs up the link ends, none of its streams stays open and no connection to the broker
 * is left; nothing reached Netty's log as an unhandled exception or a leak; and each case took seconds at most.
 */
class GuestLinkFuzzTest {
    private static final Queue<String> problems = new ConcurrentLinkedQueue<>();
    /** The frame decoder's own refusals, named by their class as the link's log names them. */
    private static final List<String> DECODER_REFUSALS = List.of("TooLongFrameException: ",
            "CorruptedFrameException: ");
    private static final int PROBE = 1_000_000;
    private static final String REQUEST = "GET /hello HTTP/1.1\r\nHost: api.test\r\n\r\n";

    static Path dir;
    static EventLoopGroup group;
    static TestUpstream upstream;
    static Broker broker;
    static NettyWarnings netty;

    @BeforeContainer
    static void start() throws Exception {
        dir = Files.createTempDirectory("link-fuzz");
        netty = NettyWarnings.into(problems);
        group = new MultiThreadIoEventLoopGroup(1, dev.kosa8.host.NettyTransport.CURRENT.ioHandler());
        upstream = new TestUpstream(dir, "api.test");
        EgressTestSettings test = new EgressTestSettings(Map.of("api.test:80", upstream.httpPort()), Map.of(),
                Optional.empty());
        broker = Broker.start("sbx-link-fuzz", dir.resolve("run"), new EgressPolicy(false,
                List.of(AllowRule.parse("api.test"))), new AuditLog(dir.resolve("net.log"), m -> { }),
                Upstreams.system(test), null, dev.kosa8.egress.tls.UpstreamTls.clientContext(Optional.empty()), group);
    }

    @AfterContainer
    static void stop() throws Exception {
        broker.close();
        upstream.close();
        group.shutdownGracefully(0, 1, TimeUnit.SECONDS).sync();
        netty.close();
        try (Stream<Path> all = Files.walk(dir)) {
            for (Path p : all.sorted(Comparator.reverseOrder()).toList()) {
                Files.deleteIfExists(p);
            }
        }
    }

    // --- the properties

    @Property(tries = 300, shrinking = ShrinkingMode.OFF)
    void randomBytesAfterTheHelloAreServedOrEndTheLinkWithARefusal(@ForAll @Size(max = 3000) byte[] junk)
            throws Exception {
        try (Case c = Case.open()) {
            c.write(junk);
            c.hangUpAndCheck(false);
        }
    }

    @Property(tries = 400, shrinking = ShrinkingMode.OFF)
    void linkMessagesValidOrNotAndMutatedAreServedOrEndTheLinkWithARefusal(
            @ForAll("messages") List<Message> messages, @ForAll("mutations") List<int[]> mutations,
            @ForAll boolean lengthsTold) throws Exception {
        try (Case c = Case.open()) {
            boolean inStep = true;
            for (int i = 0; i < messages.size(); i++) {
                byte[] frame = Codec.encode(messages.get(i));
                byte[] body = java.util.Arrays.copyOfRange(frame, Codec.HEADER, frame.length);
                for (int[] mu : mutations) {
                    if (Math.floorMod(mu[3], messages.size()) == i && body.length > 0) {
                        body = mutate(body, mu);
                    }
                }
                if (lengthsTold || body.length == frame.length - Codec.HEADER) {
                    c.write(ByteBuffer.allocate(Codec.HEADER + body.length).putInt(body.length).put(body).array());
                } else {
                    // the length the frame had before its body changed: the frames that follow are read out of step
                    c.write(ByteBuffer.allocate(Codec.HEADER + body.length)
                            .putInt(frame.length - Codec.HEADER).put(body).array());
                    inStep = false;
                }
            }
            c.hangUpAndCheck(inStep);
        }
    }

    /** Found by the property above: an empty Data frame is no bytes to write and no credit to send back. */
    @Example
    void anEmptyDataFrameIsServedAsNothing() throws Exception {
        try (Case c = Case.open()) {
            c.write(Codec.encode(new Message.NetOpen(1, 80)));
            c.write(Codec.encode(new Message.Data(1, Message.Stream.STDOUT, new byte[0])));
            c.write(Codec.encode(new Message.Data(1, Message.Stream.STDOUT,
                    REQUEST.getBytes(StandardCharsets.US_ASCII))));
            c.write(Codec.encode(new Message.Data(1, Message.Stream.STDOUT, new byte[0])));
            c.hangUpAndCheck(true);
        }
    }

    private static byte[] mutate(byte[] body, int[] mu) {
        int at = Math.floorMod(mu[1], body.length);
        return switch (mu[0]) {
            case 0 -> {
                byte[] b = body.clone();
                b[at] = (byte) mu[2];
                yield b;
            }
            case 1 -> java.util.Arrays.copyOf(body, at);
            default -> {
                byte[] grown = new byte[body.length + 1];
                System.arraycopy(body, 0, grown, 0, at);
                grown[at] = (byte) mu[2];
                System.arraycopy(body, at, grown, at + 1, body.length - at);
                yield grown;
            }
        };
    }

    @Provide
    Arbitrary<List<int[]>> mutations() {
        Arbitrary<int[]> one = Combinators.combine(Arbitraries.integers().between(0, 2), Arbitraries.integers(),
                Arbitraries.integers().between(0, 255), Arbitraries.integers())
                .as((a, b, c, d) -> new int[] {a, b, c, d});
        // often none, so that well-formed sequences reach the link's own judgment too
        return Arbitraries.oneOf(Arbitraries.just(List.of()), one.list().ofMinSize(1).ofMaxSize(3));
    }

    @Provide
    Arbitrary<List<Message>> messages() {
        Arbitrary<Integer> ch = Arbitraries.oneOf(Arbitraries.integers().between(1, 4),
                Arbitraries.just(Limits.MAX_CHANNEL));
        Arbitrary<Integer> port = Arbitraries.oneOf(Arbitraries.of(NetLink.PORTS),
                Arbitraries.of(22, 1, 65535, 8080));
        Arbitrary<Message.Stream> stream = Arbitraries.of(Message.Stream.class);
        Arbitrary<byte[]> bytes = Arbitraries.oneOf(
                Arbitraries.just(REQUEST.getBytes(StandardCharsets.US_ASCII)),
                Arbitraries.bytes().array(byte[].class).ofMaxSize(200),
                Arbitraries.integers().between(NetLink.CHUNK, Limits.MAX_DATA).map(byte[]::new));
        Arbitrary<Integer> credit = Arbitraries.oneOf(Arbitraries.integers().between(1, 4096),
                Arbitraries.integers().between(NetLink.WINDOW - 1, Limits.INITIAL_WINDOW),
                Arbitraries.integers().between(NetLink.DOWN_WINDOW - NetLink.OPEN_WINDOW - 2, NetLink.DOWN_WINDOW));
        Arbitrary<Message> one = Arbitraries.frequencyOf(
                net.jqwik.api.Tuple.of(4, Combinators.combine(ch, port).as(Message.NetOpen::new)),
                net.jqwik.api.Tuple.of(5, Combinators.combine(ch, stream, bytes).as(Message.Data::new)),
                net.jqwik.api.Tuple.of(2, Combinators.combine(ch, stream).as(Message.Eof::new)),
                net.jqwik.api.Tuple.of(2, Combinators.combine(ch, stream, credit).as(Message.Credit::new)),
                net.jqwik.api.Tuple.of(2, ch.map(Message.NetReset::new)),
                net.jqwik.api.Tuple.of(1, Arbitraries.just(new Message.NetWindowReady())),
                net.jqwik.api.Tuple.of(1, Combinators.combine(Arbitraries.integers().between(0, NetLink.SLOTS - 1),
                        Arbitraries.longs()).as(Message.NetWindowReturn::new)),
                net.jqwik.api.Tuple.of(1, Arbitraries.of(new Message.Hello(Limits.VERSION, "again", 0),
                        new Message.Ping(7), new Message.Exec(5, Message.ExecSpec.of("sh")),
                        new Message.Signal(1, 9), new Message.Exited(1, 0, 0))));
        return one.list().ofMinSize(1).ofMaxSize(12);
    }

    /** One fuzz case: a port, a link attached to it, and the test playing the agent after a proper Hello. */
    private static final class Case implements AutoCloseable {
        private final Path path;
        private final ServerSocketChannel port;
        private final GuestLink link;
        private final SocketChannel socket;
        private final LinkedBlockingQueue<String> log = new LinkedBlockingQueue<>();
        private final LinkedBlockingQueue<Optional<Message>> received = new LinkedBlockingQueue<>();
        private final long started = System.nanoTime();
        private boolean writable = true;
        /** The daemon has closed the link: nothing more will come. */
        private boolean closed;

        private Case(Path path, ServerSocketChannel port) throws Exception {
            this.path = path;
            this.port = port;
            Path window = path.resolveSibling(path.getFileName() + ".window");
            try (var f = java.nio.channels.FileChannel.open(window, java.nio.file.StandardOpenOption.CREATE_NEW,
                    java.nio.file.StandardOpenOption.WRITE)) {
                f.write(java.nio.ByteBuffer.allocate(1), NetLink.WINDOW_BYTES - 1);
            }
            this.link = broker.attach(path, window, log::add);
            this.socket = port.accept();
            FrameReader reader = new FrameReader(Channels.newInputStream(socket));
            Thread.ofVirtual().start(() -> {
                try {
                    Message m;
                    while ((m = reader.read()) != null) {
                        received.add(Optional.of(m));
                    }
                } catch (IOException closed) {
                    // the link ended
                }
                received.add(Optional.empty());
            });
            assertThat(next()).isInstanceOf(Message.Hello.class);
            write(Codec.encode(new Message.Hello(Limits.VERSION, "fuzz-agent", 0)));
            link.answered().get(10, TimeUnit.SECONDS);
        }

        static Case open() throws Exception {
            Path path = dir.resolve("net-" + System.nanoTime() + ".sock");
            ServerSocketChannel port = ServerSocketChannel.open(StandardProtocolFamily.UNIX);
            port.bind(UnixDomainSocketAddress.of(path));
            return new Case(path, port);
        }

        /** Writes what the guest sends; once the daemon has ended the link, nothing more goes. */
        void write(byte[] bytes) {
            if (!writable) {
                return;
            }
            try {
                ByteBuffer b = ByteBuffer.wrap(bytes);
                while (b.hasRemaining()) {
                    socket.write(b);
                }
            } catch (IOException ended) {
                writable = false;
            }
        }

        Message next() throws InterruptedException {
            Optional<Message> m = received.poll(10, TimeUnit.SECONDS);
            assertThat(m).as("the daemon answers or ends the link within 10 s").isNotNull();
            closed = m.isEmpty();
            return m.orElse(null);
        }

        /**
         * Checks the link after what the guest sent: if the frames are still in step, it either still serves (a
         * probe stream to a port with no listener is reset) or ended; then the guest hangs up, and the link ends,
         * with a refusal as its reason, its streams and broker connections gone.
         */
        void hangUpAndCheck(boolean inStep) throws Exception {
            boolean alive = false;
            if (inStep) {
                write(Codec.encode(new Message.NetOpen(PROBE, 22)));
                Message m;
                while ((m = next()) != null) {
                    if (m.equals(new Message.NetReset(PROBE))) {
                        alive = true;
                        break;
                    }
                }
            }
            // frames read out of step may leave the daemon waiting for the rest of one: only the guest's hanging up
            // says then whether the link was still up
            String endedBefore = inStep && !alive ? ended() : null;
            if (endedBefore != null) {
                assertThat(endedBefore).as("why the link ended").isNotBlank();
                if (DECODER_REFUSALS.stream().noneMatch(endedBefore::startsWith)) {
                    assertThat(endedBefore).as("a refusal, not an exception of the daemon's")
                            .doesNotMatch("^[A-Za-z.]*(Exception|Error): .*");
                }
            }
            try {
                socket.shutdownOutput();
            } catch (IOException already) {
                // the link is over
            }
            while (!closed && next() != null) {
                // what the daemon still sends, until it closes the link
            }
            String reason = endedBefore != null ? endedBefore : ended();
            if (endedBefore == null) {
                assertThat(reason).as("why the link ended once the guest hung up").isNotBlank();
                if (DECODER_REFUSALS.stream().noneMatch(reason::startsWith)) {
                    assertThat(reason).doesNotMatch("^[A-Za-z.]*(Exception|Error): .*");
                }
            }
            GuestLinkTest.waitFor(() -> link.streams() == 0, "no stream of the link stays open");
            GuestLinkTest.waitFor(() -> broker.openConnections() == 0, "no connection to the broker is left");
            List<String> seen = new ArrayList<>();
            for (String p; (p = problems.poll()) != null; ) {
                seen.add(p);
            }
            assertThat(seen).as("unhandled exceptions or leaks in Netty's log").isEmpty();
            assertThat(Duration.ofNanos(System.nanoTime() - started)).isLessThan(Duration.ofSeconds(20));
        }

        /** The reason the link ended, from the daemon's log, waiting a moment for it; null if it has not. */
        private String ended() throws InterruptedException {
            long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
            while (System.nanoTime() < deadline) {
                for (String l : log) {
                    if (l.startsWith("network link ended: ")) {
                        return l.substring("network link ended: ".length());
                    }
                }
                Thread.sleep(5);
            }
            return null;
        }

        @Override
        public void close() throws IOException {
            socket.close();
            port.close();
            Files.deleteIfExists(path);
            Files.deleteIfExists(path.resolveSibling(path.getFileName() + ".window"));
        }
    }
}
