package dev.kosa8.ports;

import dev.kosa8.protocol.Message;
import dev.kosa8.protocol.PortLink;
import dev.kosa8.protocol.ProtocolException;
import dev.kosa8.protocol.SendWindow;
import dev.kosa8.vm.AgentConnection;
import java.io.IOException;
import java.net.StandardSocketOptions;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Consumer;

/**
 * One connection to a published port: a client's socket on the host joined to
 * one channel of the sandbox's agent, which connects inside the guest
 * ({@link Message.Connect}).
 *
 * <p>Towards the guest the client's socket is read only while the stream has
 * window ({@link PortLink#WINDOW}, credited by the agent as it writes into the
 * guest's socket). Back from the guest, the agent's bytes are written into the
 * client's socket on a thread of the stream's and credited once written, so the
 * daemon holds at most one window of them however slowly the client reads: the
 * agent connection refuses bytes beyond it ({@code AgentConnection}).
 *
 * <p>What the guest sends on the stream is untrusted. It may answer Started once,
 * send stdout and its Eof, credit stdin it was sent, and end with Exited or
 * Failed; anything else (stderr, a second Started, bytes after its Eof, a
 * FileInfo) resets the stream, the client seeing a reset, and is logged. The
 * guest never learns anything of the host but the client's bytes.
 */
final class PortStream {
    private static final byte[] END = new byte[0];

    private final SocketChannel client;
    private final AgentConnection agent;
    private final int guestPort;
    private final Consumer<String> log;
    private final Runnable onEnd;
    private final SendWindow window = new SendWindow(PortLink.WINDOW);
    private final LinkedBlockingQueue<byte[]> down = new LinkedBlockingQueue<>();
    /** The stream is over and its slot given back. */
    private final AtomicBoolean ended = new AtomicBoolean();
    /** The client's socket is closed (gracefully once both ways are over, or with a reset). */
    private final AtomicBoolean clientClosed = new AtomicBoolean();
    private volatile int channel = -1;
    // the guest's messages arrive on the agent connection's reader, one at a time: these are that thread's
    private boolean started;
    private boolean guestEof;
    private volatile boolean upEnded;
    private volatile boolean downEnded;
    private volatile boolean guestDone;

    /**
     * @param log   where a guest that broke the stream's rules is reported
     * @param onEnd runs once when the stream is over, however it ends
     */
    PortStream(SocketChannel client, AgentConnection agent, int guestPort, Consumer<String> log, Runnable onEnd) {
        this.client = client;
        this.agent = agent;
        this.guestPort = guestPort;
        this.log = log;
        this.onEnd = onEnd;
    }

    /** Opens the channel, asks the agent to connect, and starts carrying bytes. */
    void start() {
        try {
            client.configureBlocking(true);
            client.setOption(StandardSocketOptions.TCP_NODELAY, true);
        } catch (IOException e) {
            reset(false);
            return;
        }
        int ch = agent.open(this::fromGuest, PortLink.WINDOW);
        channel = ch;
        if (ended.get()) {
            return; // the connection to the agent was gone: the open failed it at once
        }
        agent.send(new Message.Connect(ch, guestPort));
        Thread.ofVirtual().name("port-up-" + ch).start(this::up);
        Thread.ofVirtual().name("port-down-" + ch).start(this::down);
    }

    /** The client's bytes into the guest, within the window. */
    private void up() {
        try {
            while (!clientClosed.get()) {
                int allowed = window.acquire(PortLink.CHUNK);
                if (allowed < 0) {
                    return;
                }
                ByteBuffer b = ByteBuffer.allocate(allowed);
                int n = client.read(b);
                if (n < allowed) {
                    window.credit(allowed - Math.max(n, 0));
                }
                if (n < 0) {
                    upEnded = true;
                    agent.send(new Message.Eof(channel, Message.Stream.STDIN));
                    closeIfDone();
                    return;
                }
                if (n > 0) {
                    agent.send(new Message.Data(channel, Message.Stream.STDIN, java.util.Arrays.copyOf(b.array(), n)));
                }
            }
        } catch (IOException e) {
            reset(true); // the client reset or the socket closed under us
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            reset(true);
        }
    }

    /** The guest's bytes into the client, each chunk credited once written. */
    private void down() {
        try {
            while (true) {
                byte[] chunk = down.take();
                if (chunk == END) {
                    if (!clientClosed.get()) {
                        client.shutdownOutput();
                    }
                    downEnded = true;
                    closeIfDone();
                    return;
                }
                ByteBuffer b = ByteBuffer.wrap(chunk);
                while (b.hasRemaining()) {
                    client.write(b);
                }
                agent.send(new Message.Credit(channel, Message.Stream.STDOUT, chunk.length));
            }
        } catch (IOException e) {
            reset(true);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            reset(true);
        }
    }

    /** A message of the guest's for this stream, on the agent connection's reader: never blocks. */
    private void fromGuest(Message m) {
        if (ended.get()) {
            return;
        }
        switch (m) {
            case Message.Started s -> {
                if (started) {
                    breach("a second Started");
                }
                started = true;
            }
            case Message.Data d when d.stream() == Message.Stream.STDOUT && started && !guestEof ->
                    down.add(d.bytes());
            case Message.Eof e when e.stream() == Message.Stream.STDOUT && started && !guestEof -> {
                guestEof = true;
                down.add(END);
            }
            case Message.Credit c -> {
                try {
                    window.credit(c.bytes());
                } catch (ProtocolException e) {
                    breach("credit beyond what it was sent");
                }
            }
            case Message.Exited x -> {
                guestDone = true;
                if (!guestEof) {
                    guestEof = true;
                    down.add(END);
                }
                closeIfDone();
            }
            case Message.Failed f -> {
                guestDone = true;
                reset(false);
            }
            default -> breach(m.getClass().getSimpleName() + describe(m));
        }
    }

    private static String describe(Message m) {
        return switch (m) {
            case Message.Data d -> " on " + d.stream();
            case Message.Eof e -> " of " + e.stream();
            default -> "";
        };
    }

    private void breach(String what) {
        log.accept("port " + guestPort + ", stream " + channel + ": the guest sent " + what
                + ", which a port's stream does not carry; resetting the connection");
        reset(true);
    }

    /**
     * Both ways are over: the client's socket closes. The stream ends (its slot given back) once the guest has said
     * so too, with Exited: the agent still writes what it was sent into the guest's socket until then.
     */
    private void closeIfDone() {
        if (downEnded && (upEnded || guestDone) && clientClosed.compareAndSet(false, true)) {
            window.close();
            try {
                client.close();
            } catch (IOException ignored) {
                // closed either way
            }
        }
        if (clientClosed.get() && guestDone && ended.compareAndSet(false, true)) {
            onEnd.run();
        }
    }

    /**
     * Ends the stream at once: the client sees a reset, and the agent, when {@code tellGuest}, lets go of the
     * guest's connection.
     */
    void reset(boolean tellGuest) {
        if (!ended.compareAndSet(false, true)) {
            return;
        }
        clientClosed.set(true);
        window.close();
        down.clear();
        down.add(END);
        try {
            client.setOption(StandardSocketOptions.SO_LINGER, 0);
        } catch (IOException | RuntimeException ignored) {
            // closed as it is
        }
        try {
            client.close();
        } catch (IOException ignored) {
            // closed either way
        }
        if (tellGuest && channel > 0 && !guestDone) {
            agent.abandon(channel);
        }
        onEnd.run();
    }
}
