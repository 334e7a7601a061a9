package dev.kosa8.agent;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kosa8.protocol.Message;
import dev.kosa8.protocol.PortLink;
import java.io.ByteArrayOutputStream;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;
import org.junit.jupiter.api.Test;

/** The agent's end of a published port, against real loopback services and a recording host. */
class PortChannelTest {
    private static final class Host implements Outbox {
        final List<Message> sent = new CopyOnWriteArrayList<>();
        volatile boolean done;

        @Override
        public boolean send(Message m) {
            sent.add(m);
            return true;
        }

        @Override
        public void done(int channel) {
            done = true;
        }

        Message await(Predicate<Message> p) throws InterruptedException {
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            while (System.nanoTime() < deadline) {
                for (Message m : sent) {
                    if (p.test(m)) {
                        return m;
                    }
                }
                Thread.sleep(5);
            }
            throw new AssertionError("no such message; sent: " + sent);
        }

        byte[] stdout() {
            ByteArrayOutputStream out = new ByteArrayOutputStream();
            for (Message m : sent) {
                if (m instanceof Message.Data d && d.stream() == Message.Stream.STDOUT) {
                    out.writeBytes(d.bytes());
                }
            }
            return out.toByteArray();
        }
    }

    @Test
    void aConnectionIsCarriedBothWaysAndEndsWithExitedOnceBothSidesClosed() throws Exception {
        try (ServerSocket server = new ServerSocket(0, 5, InetAddress.getLoopbackAddress())) {
            Thread.ofVirtual().start(() -> {
                try (Socket s = server.accept()) {
                    byte[] got = s.getInputStream().readAllBytes();
                    s.getOutputStream().write(("echo:" + new String(got)).getBytes());
                } catch (Exception ignored) {
                    // the test fails on what it does not receive
                }
            });
            Host host = new Host();
            PortChannel c = PortChannel.start(new Message.Connect(3, server.getLocalPort()), host);
            host.await(m -> m instanceof Message.Started s && s.channel() == 3);
            c.onData("hello".getBytes());
            c.onEof();
            host.await(m -> m instanceof Message.Credit cr && cr.stream() == Message.Stream.STDIN && cr.bytes() == 5);
            host.await(m -> m instanceof Message.Exited x && x.channel() == 3 && x.exitCode() == 0);
            assertThat(new String(host.stdout())).isEqualTo("echo:hello");
            assertThat(host.sent).anyMatch(m -> m instanceof Message.Eof e && e.stream() == Message.Stream.STDOUT);
            assertThat(host.done).isTrue();
        }
    }

    @Test
    void aPortNobodyListensOnFailsSayingSoAndTheChannelIsDone() throws Exception {
        int port;
        try (ServerSocket free = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            port = free.getLocalPort();
        }
        Host host = new Host();
        PortChannel c = PortChannel.start(new Message.Connect(4, port), host);
        c.onData("early bytes, before the connect failed".getBytes());
        Message.Failed f = (Message.Failed) host.await(m -> m instanceof Message.Failed);
        assertThat(f.code()).isEqualTo(Message.ErrorCode.NOT_FOUND);
        assertThat(f.message()).isEqualTo("nothing listens on port " + port + " in the sandbox (on 127.0.0.1 or ::1)");
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
        while (!host.done && System.nanoTime() < deadline) {
            Thread.sleep(5);
        }
        assertThat(host.done).isTrue();
        assertThat(host.sent).noneMatch(m -> m instanceof Message.Started);
    }

    @Test
    void theGuestsBytesStopAtTheWindowUntilTheHostCreditsThem() throws Exception {
        int total = 3 * PortLink.WINDOW;
        try (ServerSocket server = new ServerSocket(0, 5, InetAddress.getLoopbackAddress())) {
            Thread.ofVirtual().start(() -> {
                try (Socket s = server.accept(); OutputStream out = s.getOutputStream()) {
                    out.write(new byte[total]);
                    s.getInputStream().read();
                } catch (Exception ignored) {
                    // the host resets it at the end
                }
            });
            Host host = new Host();
            PortChannel c = PortChannel.start(new Message.Connect(5, server.getLocalPort()), host);
            host.await(m -> m instanceof Message.Started);
            Thread.sleep(500);
            assertThat(host.stdout().length).isEqualTo(PortLink.WINDOW);
            assertThat(host.sent).allMatch(m -> !(m instanceof Message.Data d) || d.bytes().length <= PortLink.CHUNK);
            c.onCredit(Message.Stream.STDOUT, PortLink.WINDOW);
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
            while (host.stdout().length < 2 * PortLink.WINDOW && System.nanoTime() < deadline) {
                Thread.sleep(5);
            }
            Thread.sleep(200);
            assertThat(host.stdout().length).isEqualTo(2 * PortLink.WINDOW);
            c.onSignal(9);
            host.await(m -> m instanceof Message.Exited || m instanceof Message.Failed);
        }
    }

    @Test
    void aSignalFromTheHostResetsTheGuestsConnection() throws Exception {
        try (ServerSocket server = new ServerSocket(0, 5, InetAddress.getLoopbackAddress())) {
            var seen = new java.util.concurrent.CompletableFuture<Throwable>();
            Thread.ofVirtual().start(() -> {
                try (Socket s = server.accept(); InputStream in = s.getInputStream()) {
                    in.read();
                    seen.complete(null);
                } catch (Exception e) {
                    seen.complete(e);
                }
            });
            Host host = new Host();
            PortChannel c = PortChannel.start(new Message.Connect(6, server.getLocalPort()), host);
            host.await(m -> m instanceof Message.Started);
            c.onSignal(1);
            assertThat(seen.get(5, TimeUnit.SECONDS)).isInstanceOf(java.net.SocketException.class)
                    .hasMessageContaining("reset");
        }
    }
}
