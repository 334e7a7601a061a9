package dev.kosa8.ports;

import dev.kosa8.protocol.Codec;
import dev.kosa8.protocol.FrameReader;
import dev.kosa8.protocol.Limits;
import dev.kosa8.protocol.Message;
import dev.kosa8.vm.AgentConnection;
import java.io.IOException;
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

/**
 * A guest's agent as a published port sees it, on a unix socket behind a real {@link AgentConnection}: it answers
 * each Connect with {@link #onConnect}, and by default echoes what it is sent, crediting it once the echo is
 * taken, until the host's Eof.
 */
final class FakeAgent implements AutoCloseable {
    /** What the guest does with one stream: given its channel and a way to send. */
    interface Guest {
        void connected(int channel, Sender out) throws IOException;

        /** A message of the host's for a channel this guest opened. */
        default void fromHost(Message m, Sender out) throws IOException {
            switch (m) {
                // as a real guest's echo server behind the agent: what it was sent is credited once its echo has
                // been taken (credited back), so the echo never runs more than a window ahead of the host's client,
                // however slowly that client reads (crediting at once overran the window on a loaded host)
                case Message.Data d -> out.send(new Message.Data(d.channel(), Message.Stream.STDOUT, d.bytes()));
                case Message.Credit c when c.stream() == Message.Stream.STDOUT ->
                        out.send(new Message.Credit(c.channel(), Message.Stream.STDIN, c.bytes()));
                case Message.Eof e -> {
                    out.send(new Message.Eof(e.channel(), Message.Stream.STDOUT));
                    out.send(new Message.Exited(e.channel(), 0, 0));
                }
                default -> { }
            }
        }
    }

    interface Sender {
        void send(Message m) throws IOException;
    }

    /** Echoes: Started, then each Data back. */
    static final Guest ECHO = (ch, out) -> out.send(new Message.Started(ch, 0));

    final List<Message> received = new CopyOnWriteArrayList<>();
    final AgentConnection connection;
    private final ServerSocketChannel server;

    FakeAgent(Path dir, Guest guest) throws Exception {
        Path socket = dir.resolve("agent.sock");
        server = ServerSocketChannel.open(StandardProtocolFamily.UNIX);
        server.bind(UnixDomainSocketAddress.of(socket));
        Thread.ofVirtual().start(() -> {
            try (SocketChannel ch = server.accept()) {
                OutputStream raw = Channels.newOutputStream(ch);
                Sender out = m -> {
                    synchronized (raw) {
                        raw.write(Codec.encode(m));
                    }
                };
                FrameReader in = new FrameReader(Channels.newInputStream(ch));
                in.read();
                out.send(new Message.Hello(Limits.VERSION, "fake", 1));
                Message m;
                while ((m = in.read()) != null) {
                    received.add(m);
                    if (m instanceof Message.Connect c) {
                        guest.connected(c.channel(), out);
                    } else {
                        guest.fromHost(m, out);
                    }
                }
            } catch (Exception ignored) {
                // the host hung up
            }
        });
        connection = AgentConnection.connect(socket, Duration.ofSeconds(10), () -> true);
    }

    @Override
    public void close() throws IOException {
        connection.close();
        server.close();
    }
}
