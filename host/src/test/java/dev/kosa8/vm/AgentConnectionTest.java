package dev.kosa8.vm;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kosa8.protocol.Codec;
import dev.kosa8.protocol.FrameReader;
import dev.kosa8.protocol.Limits;
import dev.kosa8.protocol.Message;
import java.io.OutputStream;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.channels.Channels;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.Size;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The host's end of the agent protocol against a hostile guest: a fake agent
 * on a unix socket that answers the handshake, then misbehaves.
 */
class AgentConnectionTest {
    @TempDir
    Path dir;

    /** A fake guest: accepts, answers Hello, then runs {@code behaviour} with the raw output stream. */
    interface Behaviour {
        void run(OutputStream out, FrameReader in) throws Exception;
    }

    AgentConnection connectTo(Path socket, Behaviour behaviour) throws Exception {
        ServerSocketChannel server = ServerSocketChannel.open(StandardProtocolFamily.UNIX);
        server.bind(UnixDomainSocketAddress.of(socket));
        Thread.ofVirtual().start(() -> {
            try (SocketChannel ch = server.accept()) {
                OutputStream out = Channels.newOutputStream(ch);
                FrameReader in = new FrameReader(Channels.newInputStream(ch));
                in.read(); // the host's Hello
                out.write(Codec.encode(new Message.Hello(Limits.VERSION, "fake", 1)));
                behaviour.run(out, in);
                Thread.sleep(200);
            } catch (Exception ignored) {
                // the host hung up on us, as it should
            } finally {
                try {
                    server.close();
                } catch (Exception ignored) {
                    // closing anyway
                }
            }
        });
        return AgentConnection.connect(socket, Duration.ofSeconds(10), () -> true);
    }

    @Test
    void aThawQueuedBehindTheHelloReachesTheAgentBeforeItAnswersTheHello() throws Exception {
        // the guest reads both messages before it says anything: a host that waited for the Hello's answer before
        // sending the thaw would wait forever here
        Path socket = dir.resolve("w.sock");
        ServerSocketChannel server = ServerSocketChannel.open(StandardProtocolFamily.UNIX);
        server.bind(UnixDomainSocketAddress.of(socket));
        List<Message> received = new CopyOnWriteArrayList<>();
        Thread.ofVirtual().start(() -> {
            try (server; SocketChannel ch = server.accept()) {
                OutputStream out = Channels.newOutputStream(ch);
                FrameReader in = new FrameReader(Channels.newInputStream(ch));
                received.add(in.read());
                Message.Thaw thaw = (Message.Thaw) in.read();
                received.add(thaw);
                out.write(Codec.encode(new Message.Hello(Limits.VERSION, "fake", 1)));
                out.write(Codec.encode(new Message.Exited(thaw.channel(), 0, 0)));
                Thread.sleep(200);
            } catch (Exception ignored) {
                // the host hung up
            }
        });
        byte[] seed = new byte[64];
        GuestCommand.Pending[] thaw = new GuestCommand.Pending[1];
        AgentConnection c = AgentConnection.connect(socket, Duration.ofSeconds(5), () -> true,
                agent -> thaw[0] = GuestCommand.thawLater(agent, 1234, seed));
        thaw[0].await(Duration.ofSeconds(5), "no thaw");
        assertThat(received).hasSize(2).first().isInstanceOf(Message.Hello.class);
        assertThat(((Message.Thaw) received.get(1)).epochMillis()).isEqualTo(1234);
        c.close();
    }

    @Test
    void aSecondHelloIsAnsweredOnlyWhenTheHostSaysItAgain() throws Exception {
        // a template's rehearsal: the host says Hello again on the connection and the agent answers as to a new host
        List<Message> received = new CopyOnWriteArrayList<>();
        AgentConnection c = connectTo(dir.resolve("h.sock"), (out, in) -> {
            received.add(in.read());
            out.write(Codec.encode(new Message.Hello(Limits.VERSION, "fake", 2)));
            Message.Ping p = (Message.Ping) in.read();
            out.write(Codec.encode(new Message.Pong(p.nonce())));
            Thread.sleep(5_000);
        });
        c.helloAgain(Duration.ofSeconds(5));
        assertThat(received).singleElement().isInstanceOf(Message.Hello.class);
        c.ping(Duration.ofSeconds(5)); // the connection goes on after it
        assertThat(c.closedFuture()).isNotDone();
        c.close();

        // unasked, a second Hello still breaks the protocol
        AgentConnection unasked = connectTo(dir.resolve("i.sock"), (out, in) ->
                out.write(Codec.encode(new Message.Hello(Limits.VERSION, "fake", 2))));
        assertThat(unasked.closedFuture().get(10, TimeUnit.SECONDS)).contains("a second Hello");
    }

