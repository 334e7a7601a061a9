package dev.kosa8.ports;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.kosa8.host.KosaException;
import dev.kosa8.protocol.Message;
import dev.kosa8.protocol.PortLink;
import dev.kosa8.vm.AgentConnection;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.SocketException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Published ports in the daemon, against a fake agent behind a real agent connection: bytes both ways, the
 * caps, a host port in use, a sandbox not running, and a guest that breaks a port stream's rules.
 */
class SandboxPortsTest {
    @TempDir
    Path dir;

    final List<String> log = new CopyOnWriteArrayList<>();

    private SandboxPorts ports(AgentConnection agent, PortLimits limits) {
        return new SandboxPorts("3f2a", () -> agent, limits, log::add);
    }

    private static Socket connect(PortMapping m) throws IOException {
        Socket s = new Socket(InetAddress.getByName(m.hostAddress()), m.hostPort());
        s.setSoTimeout(10_000);
        return s;
    }

    /** Whether the host reset the connection: a read sees the reset, or the end at once with nothing. */
    private static boolean resetByHost(Socket s) {
        try {
            return s.getInputStream().read() < 0;
        } catch (SocketException e) {
            return e.getMessage().contains("reset");
        } catch (IOException e) {
            return false;
        }
    }

    private static void await(BooleanSupplier c) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (!c.getAsBoolean() && System.nanoTime() < deadline) {
            Thread.sleep(10);
        }
        assertThat(c.getAsBoolean()).isTrue();
    }

    @Test
    void aPublishedPortCarriesAClientsBytesToTheGuestAndBackOnTheHostsLoopback() throws Exception {
        try (FakeAgent agent = new FakeAgent(dir, FakeAgent.ECHO); SandboxPorts p = ports(agent.connection,
                PortLimits.DEFAULT)) {
            PortMapping m = p.publish(PortMapping.loopback(8000, 0));
            assertThat(m.hostPort()).isPositive();
            assertThat(m.hostAddress()).isEqualTo("127.0.0.1");
            byte[] big = new byte[3 * PortLink.WINDOW + 17];
            new java.util.Random(1).nextBytes(big);
            try (Socket s = connect(m)) {
                Thread.ofVirtual().start(() -> {
                    try {
                        s.getOutputStream().write(big);
                        s.shutdownOutput();
                    } catch (IOException ignored) {
                        // the read below fails then
                    }
                });
                assertThat(s.getInputStream().readAllBytes()).isEqualTo(big);
            }
            assertThat(agent.received).anyMatch(x -> x instanceof Message.Connect c && c.port() == 8000);
            await(() -> p.list().getFirst().connections() == 0);
        }
    }

    @Test
    void aHostPortInUseIsAClearErrorThatSaysWhatToDo() throws Exception {
        try (FakeAgent agent = new FakeAgent(dir, FakeAgent.ECHO); SandboxPorts p = ports(agent.connection,
                PortLimits.DEFAULT); ServerSocket taken = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            assertThatThrownBy(() -> p.publish(PortMapping.loopback(80, taken.getLocalPort())))
                    .isInstanceOf(KosaException.class)
                    .hasMessage("host port " + taken.getLocalPort() + " on 127.0.0.1 is already in use by another "
                            + "program")
                    .satisfies(e -> assertThat(((KosaException) e).suggestion()).isEqualTo("choose another host port"
                            + " (`kosa8 port 3f2a 80 HOST_PORT`), or leave it out and kosa8 picks a free one"));
            assertThat(p.mappings()).isEmpty();
            PortMapping first = p.publish(PortMapping.loopback(80, 0));
            assertThatThrownBy(() -> p.publish(PortMapping.loopback(81, first.hostPort())))
                    .isInstanceOf(KosaException.class)
                    .hasMessage("host port " + first.hostPort() + " already publishes guest port 80 of sandbox 3f2a");
        }
    }

    @Test
    void connectionsBeyondAPortsCapAreResetAtOnceAndItsSlotComesBackWhenOneEnds() throws Exception {
        FakeAgent.Guest holds = (ch, out) -> out.send(new Message.Started(ch, 0)); // echoes, never ends on its own
        try (FakeAgent agent = new FakeAgent(dir, holds); SandboxPorts p = ports(agent.connection,
                new PortLimits(2, 10, 4))) {
            PortMapping m = p.publish(PortMapping.loopback(80, 0));
            Socket a = connect(m);
            Socket b = connect(m);
            await(() -> p.list().getFirst().connections() == 2);
            try (Socket c = connect(m)) {
                assertThat(resetByHost(c)).isTrue();
            }
            assertThat(log).anyMatch(l -> l.contains("at its cap of open connections"));
            a.shutdownOutput(); // the echoing guest ends the stream on the host's Eof
            assertThat(a.getInputStream().read()).isEqualTo(-1);
            a.close();
            await(() -> p.list().getFirst().connections() == 1);
            try (Socket d = connect(m)) {
                d.getOutputStream().write("ok".getBytes(StandardCharsets.US_ASCII));
                assertThat(new String(d.getInputStream().readNBytes(2), StandardCharsets.US_ASCII)).isEqualTo("ok");
            }
            b.close();
        }
    }

    @Test
    void connectionsBeyondASandboxsCapAreResetWhicheverOfItsPortsTheyCometo() throws Exception {
        FakeAgent.Guest holds = (ch, out) -> out.send(new Message.Started(ch, 0));
        try (FakeAgent agent = new FakeAgent(dir, holds); SandboxPorts p = ports(agent.connection,
                new PortLimits(2, 3, 4))) {
            PortMapping one = p.publish(PortMapping.loopback(80, 0));
            PortMapping two = p.publish(PortMapping.loopback(81, 0));
            List<Socket> held = List.of(connect(one), connect(one), connect(two));
            await(() -> p.list().stream().mapToInt(SandboxPorts.Published::connections).sum() == 3);
            try (Socket fourth = connect(two)) {
                assertThat(resetByHost(fourth)).isTrue();
            }
            for (Socket s : held) {
                s.close();
            }
        }
    }

    @Test
    void aSandboxMayPublishSoManyPortsAndIsToldHowToFreeOne() throws Exception {
        try (FakeAgent agent = new FakeAgent(dir, FakeAgent.ECHO); SandboxPorts p = ports(agent.connection,
                new PortLimits(2, 3, 2))) {
            p.publish(PortMapping.loopback(80, 0));
            p.publish(PortMapping.loopback(81, 0));
            assertThatThrownBy(() -> p.publish(PortMapping.loopback(82, 0))).isInstanceOf(KosaException.class)
                    .hasMessage("sandbox 3f2a has 2 published ports, the most it may have")
                    .satisfies(e -> assertThat(((KosaException) e).kind()).isEqualTo(KosaException.Kind.LIMIT));
        }
    }

    @Test
    void aConnectionWhileTheSandboxIsNotRunningIsResetAndNothingIsAsked() throws Exception {
        try (SandboxPorts p = new SandboxPorts("3f2a", () -> null, PortLimits.DEFAULT, log::add)) {
            PortMapping m = p.publish(PortMapping.loopback(80, 0));
            try (Socket s = connect(m)) {
                assertThat(resetByHost(s)).isTrue();
            }
        }
    }

    @Test
    void nothingListeningInTheGuestResetsTheClient() throws Exception {
        FakeAgent.Guest refuses = (ch, out) -> out.send(new Message.Failed(ch, Message.ErrorCode.NOT_FOUND,
                "nothing listens on port 80 in the sandbox (on 127.0.0.1 or ::1)"));
        try (FakeAgent agent = new FakeAgent(dir, refuses); SandboxPorts p = ports(agent.connection,
                PortLimits.DEFAULT)) {
            PortMapping m = p.publish(PortMapping.loopback(80, 0));
            try (Socket s = connect(m)) {
                assertThat(resetByHost(s)).isTrue();
            }
            await(() -> p.list().getFirst().connections() == 0);
        }
    }

    /** The sandbox removed (or the daemon leaving): every port closes, its connections reset, its host port free. */
    @Test
    void closingResetsEveryConnectionAndFreesEveryHostPort() throws Exception {
        FakeAgent.Guest holds = (ch, out) -> out.send(new Message.Started(ch, 0));
        try (FakeAgent agent = new FakeAgent(dir, holds)) {
            SandboxPorts p = ports(agent.connection, PortLimits.DEFAULT);
            PortMapping a = p.publish(PortMapping.loopback(8000, 0));
            PortMapping b = p.publish(PortMapping.loopback(8001, 0));
            try (Socket s = connect(a)) {
                await(() -> p.list().getFirst().connections() == 1);
                p.close();
                assertThat(resetByHost(s)).isTrue();
            }
            assertThat(p.mappings()).isEmpty();
            for (PortMapping m : List.of(a, b)) {
                try (ServerSocket again = new ServerSocket(m.hostPort(), 1, InetAddress.getLoopbackAddress())) {
                    assertThat(again.getLocalPort()).isEqualTo(m.hostPort());
                }
            }
        }
    }

    @Test
    void unpublishingByEitherPortResetsItsConnectionsAndFreesTheHostPort() throws Exception {
        FakeAgent.Guest holds = (ch, out) -> out.send(new Message.Started(ch, 0));
        try (FakeAgent agent = new FakeAgent(dir, holds); SandboxPorts p = ports(agent.connection,
                PortLimits.DEFAULT)) {
            PortMapping m = p.publish(PortMapping.loopback(80, 0));
            PortMapping other = p.publish(PortMapping.loopback(90, 0));
            try (Socket s = connect(m)) {
                await(() -> p.list().getFirst().connections() == 1);
                assertThat(p.unpublish(m.hostPort())).containsExactly(m);
                assertThat(resetByHost(s)).isTrue();
            }
            try (ServerSocket again = new ServerSocket(m.hostPort(), 1, InetAddress.getLoopbackAddress())) {
                assertThat(again.getLocalPort()).isEqualTo(m.hostPort());
            }
            assertThat(p.unpublish(90)).containsExactly(other);
            assertThatThrownBy(() -> p.unpublish(90)).isInstanceOf(KosaException.class)
                    .hasMessage("sandbox 3f2a publishes no port 90");
        }
    }

    @Test
    void aGuestSendingWhatAPortsStreamDoesNotCarryHasTheStreamResetAndLogged() throws Exception {
        List<FakeAgent.Guest> hostile = List.of(
                (ch, out) -> {
                    out.send(new Message.Started(ch, 0));
                    out.send(new Message.Data(ch, Message.Stream.STDERR, new byte[] {1}));
                },
                (ch, out) -> {
                    out.send(new Message.Started(ch, 0));
                    out.send(new Message.Started(ch, 0));
                },
                (ch, out) -> {
                    out.send(new Message.Started(ch, 0));
                    out.send(new Message.FileInfo(ch, 1, 0644));
                },
                (ch, out) -> {
                    out.send(new Message.Started(ch, 0));
                    out.send(new Message.Eof(ch, Message.Stream.STDOUT));
                    out.send(new Message.Data(ch, Message.Stream.STDOUT, new byte[] {1}));
                },
                (ch, out) -> out.send(new Message.Data(ch, Message.Stream.STDOUT, new byte[] {1}))); // before Started
        int i = 0;
        for (FakeAgent.Guest g : hostile) {
            log.clear();
            java.nio.file.Files.createDirectories(dir.resolve("g" + i));
            try (FakeAgent agent = new FakeAgent(dir.resolve("g" + i), g); SandboxPorts p = ports(agent.connection,
                    PortLimits.DEFAULT)) {
                PortMapping m = p.publish(PortMapping.loopback(80, 0));
                try (Socket s = connect(m)) {
                    assertThat(resetByHost(s)).as("guest " + i).isTrue();
                }
                await(() -> p.list().getFirst().connections() == 0);
                assertThat(log).as("guest " + i).anyMatch(l -> l.contains("which a port's stream does not carry"));
                await(() -> agent.received.stream().anyMatch(x -> x instanceof Message.Signal));
                assertThat(agent.connection.isOpen()).as("the agent connection goes on").isTrue();
            }
            i++;
        }
    }

    @Test
    void aGuestSendingPastItsWindowLosesItsAgentConnectionAndTheClientIsReset() throws Exception {
        long flood = 64L << 20;
        FakeAgent.Guest floods = (ch, out) -> {
            out.send(new Message.Started(ch, 0));
            for (long sent = 0; sent < flood; sent += PortLink.CHUNK) {
                out.send(new Message.Data(ch, Message.Stream.STDOUT, new byte[PortLink.CHUNK]));
            }
        };
        try (FakeAgent agent = new FakeAgent(dir, floods); SandboxPorts p = ports(agent.connection,
                PortLimits.DEFAULT)) {
            PortMapping m = p.publish(PortMapping.loopback(80, 0));
            try (Socket s = connect(m)) {
                // the client does not read: once its socket's buffers are full the daemon credits nothing more, and
                // a guest that sends on anyway breaks the protocol
                assertThat(agent.connection.closedFuture().get(10, TimeUnit.SECONDS)).contains("beyond its window of "
                        + PortLink.WINDOW);
                long got = 0;
                try {
                    InputStream in = s.getInputStream();
                    byte[] b = new byte[1 << 16];
                    for (int n; (n = in.read(b)) >= 0; ) {
                        got += n;
                    }
                } catch (SocketException reset) {
                    assertThat(reset.getMessage()).contains("reset");
                }
                assertThat(got).isLessThan(flood);
            }
            await(() -> p.list().getFirst().connections() == 0);
        }
    }
}
