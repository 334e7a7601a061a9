package dev.kosa8.egress;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kosa8.protocol.Limits;
import dev.kosa8.protocol.Message;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import java.io.ByteArrayOutputStream;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.channels.ServerSocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * A template's network rehearsal as the agent sees it: the port's Hello, a stream to the HTTP listener answered
 * with the body it was started with, and no other listener. The agent is played on the port's socket, as in
 * {@link GuestLinkTest}.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class NetRehearsalTest {
    @TempDir
    Path dir;
    EventLoopGroup group;
    ServerSocketChannel port;
    Path portSocket;
    GuestLinkTest.Agent agent;
    final LinkedBlockingQueue<String> log = new LinkedBlockingQueue<>();

    @BeforeEach
    void openPort() throws Exception {
        group = new MultiThreadIoEventLoopGroup(1, dev.kosa8.host.NettyTransport.CURRENT.ioHandler());
        portSocket = dir.resolve("net.sock");
        port = ServerSocketChannel.open(StandardProtocolFamily.UNIX);
        port.bind(UnixDomainSocketAddress.of(portSocket));
    }

    @AfterEach
    void close() throws Exception {
        if (agent != null) {
            agent.close();
        }
        port.close();
        group.shutdownGracefully(0, 1, TimeUnit.SECONDS).sync();
    }

    /** Starts a rehearsal on the port and answers its Hello. */
    NetRehearsal linked(long bytes) throws Exception {
        NetRehearsal r = NetRehearsal.start(dir.resolve("rehearsal"), bytes, portSocket, null, group, log::add);
        agent = new GuestLinkTest.Agent(port.accept());
        assertThat(agent.next()).isInstanceOf(Message.Hello.class);
        agent.send(new Message.Hello(Limits.VERSION, "test-agent", 0));
        assertThat(r.awaitLinked(Duration.ofSeconds(10))).isTrue();
        return r;
    }

    @Test
    void aRequestToTheHttpListenerIsAnsweredWithItsBodyAndTheConnectionEnds() throws Exception {
        long bytes = (3L << 20) + 5; // not a whole number of the rehearsal's writes, more than a window
        try (NetRehearsal r = linked(bytes)) {
            assertThat(r.url()).isEqualTo("http://" + Listener.GUEST_ADDRESS + "/");
            agent.send(new Message.NetOpen(1, 80));
            agent.send(new Message.Data(1, Message.Stream.STDOUT, GuestLinkTest.REQUEST.getBytes(
                    StandardCharsets.US_ASCII)));
            ByteArrayOutputStream got = new ByteArrayOutputStream();
            Message m;
            while (!((m = agent.next()) instanceof Message.Eof)) {
                if (m instanceof Message.Data d) {
                    got.write(d.bytes());
                    agent.send(new Message.Credit(1, Message.Stream.STDIN, d.bytes().length));
                }
            }
            assertThat(m).isEqualTo(new Message.Eof(1, Message.Stream.STDIN));
            byte[] all = got.toByteArray();
            String text = new String(all, StandardCharsets.ISO_8859_1);
            int body = text.indexOf("\r\n\r\n") + 4;
            assertThat(text).startsWith("HTTP/1.1 200 OK\r\n").contains("Content-Length: " + bytes + "\r\n");
            assertThat(all.length - body).isEqualTo(bytes);
            for (int i = body; i < all.length; i++) {
                if (all[i] != 0) {
                    throw new AssertionError("byte " + (i - body) + " of the body is " + all[i]);
                }
            }
            assertThat(r.served()).isEqualTo(bytes);
        }
    }

    @Test
    void everyOtherListenerIsAbsentAndAStreamToItIsReset() throws Exception {
        try (NetRehearsal r = linked(1024)) {
            int channel = 1;
            for (Listener l : Listener.values()) {
                if (l == Listener.HTTP) {
                    continue;
                }
                agent.send(new Message.NetOpen(channel, l.guestPort()));
                assertThat(agent.next()).as(l.name()).isEqualTo(new Message.NetReset(channel));
                channel++;
            }
            assertThat(r.served()).isZero();
        }
    }

    @Test
    void aStreamThatSendsNothingGetsNothingAndClosingWithADownloadUnderWayEndsIt() throws Exception {
        NetRehearsal r = linked(64L << 20);
        agent.send(new Message.NetOpen(1, 80)); // no request: no answer
        agent.send(new Message.NetOpen(2, 80));
        agent.send(new Message.Data(2, Message.Stream.STDOUT, GuestLinkTest.REQUEST.getBytes(
                StandardCharsets.US_ASCII)));
        long got = 0;
        // the opening window's worth of the second stream's answer (head included), never credited: under way
        while (got < dev.kosa8.protocol.NetLink.OPEN_WINDOW) {
            Message m = agent.next();
            assertThat(m).as("the silent stream is answered nothing").satisfies(x -> {
                if (x instanceof Message.Data d) {
                    assertThat(d.channel()).isEqualTo(2);
                }
            });
            if (m instanceof Message.Data d) {
                got += d.bytes().length;
            } else if (m instanceof Message.Credit) {
                continue; // the request's bytes, written on
            } else {
                break;
            }
        }
        r.close();
        Message m;
        while ((m = agent.next()) != null) {
            assertThat(m).as("only the streams' ends or the rest of what was sent before the close")
                    .isInstanceOfAny(Message.Data.class, Message.NetReset.class, Message.Credit.class);
        }
        assertThat(r.served()).as("the 64 MiB answer was cut short").isLessThan(64L << 20);
    }

    @Test
    void closingEndsTheLinkAndTakesItsSocket() throws Exception {
        NetRehearsal r = linked(1024);
        r.close();
        assertThat(agent.next()).as("the port's connection ends").isNull();
        assertThat(dir.resolve("rehearsal").resolve(Listener.HTTP.socketName())).doesNotExist();
        assertThat(Files.isDirectory(dir.resolve("rehearsal"))).isTrue();
    }
}