    @Test
    void aSecondHelloUnansweredFailsWithinItsTimeout() throws Exception {
        AgentConnection c = connectTo(dir.resolve("j.sock"), (out, in) -> Thread.sleep(10_000));
        long t0 = System.nanoTime();
        org.assertj.core.api.Assertions.assertThatThrownBy(() -> c.helloAgain(Duration.ofMillis(300)))
                .isInstanceOf(AgentConnection.AgentException.class).hasMessageContaining("did not answer");
        assertThat(Duration.ofNanos(System.nanoTime() - t0)).isLessThan(Duration.ofSeconds(5));
        c.close();
        AgentConnection gone = connectTo(dir.resolve("k.sock"), (out, in) -> { });
        gone.closedFuture().get(10, TimeUnit.SECONDS);
        org.assertj.core.api.Assertions.assertThatThrownBy(() -> gone.helloAgain(Duration.ofSeconds(5)))
                .isInstanceOf(AgentConnection.AgentException.class).hasMessageContaining("ended");
    }

    @Test
    void aGuestThatIgnoresCreditLosesTheConnectionAndTheChannelIsFailed() throws Exception {
        List<Message> seen = new CopyOnWriteArrayList<>();
        AgentConnection c = connectTo(dir.resolve("a.sock"), (out, in) -> {
            Message.Exec exec = (Message.Exec) in.read();
            byte[] chunk = new byte[Limits.MAX_DATA];
            for (int i = 0; i < Limits.INITIAL_WINDOW / Limits.MAX_DATA + 2; i++) {
                out.write(Codec.encode(new Message.Data(exec.channel(), Message.Stream.STDOUT, chunk)));
            }
        });
        int ch = c.open(seen::add);
        c.send(new Message.Exec(ch, Message.ExecSpec.of("yes")));
        String reason = c.closedFuture().get(10, TimeUnit.SECONDS);
        assertThat(reason).contains("broke the protocol").contains("beyond its window");
        assertThat(seen).last().isInstanceOf(Message.Failed.class);
    }

    @Test
    void aGuestMayNotAskTheHostToRunAnything() throws Exception {
        AgentConnection c = connectTo(dir.resolve("b.sock"), (out, in) ->
                out.write(Codec.encode(new Message.Exec(1, Message.ExecSpec.of("rm", "-rf", "/")))));
        assertThat(c.closedFuture().get(10, TimeUnit.SECONDS)).contains("may not start processes on the host");
    }

    @Test
    void aGuestFloodingPingsOrControlMessagesLosesTheConnection() throws Exception {
        AgentConnection pings = connectTo(dir.resolve("c.sock"), (out, in) -> {
            for (int i = 0; i < 100_000; i++) {
                out.write(Codec.encode(new Message.Ping(i)));
            }
        });
        assertThat(pings.closedFuture().get(30, TimeUnit.SECONDS)).contains("without reading the answers");

        List<Message> seen = new CopyOnWriteArrayList<>();
        AgentConnection control = connectTo(dir.resolve("d.sock"), (out, in) -> {
            Message.Exec exec = (Message.Exec) in.read();
            for (int i = 0; i < 10; i++) {
                out.write(Codec.encode(new Message.Started(exec.channel(), i)));
            }
        });
        int ch = control.open(seen::add);
        control.send(new Message.Exec(ch, Message.ExecSpec.of("true")));
        assertThat(control.closedFuture().get(10, TimeUnit.SECONDS)).contains("too many control messages");
        assertThat(seen).last().isInstanceOf(Message.Failed.class);
    }

