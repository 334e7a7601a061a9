package dev.kosa8.egress;

import dev.kosa8.protocol.FrameReader;
import dev.kosa8.protocol.FrameWriter;
import dev.kosa8.protocol.Limits;
import dev.kosa8.protocol.Message;
import dev.kosa8.protocol.NetLink;
import java.io.IOException;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.channels.Channels;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;

/**
 * The guest agent's side of a network link, played in the daemon for {@link LinkWarmUp}: listens where QEMU's
 * port socket would be, answers the link's Hello, says its window is ready, and fetches through the link as a
 * guest program's connection would (open a stream, send the request, read the answer, credit it, give each
 * window slot back). It reads no slot's bytes: what it warms is the daemon's side.
 */
final class StandInAgent implements AutoCloseable {
    private final ServerSocketChannel server;
    private SocketChannel port;
    private FrameReader in;
    private FrameWriter out;
    private int nextChannel = 1;

    private StandInAgent(ServerSocketChannel server) {
        this.server = server;
    }

    /** Listens on {@code socket}, for the link to connect to. */
    static StandInAgent listen(Path socket) throws IOException {
        ServerSocketChannel s = ServerSocketChannel.open(StandardProtocolFamily.UNIX);
        try {
            s.bind(UnixDomainSocketAddress.of(socket));
        } catch (IOException e) {
            s.close();
            throw e;
        }
        return new StandInAgent(s);
    }

    /** Takes the link's connection and answers its Hello as an agent with a network window does. */
    void answer() throws IOException {
        port = server.accept();
        in = new FrameReader(Channels.newInputStream(port));
        out = new FrameWriter(Channels.newOutputStream(port));
        Message m = in.read();
        if (!(m instanceof Message.Hello)) {
            throw new IOException("the link began with " + m + ", not a Hello");
        }
        out.write(new Message.Hello(Limits.VERSION, "kosa8d-warm-up", 0));
        out.write(new Message.NetWindowReady());
    }

    /**
     * Sends {@code request} on a new stream to the guest port {@code guestPort} and reads the answer to its end.
     *
     * @return the bytes of the answer (head and body)
     */
    long fetch(int guestPort, String request) throws IOException {
        int ch = nextChannel++;
        byte[] asked = request.getBytes(StandardCharsets.US_ASCII);
        out.write(new Message.NetOpen(ch, guestPort));
        // as the agent does once its program reads: the window towards the guest grown to its most
        out.write(new Message.Credit(ch, Message.Stream.STDIN, NetLink.DOWN_WINDOW - NetLink.OPEN_WINDOW));
        out.write(new Message.Data(ch, Message.Stream.STDOUT, asked));
        long got = 0;
        while (true) {
            Message m = in.read();
            switch (m) {
                case null -> throw new IOException("the link ended after " + got + " bytes");
                case Message.Data d when d.channel() == ch -> {
                    got += d.bytes().length;
                    out.write(new Message.Credit(ch, Message.Stream.STDIN, d.bytes().length));
                }
                case Message.NetWindowData d -> {
                    out.write(new Message.NetWindowReturn(d.slot(), d.serial()));
                    if (d.channel() == ch) {
                        got += d.count();
                        out.write(new Message.Credit(ch, Message.Stream.STDIN, d.count()));
                    }
                }
                case Message.Eof e when e.channel() == ch -> {
                    out.write(new Message.Eof(ch, Message.Stream.STDOUT));
                    return got;
                }
                case Message.NetReset r when r.channel() == ch -> throw new IOException("the stream was reset after "
                        + got + " bytes");
                default -> {
                    // a credit for the request's bytes; anything of an earlier stream
                }
            }
        }
    }

    @Override
    public void close() throws IOException {
        try {
            if (port != null) {
                port.close();
            }
        } finally {
            server.close();
        }
    }
}
