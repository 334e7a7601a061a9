package dev.kosa8.vm;

import dev.kosa8.protocol.Message;
import dev.kosa8.protocol.ProtocolException;
import dev.kosa8.protocol.ReceiveWindow;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;

/**
 * The channels of one agent connection ({@link AgentConnection}): who hears each, and what the guest may still
 * send on it. Output counts against the channel's windows; everything else a guest sends on a channel is bounded
 * here too ({@link ChannelLimits}), so a guest cannot grow the daemon's buffers with messages no window counts.
 * A message for a channel the host does not hold (forgotten, or never opened) is dropped.
 */
final class AgentChannels {
    private record Registered(Consumer<Message> listener, ReceiveWindow stdout, ReceiveWindow stderr,
                              ChannelLimits limits) {
    }

    /**
     * What a guest may send on one channel besides credited output: Started
     * and FileInfo once, Eof once per stream, and stdin credit only for stdin
     * the host has sent. Anything beyond is a protocol violation.
     */
    private static final class ChannelLimits {
        private long stdinUncredited;
        private int controlMessages;

        synchronized void stdinSent(int bytes) {
            stdinUncredited += bytes;
        }

        synchronized void stdinCredited(int bytes) {
            stdinUncredited -= bytes;
            if (stdinUncredited < 0) {
                throw new ProtocolException("the guest credited stdin it was never sent");
            }
        }

        synchronized void control() {
            if (++controlMessages > 4) {
                throw new ProtocolException("too many control messages on one channel");
            }
        }
    }

    private static final int MAX_STALE_WATCHES = 1024;

    private final Map<Integer, Registered> channels = new ConcurrentHashMap<>();
    private final AtomicInteger nextChannel = new AtomicInteger(1);
    /** Channels of watches told to stop because the host had forgotten them: each told once, so few at most. */
    private final Set<Integer> staleWatches = ConcurrentHashMap.newKeySet();
    /** Where a message to the agent goes: the connection's queue. */
    private final Consumer<Message> toAgent;

    AgentChannels(Consumer<Message> toAgent) {
        this.toAgent = toAgent;
    }

    /** A new channel, numbered upwards and never reused, whose output window is {@code window} bytes. */
    int open(Consumer<Message> listener, int window) {
        int id = nextChannel.getAndIncrement();
        channels.put(id, new Registered(listener, new ReceiveWindow(window), new ReceiveWindow(window),
                new ChannelLimits()));
        return id;
    }

    /** Forgets {@code channel}; true if it was held (the caller then tells its listener why). */
    boolean forget(int channel) {
        return channels.remove(channel) != null;
    }

    /** Counts what the host sends on a channel: stdin it may be credited for, output credit it gives back. */
    void sending(Message m) {
        if (m instanceof Message.Data d && d.stream() == Message.Stream.STDIN) {
            Registered r = channels.get(d.channel());
            if (r != null) {
                r.limits().stdinSent(d.bytes().length);
            }
        }
        if (m instanceof Message.Credit c && c.stream() == Message.Stream.STDIN) {
            throw new IllegalArgumentException("the host does not credit stdin");
        }
        if (m instanceof Message.Credit c) {
            Registered r = channels.get(c.channel());
            if (r != null) {
                (c.stream() == Message.Stream.STDERR ? r.stderr() : r.stdout()).consumed(c.bytes());
            }
        }
    }

    /** Each open channel is told {@code why} with {@code code}, and forgotten. */
    void failAll(Message.ErrorCode code, String why) {
        for (var e : channels.entrySet()) {
            if (channels.remove(e.getKey()) != null) {
                try {
                    e.getValue().listener().accept(new Message.Failed(e.getKey(), code, why));
                } catch (RuntimeException ignored) {
                    // one broken listener must not keep the others from hearing
                }
            }
        }
    }

    /** Output from the guest: counted against its window, where going beyond breaks the protocol. */
    void output(Message.Data d) {
        Registered r = channels.get(d.channel());
        if (r != null) {
            (d.stream() == Message.Stream.STDERR ? r.stderr() : r.stdout()).received(d.bytes().length);
            r.listener().accept(d);
        }
    }

    /** The guest's credit for stdin: never more than the host sent. */
    void stdinCredit(Message.Credit c) {
        Registered r = channels.get(c.channel());
        if (r != null) {
            r.limits().stdinCredited(c.bytes());
            r.listener().accept(c);
        }
    }

    /** Started, Eof, FileInfo: a few per channel at most. */
    void control(Message m) {
        Registered r = channels.get(m.channel());
        if (r != null) {
            r.limits().control();
            r.listener().accept(m);
        }
    }

    /**
     * A stat, a batch of a listing or of a watch's events: not counted by a window, so the listener bounds what it
     * keeps (a listing no more than it asked for, a watch its pending events: {@code dev.kosa8.files}).
     */
    void bounded(Message m) {
        Registered r = channels.get(m.channel());
        if (r != null) {
            r.listener().accept(m);
        } else if (m instanceof Message.WatchEvents && staleWatches.size() < MAX_STALE_WATCHES
                && staleWatches.add(m.channel())) {
            // a watch the host has forgotten: one a rewind restored into the guest's RAM, its channel failed here
            // then; told once to stop, so it does not hold one of the agent's watches for ever
            toAgent.accept(new Message.Signal(m.channel(), 1));
        }
    }

    /** Exited or Failed: the channel's last message, after which it is forgotten. */
    void last(Message m) {
        Registered r = channels.remove(m.channel());
        if (r != null) {
            r.listener().accept(m);
        }
    }
}
