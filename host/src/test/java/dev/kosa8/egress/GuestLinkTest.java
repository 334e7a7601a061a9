package dev.kosa8.egress;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kosa8.protocol.FrameReader;
import dev.kosa8.protocol.FrameWriter;
import dev.kosa8.protocol.Limits;
import dev.kosa8.protocol.Message;
import dev.kosa8.protocol.NetLink;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.channels.Channels;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The daemon's end of the network link, with this test as the agent on the
 * other side of the port (a unix socket, as QEMU's chardev is) and a real
 * broker and loopback server behind it.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class GuestLinkTest {
    @TempDir
    static Path dir;
    static EventLoopGroup group;
    static TestUpstream upstream;
    static Broker broker;
    static final LinkedBlockingQueue<String> daemonLog = new LinkedBlockingQueue<>();

    Path portSocket;
    ServerSocketChannel port;
    Agent agent;

    @BeforeAll
    static void start() throws Exception {
        group = new MultiThreadIoEventLoopGroup(1, dev.kosa8.host.NettyTransport.CURRENT.ioHandler());
        upstream = new TestUpstream(dir, "api.test");
        EgressTestSettings test = new EgressTestSettings(Map.of("api.test:80", upstream.httpPort()), Map.of(),
                Optional.empty());
        broker = Broker.start("sbx-link", dir.resolve("run"), new EgressPolicy(false, List.of(AllowRule.parse(
                "api.test"))), new AuditLog(dir.resolve("net.log"), m -> { }), Upstreams.system(test), null,
                dev.kosa8.egress.tls.UpstreamTls.clientContext(Optional.empty()), group);
    }

    @AfterAll
    static void stop() throws Exception {
        broker.close();
        upstream.close();
        group.shutdownGracefully(0, 1, TimeUnit.SECONDS).sync();
    }

    @BeforeEach
    void openPort() throws Exception {
        portSocket = dir.resolve("net-" + System.nanoTime() + ".sock");
        port = ServerSocketChannel.open(StandardProtocolFamily.UNIX);
        port.bind(UnixDomainSocketAddress.of(portSocket));
    }

    @AfterEach
    void closePort() throws IOException {
        if (agent != null) {
            agent.close();
        }
        port.close();
        Files.deleteIfExists(portSocket);
    }

    /** Attaches the broker to the port and plays the agent on the connection it makes: answers its Hello. */
    GuestLink attached() throws Exception {
        GuestLink link = broker.attach(portSocket, null, daemonLog::add);
        agent = new Agent(port.accept());
        assertThat(agent.next()).isInstanceOf(Message.Hello.class);
        agent.send(new Message.Hello(Limits.VERSION, "test-agent", 0));
        link.answered().get(10, TimeUnit.SECONDS);
        return link;
    }

    static final String REQUEST = "GET /hello HTTP/1.1\r\nHost: api.test\r\nConnection: close\r\n\r\n";

    @Test
    void aStreamIsAConnectionToTheBrokersSocketForItsPortAndCarriesBothWays() throws Exception {
        GuestLink link = attached();
        agent.send(new Message.NetOpen(1, 80));
        byte[] request = REQUEST.getBytes(StandardCharsets.US_ASCII);
        agent.send(new Message.Data(1, Message.Stream.STDOUT, request));
        ByteArrayOutputStream response = new ByteArrayOutputStream();
        boolean credited = false;
        while (true) {
            Message m = agent.next();
            if (m instanceof Message.Credit c) {
                assertThat(c).isEqualTo(new Message.Credit(1, Message.Stream.STDOUT, request.length));
                credited = true;
            } else if (m instanceof Message.Data d) {
                assertThat(d.channel()).isEqualTo(1);
                assertThat(d.stream()).isEqualTo(Message.Stream.STDIN);
                response.write(d.bytes());
                agent.send(new Message.Credit(1, Message.Stream.STDIN, d.bytes().length));
            } else {
                assertThat(m).isEqualTo(new Message.Eof(1, Message.Stream.STDIN));
                break;
            }
        }
        assertThat(credited).as("the request's bytes credited once written to the broker").isTrue();
        assertThat(response.toString(StandardCharsets.US_ASCII)).startsWith("HTTP/1.1 200")
                .endsWith("hello from api.test GET");
        agent.send(new Message.Eof(1, Message.Stream.STDOUT));
        waitFor(() -> link.streams() == 0, "the stream is forgotten once both ways ended");
        assertThat(Files.readString(dir.resolve("net.log"))).contains("\"listener\":\"http\"",
                "\"host\":\"api.test\"", "\"decision\":\"allow\"");
    }

    @Test
    void theBrokersBytesGoNoFurtherThanTheGuestsWindowUntilItCredits() throws Exception {
        attached();
        agent.send(new Message.NetOpen(3, 80));
        agent.send(new Message.Data(3, Message.Stream.STDOUT, ("GET /big?n=" + (2 * NetLink.DOWN_WINDOW)
                + " HTTP/1.1\r\nHost: api.test\r\n\r\n").getBytes(StandardCharsets.US_ASCII)));
        long got = 0;
        while (got < NetLink.OPEN_WINDOW) {
            Message m = agent.next();
            if (m instanceof Message.Data d) {
                assertThat(d.bytes().length).isLessThanOrEqualTo(NetLink.CHUNK);
                got += d.bytes().length;
            }
        }
        assertThat(got).as("a stream's window towards the guest opens small").isEqualTo(NetLink.OPEN_WINDOW);
        assertThat(agent.poll(Duration.ofMillis(500))).as("nothing past the window").isNull();
        agent.send(new Message.Credit(3, Message.Stream.STDIN, 4096));
        long more = 0;
        while (more < 4096) {
            more += ((Message.Data) agent.next()).bytes().length;
        }
        assertThat(more).isEqualTo(4096);
        assertThat(agent.poll(Duration.ofMillis(300))).isNull();
        // the agent grows the window, crediting more than it was sent, up to the most a window may be
        int grown = 4096 + NetLink.DOWN_WINDOW - NetLink.OPEN_WINDOW;
        agent.send(new Message.Credit(3, Message.Stream.STDIN, grown));
        more = 0;
        while (more < grown) {
            more += ((Message.Data) agent.next()).bytes().length;
        }
        assertThat(more).isEqualTo(grown);
        assertThat(agent.poll(Duration.ofMillis(300))).isNull();
    }

    /**
     * An answer that the broker ends while its stream has no window left: the daemon then reads the broker's
     * socket to its end and holds it all (more than one frame may carry). One credit opening the window wide
     * sends it on in frames of at most {@link NetLink#CHUNK}; the link lives on. (It sent the held bytes as one
     * frame, over {@link Limits#MAX_DATA}, which ended the link and every stream of the sandbox.)
     */
    @Test
    void anAnswerHeldWholeOnceTheBrokerEndedGoesOnInFramesAfterOneLargeCredit() throws Exception {
        GuestLink link = attached();
        int body = 200 * 1024;
        agent.send(new Message.NetOpen(5, 80));
        agent.send(new Message.Data(5, Message.Stream.STDOUT, ("GET /big?n=" + body
                + " HTTP/1.1\r\nHost: api.test\r\nConnection: close\r\n\r\n").getBytes(StandardCharsets.US_ASCII)));
        long got = 0;
        while (got < NetLink.OPEN_WINDOW) {
            if (agent.next() instanceof Message.Data d) {
                got += d.bytes().length;
            }
        }
        // the broker has ended the connection and the daemon read its socket to the end: more than a frame held
        waitFor(() -> link.buffered() > Limits.MAX_DATA, "the rest of the answer held in the daemon");
        agent.send(new Message.Credit(5, Message.Stream.STDIN, NetLink.DOWN_WINDOW - NetLink.OPEN_WINDOW));
        boolean ended = false;
        while (!ended) {
            Message m = agent.next();
            assertThat(m).as("the link carries on").isNotNull();
            if (m instanceof Message.Data d) {
                assertThat(d.bytes().length).isLessThanOrEqualTo(NetLink.CHUNK);
                got += d.bytes().length;
            } else if (m instanceof Message.Eof e) {
                assertThat(e).isEqualTo(new Message.Eof(5, Message.Stream.STDIN));
                ended = true;
            }
        }
        assertThat(got).as("the whole answer, headers and body").isGreaterThan(body);
        agent.send(new Message.Eof(5, Message.Stream.STDOUT));
        waitFor(() -> link.streams() == 0, "the stream over");
        // and the link still opens streams
        agent.send(new Message.NetOpen(6, 80));
        agent.send(new Message.Data(6, Message.Stream.STDOUT, REQUEST.getBytes(StandardCharsets.US_ASCII)));
        Message first;
        do {
            first = agent.next();
        } while (first instanceof Message.Credit);
        assertThat(first).isInstanceOf(Message.Data.class);
        agent.send(new Message.NetReset(6));
    }

    /** Attaches with a network window file, answers the Hello and says the agent reads the window. */
    GuestLink attachedWithWindow(Path window) throws Exception {
        try (var f = java.nio.channels.FileChannel.open(window, java.nio.file.StandardOpenOption.CREATE_NEW,
                java.nio.file.StandardOpenOption.WRITE)) {
            f.write(java.nio.ByteBuffer.allocate(1), NetLink.WINDOW_BYTES - 1);
        }
        GuestLink link = broker.attach(portSocket, window, daemonLog::add);
        agent = new Agent(port.accept());
        assertThat(agent.next()).isInstanceOf(Message.Hello.class);
        agent.send(new Message.Hello(Limits.VERSION, "test-agent", 0));
        agent.send(new Message.NetWindowReady());
        link.answered().get(10, TimeUnit.SECONDS);
        return link;
    }

    /** The bytes a NetWindowData points at, read from the window file as the guest reads its disk, header checked. */
    static byte[] slot(Path window, Message.NetWindowData d) throws IOException {
        try (var f = java.nio.channels.FileChannel.open(window)) {
            java.nio.ByteBuffer b = java.nio.ByteBuffer.allocate(NetLink.SLOT_HEADER + d.count())
                    .order(java.nio.ByteOrder.LITTLE_ENDIAN);
            f.read(b, (long) d.slot() * NetLink.SLOT_SIZE);
            assertThat(b.getLong(0)).as("the slot's header names its serial").isEqualTo(d.serial());
            assertThat(b.getInt(8)).isEqualTo(d.count());
            assertThat(b.getInt(12)).isEqualTo(d.channel());
            return java.util.Arrays.copyOfRange(b.array(), NetLink.SLOT_HEADER, NetLink.SLOT_HEADER + d.count());
        }
    }

    /**
     * With an agent that reads the network window, a download's larger pieces come through the window's slots,
     * each given back by the agent, and the bytes are exactly the broker's, in order: the same answer as through
     * the port.
     */
    @Test
    void largerPiecesComeThroughTheWindowAndTheAnswerIsWhole() throws Exception {
        Path window = dir.resolve("net-" + System.nanoTime() + ".window");
        GuestLink link = attachedWithWindow(window);
        int body = 4 << 20;
        agent.send(new Message.NetOpen(9, 80));
        agent.send(new Message.Data(9, Message.Stream.STDOUT, ("GET /pattern?n=" + body
                + " HTTP/1.1\r\nHost: api.test\r\nConnection: close\r\n\r\n").getBytes(StandardCharsets.US_ASCII)));
        ByteArrayOutputStream answer = new ByteArrayOutputStream();
        int throughWindow = 0;
        int granted = NetLink.OPEN_WINDOW;
        while (true) {
            Message m = agent.next();
            assertThat(m).as("the link carries on").isNotNull();
            byte[] bytes;
            if (m instanceof Message.NetWindowData d) {
                assertThat(d.channel()).isEqualTo(9);
                assertThat(d.count()).isGreaterThanOrEqualTo(NetWindow.THRESHOLD);
                bytes = slot(window, d);
                agent.send(new Message.NetWindowReturn(d.slot(), d.serial()));
                throughWindow += d.count();
            } else if (m instanceof Message.Data d) {
                bytes = d.bytes();
            } else if (m instanceof Message.Eof) {
                break;
            } else {
                continue;
            }
            answer.write(bytes);
            // grow the window as an agent does, to the most it may be
            int grow = Math.min(bytes.length, NetLink.DOWN_WINDOW - granted);
            granted += grow;
            agent.send(new Message.Credit(9, Message.Stream.STDIN, bytes.length + grow));
        }
        String text = answer.toString(StandardCharsets.ISO_8859_1);
        int start = text.indexOf("\r\n\r\n") + 4;
        assertThat(text).startsWith("HTTP/1.1 200");
        assertThat(answer.size() - start).as("the whole body").isEqualTo(body);
        byte[] all = answer.toByteArray();
        for (int i = 0; i < body; i++) {
            if (all[start + i] != TestUpstream.patternByte(i)) {
                throw new AssertionError("byte " + i + " of the body is not the broker's: a piece misplaced or lost");
            }
        }
        assertThat(throughWindow).as("pieces of it through the window").isPositive();
        agent.send(new Message.Eof(9, Message.Stream.STDOUT));
        waitFor(() -> link.streams() == 0, "the stream over");
    }

    /**
     * An agent that never gives a slot back costs speed, not the download: once every slot is lent the link sends
     * through the port, and a return under a wrong serial frees nothing.
     */
    @Test
    void anAgentThatKeepsEverySlotGetsTheRestThroughThePort() throws Exception {
        Path window = dir.resolve("net-" + System.nanoTime() + ".window");
        attachedWithWindow(window);
        int body = (NetLink.SLOTS + 8) * NetLink.SLOT_DATA;
        agent.send(new Message.NetOpen(11, 80));
        agent.send(new Message.Data(11, Message.Stream.STDOUT, ("GET /big?n=" + body
                + " HTTP/1.1\r\nHost: api.test\r\nConnection: close\r\n\r\n").getBytes(StandardCharsets.US_ASCII)));
        long got = 0;
        int lent = 0;
        int granted = NetLink.OPEN_WINDOW;
        boolean forged = false;
        while (true) {
            Message m = agent.next();
            assertThat(m).as("the link carries on").isNotNull();
            int n;
            if (m instanceof Message.NetWindowData d) {
                slot(window, d);
                n = d.count();
                lent++;
                if (!forged) {
                    forged = true;
                    agent.send(new Message.NetWindowReturn(d.slot(), d.serial() + 1)); // frees nothing
                }
            } else if (m instanceof Message.Data d) {
                n = d.bytes().length;
            } else if (m instanceof Message.Eof) {
                break;
            } else {
                continue;
            }
            got += n;
            int grow = Math.min(n, NetLink.DOWN_WINDOW - granted);
            granted += grow;
            agent.send(new Message.Credit(11, Message.Stream.STDIN, n + grow));
        }
        assertThat(lent).as("every slot lent once, none again").isEqualTo(NetLink.SLOTS);
        assertThat(got).isGreaterThan(body);
    }

    /** A credit that would open a window towards the guest past {@link NetLink#DOWN_WINDOW} breaks the protocol. */
    @Test
    void aCreditPastTheMostAWindowMayBeEndsTheLink() throws Exception {
        GuestLink link = attached();
        agent.send(new Message.NetOpen(8, 80));
        waitFor(() -> link.streams() == 1, "the stream is open");
        agent.send(new Message.Credit(8, Message.Stream.STDIN, NetLink.DOWN_WINDOW - NetLink.OPEN_WINDOW + 1));
        Message m;
        do {
            m = agent.next();
        } while (m != null);
        waitFor(() -> link.streams() == 0, "the link's streams are gone with it");
    }

    @Test
    void whatTheAgentSentBeforeAnsweringIsAnEarlierSessionsAndDropped() throws Exception {
        GuestLink link = broker.attach(portSocket, null, daemonLog::add);
        agent = new Agent(port.accept());
        assertThat(agent.next()).isInstanceOf(Message.Hello.class);
        // a restored machine's frames of its last session, still in the port
        agent.send(new Message.NetOpen(7, 80));
        agent.send(new Message.Data(7, Message.Stream.STDOUT, REQUEST.getBytes(StandardCharsets.US_ASCII)));
        agent.send(new Message.Hello(Limits.VERSION, "test-agent", 0));
        link.answered().get(10, TimeUnit.SECONDS);
        assertThat(agent.poll(Duration.ofMillis(500))).as("no answer to the old session").isNull();
        assertThat(link.streams()).isZero();
    }

    @Test
    void aPortWithNoListenerIsRefusedAndTheStreamsBeyondTheCapToo() throws Exception {
        GuestLink link = attached();
        agent.send(new Message.NetOpen(1, 22));
        assertThat(agent.next()).isEqualTo(new Message.NetReset(1));
        int threads = Thread.activeCount();
        for (int ch = 100; ch < 100 + Broker.MAX_CONNECTIONS; ch++) {
            agent.send(new Message.NetOpen(ch, 80));
        }
        waitFor(() -> link.streams() == Broker.MAX_CONNECTIONS, "every stream up to the cap is open");
        assertThat(agent.poll(Duration.ofMillis(300))).as("none of them refused").isNull();
        for (int ch = 1000; ch < 1300; ch++) {
            agent.send(new Message.NetOpen(ch, 80 + (ch % 2) * 363)); // 80 and 443
            assertThat(agent.next()).as("stream %d beyond the cap", ch).isEqualTo(new Message.NetReset(ch));
        }
        assertThat(Thread.activeCount()).as("no thread per stream").isLessThanOrEqualTo(threads + 1);
        String log = Files.readString(dir.resolve("net.log"));
        assertThat(log.split("more than 256 open connections", -1)).as("said once").hasSize(2);
        // DNS streams are counted apart, up to a cap of their own: names still resolve at the cap
        for (int ch = 3000; ch < 3000 + Broker.DNS_CONNECTIONS; ch++) {
            agent.send(new Message.NetOpen(ch, 53));
        }
        waitFor(() -> link.streams() == Broker.MAX_CONNECTIONS + Broker.DNS_CONNECTIONS, "the DNS streams are open");
        assertThat(agent.poll(Duration.ofMillis(300))).as("none of them refused").isNull();
        agent.send(new Message.NetOpen(3999, 53));
        assertThat(agent.next()).as("a DNS stream beyond its cap").isEqualTo(new Message.NetReset(3999));
        assertThat(Files.readString(dir.resolve("net.log"))).contains("more than 16 open DNS connections");
        // a stream ending makes room for the next
        agent.send(new Message.NetReset(100));
        waitFor(() -> link.streams() == Broker.MAX_CONNECTIONS + Broker.DNS_CONNECTIONS - 1, "the reset stream is gone");
        agent.send(new Message.NetOpen(2000, 80));
        waitFor(() -> link.streams() == Broker.MAX_CONNECTIONS + Broker.DNS_CONNECTIONS, "the new one is open");
        assertThat(agent.poll(Duration.ofMillis(300))).isNull();
    }

    @Test
    void aGuestThatBreaksTheProtocolLosesItsLinkAndItsStreams() throws Exception {
        GuestLink link = attached();
        agent.send(new Message.NetOpen(1, 80));
        waitFor(() -> link.streams() == 1, "the stream is open");
        agent.send(new Message.NetOpen(1, 80));
        assertThat(agent.next()).as("the link ends: end of file").isNull();
        waitFor(() -> daemonLog.stream().anyMatch(l -> l.equals("network link ended: stream 1 opened twice")),
                "the daemon's log says why");
        assertThat(link.streams()).isZero();
    }

    @Test
    void aGuestMayNotSendWhatOnlyTheHostSends() throws Exception {
        attached();
        agent.send(new Message.NetOpen(1, 80));
        agent.send(new Message.Data(1, Message.Stream.STDIN, new byte[] {1}));
        assertThat(agent.next()).isNull();
        agent.close();
        agent = null;
        attached();
        agent.send(new Message.Exec(5, Message.ExecSpec.of("sh")));
        assertThat(agent.next()).isNull();
    }

    @Test
    void aConnectionThatEndsBeforeTheAnswerIsMadeAgainAndAttachingAgainEndsTheLinkBefore() throws Exception {
        GuestLink link = broker.attach(portSocket, null, daemonLog::add);
        try (SocketChannel first = port.accept()) {
            // a frame cut in two at the end of the machine's last session: unreadable
            first.write(java.nio.ByteBuffer.wrap(new byte[] {0, 0, 0, 9, 99}));
        }
        agent = new Agent(port.accept());
        assertThat(agent.next()).isInstanceOf(Message.Hello.class);
        agent.send(new Message.Hello(Limits.VERSION, "test-agent", 0));
        link.answered().get(10, TimeUnit.SECONDS);

        Agent before = agent;
        try (ServerSocketChannel other = ServerSocketChannel.open(StandardProtocolFamily.UNIX)) {
            Path next = dir.resolve("net-next-" + System.nanoTime() + ".sock");
            other.bind(UnixDomainSocketAddress.of(next));
            broker.attach(next, null, daemonLog::add);
            assertThat(before.next()).as("the link to the machine before ends").isNull();
            try (Agent replaced = new Agent(other.accept())) {
                assertThat(replaced.next()).isInstanceOf(Message.Hello.class);
            }
        }
    }

    @Test
    void aGuestThatStopsReadingItsPortHoldsInTheDaemonThePortsBufferAndAReadPerStreamNotAWindowEach()
            throws Exception {
        stopsReadingItsPort(attached(), null);
    }

    /**
     * The same with an agent that said it reads the network window and then keeps every slot (it reads nothing): once
     * the slots are lent the link falls back to the port, and what the daemon holds is bounded as before.
     */
    @Test
    void anAgentThatKeepsEverySlotAndStopsReadingHoldsInTheDaemonNoMoreThanWithoutTheWindow() throws Exception {
        Path window = dir.resolve("net-" + System.nanoTime() + ".window");
        stopsReadingItsPort(attachedWithWindow(window), window);
    }

    private void stopsReadingItsPort(GuestLink link, Path window) throws Exception {
        int streams = 128;
        long answer = 2L * NetLink.WINDOW;
        // what the windows alone would let the daemon queue
        long offered = streams * Math.min(answer, NetLink.DOWN_WINDOW);
        long bound = GuestLink.HIGH_WATER + 2L * streams * NetLink.CHUNK;
        assertThat(offered).isGreaterThan(3 * bound);
        agent.paused = true;
        for (int ch = 1; ch <= streams; ch++) {
            agent.send(new Message.NetOpen(ch, 80));
            // the agent grows each window to its most, as it does for streams whose guests read
            agent.send(new Message.Credit(ch, Message.Stream.STDIN, NetLink.DOWN_WINDOW - NetLink.OPEN_WINDOW));
            agent.send(new Message.Data(ch, Message.Stream.STDOUT, ("GET /big?n=" + answer
                    + " HTTP/1.1\r\nHost: api.test\r\nConnection: close\r\n\r\n").getBytes(StandardCharsets.US_ASCII)));
        }
        waitFor(() -> link.streams() == streams, "every stream is open");
        // held: the daemon's bytes for the port climb to the bound and stay below it
        long held = 0;
        long before = -1;
        for (int settled = 0; settled < 5; ) {
            Thread.sleep(200);
            held = link.buffered();
            assertThat(held).as("bytes the daemon holds for a guest that does not read").isLessThanOrEqualTo(bound);
            settled = held == before ? settled + 1 : 0;
            before = held;
        }
        assertThat(held).as("the port's buffer is reached").isGreaterThanOrEqualTo(GuestLink.HIGH_WATER / 2);
        // nothing was lost: once the guest reads and credits, every stream's answer arrives whole
        agent.paused = false;
        java.util.Map<Integer, Long> got = new java.util.HashMap<>();
        int ended = 0;
        while (ended < streams) {
            Message m = agent.next();
            assertThat(m).as("the link carries on").isNotNull();
            if (m instanceof Message.Data d) {
                got.merge(d.channel(), (long) d.bytes().length, Long::sum);
                agent.send(new Message.Credit(d.channel(), Message.Stream.STDIN, d.bytes().length));
            } else if (m instanceof Message.NetWindowData d) {
                assertThat(window).as("window pieces only to an agent that reads the window").isNotNull();
                got.merge(d.channel(), (long) slot(window, d).length, Long::sum);
                agent.send(new Message.NetWindowReturn(d.slot(), d.serial()));
                agent.send(new Message.Credit(d.channel(), Message.Stream.STDIN, d.count()));
            } else if (m instanceof Message.Eof e) {
                ended++;
                agent.send(new Message.Eof(e.channel(), Message.Stream.STDOUT));
            }
        }
        assertThat(got).hasSize(streams);
        assertThat(got.values()).allSatisfy(n -> assertThat(n).isGreaterThan(answer));
        waitFor(() -> link.streams() == 0, "every stream over");
    }

    @Test
    void aGuestSendingPastItsWindowLosesItsLinkAndTheDaemonHoldsAtMostAWindowOfAStream() throws Exception {
        // an upstream that takes the connection and never reads: the broker stops reading the guest, and what the
        // guest sends then waits in the daemon, a window at most (a TLS stream passed through, since main intercepts
        // by default: HTTP bodies the broker gathers)
        try (java.net.ServerSocket silent = new java.net.ServerSocket(0, 50,
                java.net.InetAddress.getLoopbackAddress())) {
            java.util.List<java.net.Socket> taken = java.util.Collections.synchronizedList(new java.util.ArrayList<>());
            Thread.ofVirtual().start(() -> {
                try {
                    while (true) {
                        taken.add(silent.accept());
                    }
                } catch (IOException closed) {
                    // the test is over
                }
            });
            EgressTestSettings test = new EgressTestSettings(Map.of("sink.test:443", silent.getLocalPort()),
                    Map.of(), Optional.empty());
            try (Broker sink = Broker.start("sbx-sink", dir.resolve("run-sink"), new EgressPolicy(false,
                    List.of(AllowRule.parse("passthrough sink.test"))), new AuditLog(dir.resolve("sink.log"), m -> { }),
                    Upstreams.system(test), null, dev.kosa8.egress.tls.UpstreamTls.clientContext(Optional.empty()),
                    group)) {
                GuestLink link = sink.attach(portSocket, null, daemonLog::add);
                agent = new Agent(port.accept());
                assertThat(agent.next()).isInstanceOf(Message.Hello.class);
                agent.send(new Message.Hello(Limits.VERSION, "test-agent", 0));
                link.answered().get(10, TimeUnit.SECONDS);
                // TLS passed through to sink.test: after its ClientHello the broker relays the bytes as they come
                agent.send(new Message.NetOpen(1, 443));
                agent.send(new Message.Data(1, Message.Stream.STDOUT, BrokerFuzzTest.hello(new java.util.Random(1),
                        "sink.test")));
                byte[] chunk = new byte[NetLink.CHUNK];
                long outstanding = 0;
                long sent = 0;
                while (true) {
                    Message m = outstanding + chunk.length <= NetLink.WINDOW ? agent.poll(Duration.ZERO)
                            : agent.poll(Duration.ofSeconds(3));
                    if (m instanceof Message.Credit c) {
                        outstanding -= c.bytes();
                        continue;
                    }
                    assertThat(m).as("only credits come back: %s", m instanceof Message.Data d
                            ? new String(d.bytes(), StandardCharsets.ISO_8859_1) : m).isNull();
                    if (outstanding + chunk.length > NetLink.WINDOW) {
                        break; // no credit for 3 s: everything behind the stream is full
                    }
                    agent.send(new Message.Data(1, Message.Stream.STDOUT, chunk));
                    outstanding += chunk.length;
                    sent += chunk.length;
                    assertThat(sent).as("the upstream never reads: the path fills").isLessThan(256L << 20);
                }
                assertThat(link.buffered()).as("the guest's bytes the daemon holds for one stream")
                        .isGreaterThan(0).isLessThanOrEqualTo(NetLink.WINDOW);
                agent.send(new Message.Data(1, Message.Stream.STDOUT,
                        new byte[(int) (NetLink.WINDOW - outstanding) + 1]));
                Message m;
                while ((m = agent.next()) instanceof Message.Credit c) {
                    // a credit already on its way when the loop gave up (3 s is short on a loaded host): the daemon
                    // counted that much less outstanding, so the guest sends it too, and is again one byte past
                    for (int left = c.bytes(); left > 0; left -= Math.min(left, NetLink.CHUNK)) {
                        agent.send(new Message.Data(1, Message.Stream.STDOUT, new byte[Math.min(left, NetLink.CHUNK)]));
                    }
                }
                assertThat(m).as("the link ends").isNull();
                waitFor(() -> daemonLog.stream().anyMatch(l -> l.startsWith("network link ended: peer sent ")
                        && l.endsWith(" bytes beyond its window of " + NetLink.WINDOW)), "the daemon's log says why");
                waitFor(() -> sink.openConnections() == 0, "the stream's broker connection is closed");
            } finally {
                for (java.net.Socket t : taken) {
                    t.close();
                }
            }
        }
    }

    interface Check {
        boolean ok() throws Exception;
    }

    static void waitFor(Check check, String what) throws Exception {
        long deadline = System.nanoTime() + Duration.ofSeconds(20).toNanos();
        while (!check.ok()) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("timed out waiting: " + what);
            }
            Thread.sleep(10);
        }
    }

    /** The agent's side of the port, played by the test. */
    static final class Agent implements AutoCloseable {
        private final SocketChannel socket;
        private final FrameWriter writer;
        private final LinkedBlockingQueue<Optional<Message>> received = new LinkedBlockingQueue<>();
        /** While set, the agent reads no more of the port (after the frame it may be waiting for). */
        volatile boolean paused;

        Agent(SocketChannel socket) {
            this.socket = socket;
            this.writer = new FrameWriter(Channels.newOutputStream(socket));
            FrameReader reader = new FrameReader(Channels.newInputStream(socket));
            Thread.ofVirtual().start(() -> {
                try {
                    Message m;
                    while ((m = reader.read()) != null) {
                        received.add(Optional.of(m));
                        while (paused) {
                            Thread.sleep(10);
                        }
                    }
                } catch (IOException | InterruptedException ignored) {
                    // closed
                }
                received.add(Optional.empty());
            });
        }

        void send(Message m) throws IOException {
            writer.write(m);
        }

        /** The next message, or null at the end of the connection. */
        Message next() throws InterruptedException {
            Optional<Message> m = received.poll(20, TimeUnit.SECONDS);
            if (m == null) {
                throw new AssertionError("nothing from the daemon within 20 s");
            }
            return m.orElse(null);
        }

        Message poll(Duration d) throws InterruptedException {
            Optional<Message> m = received.poll(d.toMillis(), TimeUnit.MILLISECONDS);
            return m == null ? null : m.orElse(null);
        }

        @Override
        public void close() throws IOException {
            socket.close();
        }
    }
}