    @Test
    void aGuestsAsksGoToTheHandlerOneAtATimeAndItMayNotAnswerThemItself() throws Exception {
        // two asks back to back: the first is served (slowly), the second refused at once, each answered by its id
        java.util.concurrent.CountDownLatch release = new java.util.concurrent.CountDownLatch(1);
        java.util.concurrent.CountDownLatch handlerSet = new java.util.concurrent.CountDownLatch(1);
        List<Message> answers = new CopyOnWriteArrayList<>();
        AgentConnection c = connectTo(dir.resolve("k.sock"), (out, in) -> {
            handlerSet.await(10, TimeUnit.SECONDS);
            out.write(Codec.encode(new Message.Ask(1, "Bash")));
            out.write(Codec.encode(new Message.Ask(2, "Edit")));
            answers.add(in.read());
            release.countDown();
            answers.add(in.read());
            Thread.sleep(2_000);
        });
        c.onAsk(a -> {
            try {
                release.await(10, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            return new Message.Answer(a.id(), Message.Outcome.TAKEN, "turn 1 c1");
        });
        handlerSet.countDown();
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (answers.size() < 2 && System.nanoTime() < deadline) {
            Thread.sleep(20);
        }
        assertThat(answers).containsExactly(
                new Message.Answer(2, Message.Outcome.REFUSED, "another turn checkpoint is being taken; ask one at a time"),
                new Message.Answer(1, Message.Outcome.TAKEN, "turn 1 c1"));
        c.close();

        AgentConnection forger = connectTo(dir.resolve("l.sock"), (out, in) ->
                out.write(Codec.encode(new Message.Answer(0, Message.Outcome.FORGOTTEN, ""))));
        assertThat(forger.closedFuture().get(10, TimeUnit.SECONDS)).contains("may not answer asks");
    }

    @Test
    void aGuestFloodingAsksWithoutReadingLosesTheConnection() throws Exception {
        // with no handler every ask is refused at once: the refusals queue for a guest that never reads them
        AgentConnection c = connectTo(dir.resolve("m.sock"), (out, in) -> {
            for (int i = 1; i <= 100_000; i++) {
                out.write(Codec.encode(new Message.Ask(i, "x")));
            }
        });
        assertThat(c.closedFuture().get(30, TimeUnit.SECONDS)).contains("without reading the answers");
    }

    @Test
    void aGuestCannotCreditStdinItWasNeverSentAndADeadConnectionFailsNewChannelsAtOnce() throws Exception {
        AgentConnection c = connectTo(dir.resolve("e.sock"), (out, in) -> {
            Message.Exec exec = (Message.Exec) in.read();
            out.write(Codec.encode(new Message.Credit(exec.channel(), Message.Stream.STDIN, 4096)));
        });
        int ch = c.open(m -> { });
        c.send(new Message.Exec(ch, Message.ExecSpec.of("cat")));
        assertThat(c.closedFuture().get(10, TimeUnit.SECONDS)).contains("credited stdin it was never sent");
        List<Message> late = new CopyOnWriteArrayList<>();
        c.open(late::add);
        assertThat(late).singleElement().isInstanceOf(Message.Failed.class);
    }

    @Test
    void aReasonQuotingAHugeGuestMessageStillFailsEveryChannel() throws Exception {
        List<Message> seen = new CopyOnWriteArrayList<>();
        AgentConnection c = connectTo(dir.resolve("f.sock"), (out, in) -> {
            Message.Exec exec = (Message.Exec) in.read();
            // a body whose refusal message would quote 4000 bytes of path
            java.nio.ByteBuffer b = java.nio.ByteBuffer.allocate(4 + 1 + 4 + 4 + 4000);
            b.putInt(1 + 4 + 4 + 4000).put((byte) 14).putInt(exec.channel()).putInt(4000).put("x".repeat(4000).getBytes());
            out.write(b.array());
        });
        int ch = c.open(seen::add);
        c.send(new Message.Exec(ch, Message.ExecSpec.of("true")));
        c.closedFuture().get(10, TimeUnit.SECONDS);
        assertThat(seen).singleElement().isInstanceOf(Message.Failed.class);
    }

    @Property(tries = 40)
    void garbageFromTheGuestClosesTheConnectionWithoutEscapingExceptions(@ForAll @Size(min = 1, max = 4096) byte[] garbage)
            throws Exception {
        Path socket = Path.of(System.getProperty("java.io.tmpdir"), "kosa8-fuzz-" + System.nanoTime() + ".sock");
        try {
            AgentConnection c = connectTo(socket, (out, in) -> {
                out.write(garbage);
                out.flush();
            });
            // either the garbage was refused (closed with a reason) or it was harmless and the peer then hung up
            String reason = c.closedFuture().get(10, TimeUnit.SECONDS);
            assertThat(reason).isNotBlank();
        } finally {
            java.nio.file.Files.deleteIfExists(socket);
        }
    }

    @Test
    void aGuestSayingTheSandboxWasRewoundLosesItsConnection() throws Exception {
        try (AgentConnection c = connectTo(dir.resolve("r.sock"), (out, in) -> out.write(Codec.encode(
                new Message.Failed(1, Message.ErrorCode.REWOUND, "the sandbox was rewound to checkpoint c1"))))) {
            assertThat(c.closedFuture().get(10, TimeUnit.SECONDS)).contains("may not say the sandbox was rewound");
        }
    }

    @Test
    void aGuestSendingAFileRequestLosesItsConnection() throws Exception {
        try (AgentConnection c = connectTo(dir.resolve("f.sock"), (out, in) -> out.write(Codec.encode(
                new Message.FileRequest(1, "", new dev.kosa8.protocol.FileOp.Stat("/etc/passwd", false)))))) {
            String reason = c.closedFuture().get(10, TimeUnit.SECONDS);
            assertThat(reason).contains("may not work on host files");
        }
    }

    @Test
    void aWatchTheHostForgotIsToldOnceToStop() throws Exception {
        List<Message> fromHost = new CopyOnWriteArrayList<>();
        var events = new Message.WatchEvents(42, List.of(new dev.kosa8.protocol.WatchEvent(
                dev.kosa8.protocol.WatchEvent.Kind.WRITE, "/w/f")));
        try (AgentConnection c = connectTo(dir.resolve("s.sock"), (out, in) -> {
            for (int i = 0; i < 3; i++) {
                out.write(Codec.encode(events));
            }
            out.write(Codec.encode(new Message.Ping(7)));
            Message m;
            while ((m = in.read()) != null) {
                fromHost.add(m);
                if (m instanceof Message.Pong) {
                    return;
                }
            }
        })) {
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            while (fromHost.stream().noneMatch(m -> m instanceof Message.Pong) && System.nanoTime() < deadline) {
                Thread.sleep(10);
            }
            assertThat(fromHost).filteredOn(m -> m instanceof Message.Signal).containsExactly(
                    new Message.Signal(42, 1));
            assertThat(c.isOpen()).isTrue();
        }
    }
}
