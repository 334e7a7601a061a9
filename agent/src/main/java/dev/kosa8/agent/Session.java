package dev.kosa8.agent;

import dev.kosa8.protocol.FrameReader;
import dev.kosa8.protocol.FrameWriter;
import dev.kosa8.protocol.Limits;
import dev.kosa8.protocol.Message;
import dev.kosa8.protocol.ProtocolException;
import java.io.IOException;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * One connection of the host to the agent, from the host's Hello to the end
 * of its stream. Reads the host's messages and routes them by channel; when
 * the host goes away, every channel is hung up.
 */
final class Session implements Outbox {
    private final FrameReader reader;
    private final FrameWriter writer;
    private final long bootMillis;
    private final GuestAsks asks;
    private final Map<Integer, Channel> channels = new ConcurrentHashMap<>();
    /** Channels whose work ended before {@link #startChannel} registered them. */
    private final java.util.Set<Integer> finishedEarly = ConcurrentHashMap.newKeySet();
    private volatile boolean open = true;

    Session(FrameReader reader, FrameWriter writer, long bootMillis, GuestAsks asks) {
        this.reader = reader;
        this.writer = writer;
        this.bootMillis = bootMillis;
        this.asks = asks;
    }

    /**
     * A Hello in the middle of a session: a new host (a restarted daemon)
     * took over without this agent seeing the old one go, as happens when the
     * old one died while the machine was stopped (QEMU tells the guest of a
     * disconnect only while it runs). The new host starts a new session.
     */
    static final class NewHost extends RuntimeException {
        final Message.Hello hello;

        NewHost(Message.Hello hello) {
            super("a new host said Hello", null, false, false);
            this.hello = hello;
        }
    }

    /**
     * Serves until the host disconnects, or another host takes over.
     *
     * @param first the host's first message, already read
     * @return the Hello of a host that took over (serve a new session with it), or null when the host left
     */
    Message.Hello serve(Message first) throws IOException {
        try {
            serveSession(first);
            return null;
        } catch (NewHost n) {
            return n.hello;
        }
    }

    private void serveSession(Message first) throws IOException {
        try {
            if (!(first instanceof Message.Hello hello)) {
                throw new ProtocolException("expected Hello, got " + first.getClass().getSimpleName());
            }
            send(new Message.Hello(Limits.VERSION, AgentMain.SOFTWARE, bootMillis));
            if (hello.version() != Limits.VERSION) {
                Log.info("host speaks protocol " + hello.version() + ", this agent " + Limits.VERSION + "; closing");
                return;
            }
            asks.connected(this);
            Message m;
            while ((m = reader.read()) != null) {
                dispatch(m);
            }
        } finally {
            asks.disconnected(this);
            open = false;
            channels.values().forEach(Channel::hangUp);
            channels.clear();
        }
    }

    private void dispatch(Message m) {
        switch (m) {
            case Message.Ping p -> send(new Message.Pong(p.nonce()));
            case Message.Hello h -> throw new NewHost(h);
            case Message.Exec e -> startChannel(e.channel(), () -> ProcessChannel.start(e.channel(), e.spec(), this));
            case Message.PutFile p -> startChannel(p.channel(), () -> PutFileChannel.start(p.channel(), p, this));
            case Message.GetFile g -> startChannel(g.channel(), () -> GetFileChannel.start(g.channel(), g, this));
            case Message.MountWorkspace w -> startChannel(w.channel(), () -> WorkspaceMount.start(w, this));
            case Message.Freeze f -> startChannel(f.channel(), () -> Checkpointing.freeze(f, this));
            case Message.Thaw t -> startChannel(t.channel(), () -> Checkpointing.thaw(t, this));
            case Message.Connect c -> startChannel(c.channel(), () -> PortChannel.start(c, this));
            case Message.FileRequest f -> startChannel(f.channel(), () -> FileOpChannel.start(f, this));
            case Message.Data d -> {
                if (d.stream() != Message.Stream.STDIN) {
                    throw new ProtocolException("the host may only send stdin");
                }
                withChannel(d.channel(), c -> c.onData(d.bytes()));
            }
            case Message.Eof e -> withChannel(e.channel(), Channel::onEof);
            case Message.Credit c -> withChannel(c.channel(), ch -> ch.onCredit(c.stream(), c.bytes()));
            case Message.Signal s -> withChannel(s.channel(), c -> c.onSignal(s.signal()));
            case Message.Resize r -> withChannel(r.channel(), c -> c.onResize(r.rows(), r.columns()));
            case Message.Pong p -> { }
            case Message.Answer a -> asks.answered(a);
            case Message.Ask a -> throw new ProtocolException("Ask comes from the agent");
            case Message.Started s -> throw new ProtocolException("Started comes from the agent");
            case Message.Exited x -> throw new ProtocolException("Exited comes from the agent");
            case Message.Failed f -> throw new ProtocolException("Failed comes from the agent");
            case Message.FileInfo f -> throw new ProtocolException("FileInfo comes from the agent");
            case Message.FileEntries f -> throw new ProtocolException("FileEntries comes from the agent");
            case Message.WatchEvents e -> throw new ProtocolException("WatchEvents comes from the agent");
            case Message.NetOpen _, Message.NetReset _, Message.NetWindowReady _, Message.NetWindowData _,
                 Message.NetWindowReturn _ -> throw new ProtocolException("network streams have a port of their own");
        }
    }

    private synchronized void startChannel(int channel, java.util.function.Supplier<Channel> starter) {
        if (channels.containsKey(channel)) {
            send(new Message.Failed(channel, Message.ErrorCode.INVALID, "channel " + channel + " is in use"));
            return;
        }
        Channel c = starter.get();
        // a quick process can finish before it is registered: then it stays unregistered
        if (c != null && !finishedEarly.remove(channel)) {
            channels.put(channel, c);
        }
    }

    private void withChannel(int channel, java.util.function.Consumer<Channel> action) {
        Channel c = channels.get(channel);
        if (c != null) {
            action.accept(c);
        }
        // else: the channel has just finished; late stdin, credit or signals are dropped
    }

    @Override
    public boolean send(Message m) {
        if (!open) {
            return false;
        }
        try {
            writer.write(m);
            return true;
        } catch (IOException e) {
            open = false;
            return false;
        }
    }

    @Override
    public synchronized void done(int channel) {
        if (channels.remove(channel) == null) {
            finishedEarly.add(channel);
        }
    }
}
