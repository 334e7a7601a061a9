package dev.kosa8.egress;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kosa8.protocol.FrameReader;
import dev.kosa8.protocol.FrameWriter;
import dev.kosa8.protocol.Limits;
import dev.kosa8.protocol.Message;
import dev.kosa8.protocol.NetLink;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.epoll.EpollIoHandler;
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
        group = new MultiThreadIoEventLoopGroup(1, EpollIoHandler.newFactory());
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
        GuestLink link = broker.attach(portSocket, daemonLog::add);
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
        agent.send(new Message.Data(3, Message.Stream.STDOUT, ("GET /big?n=" + (4 * NetLink.WINDOW)
                + " HTTP/1.1\r\nHost: api.test\r\n\r\n").getBytes(StandardCharsets.US_ASCII)));
        long got = 0;
        while (got < NetLink.WINDOW) {
            Message m = agent.next();
            if (m instanceof Message.Data d) {
                assertThat(d.bytes().length).isLessThanOrEqualTo(NetLink.CHUNK);
                got += d.bytes().length;
            }
        }
        assertThat(got).isEqualTo(NetLink.WINDOW);
        assertThat(agent.poll(Duration.ofMillis(500))).as("nothing past the window").isNull();
        agent.send(new Message.Credit(3, Message.Stream.STDIN, 4096));
        long more = 0;
        while (more < 4096) {
            more += ((Message.Data) agent.next()).bytes().length;
        }
        assertThat(more).isEqualTo(4096);
        assertThat(agent.poll(Duration.ofMillis(300))).isNull();
    }

    @Test
    void whatTheAgentSentBeforeAnsweringIsAnEarlierSessionsAndDropped() throws Exception {
        GuestLink link = broker.attach(portSocket, daemonLog::add);
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
            agent.send(new Message.NetOpen(ch, 53));
        }
        waitFor(() -> link.streams() == Broker.MAX_CONNECTIONS, "every stream up to the cap is open");
        assertThat(agent.poll(Duration.ofMillis(300))).as("none of them refused").isNull();
        for (int ch = 1000; ch < 1300; ch++) {
            agent.send(new Message.NetOpen(ch, 53));
            assertThat(agent.next()).as("stream %d beyond the cap", ch).isEqualTo(new Message.NetReset(ch));
        }
        assertThat(Thread.activeCount()).as("no thread per stream").isLessThanOrEqualTo(threads + 1);
        String log = Files.readString(dir.resolve("net.log"));
        assertThat(log.split("more than 256 open connections", -1)).as("said once").hasSize(2);
        // a stream ending makes room for the next
        agent.send(new Message.NetReset(100));
        waitFor(() -> link.streams() == Broker.MAX_CONNECTIONS - 1, "the reset stream is gone");
        agent.send(new Message.NetOpen(2000, 53));
        waitFor(() -> link.streams() == Broker.MAX_CONNECTIONS, "the new one is open");
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
        GuestLink link = broker.attach(portSocket, daemonLog::add);
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
            broker.attach(next, daemonLog::add);
            assertThat(before.next()).as("the link to the machine before ends").isNull();
            try (Agent replaced = new Agent(other.accept())) {
                assertThat(replaced.next()).isInstanceOf(Message.Hello.class);
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

        Agent(SocketChannel socket) {
            this.socket = socket;
            this.writer = new FrameWriter(Channels.newOutputStream(socket));
            FrameReader reader = new FrameReader(Channels.newInputStream(socket));
            Thread.ofVirtual().start(() -> {
                try {
                    Message m;
                    while ((m = reader.read()) != null) {
                        received.add(Optional.of(m));
                    }
                } catch (IOException ignored) {
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
