package dev.kosa8.agent;

import dev.kosa8.protocol.Limits;
import dev.kosa8.protocol.Message;
import dev.kosa8.protocol.NetLink;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.StandardSocketOptions;
import java.nio.ByteBuffer;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;

/**
 * The guest's end of the sandbox's network: listens where the guest's
 * programs reach the broker ({@link NetLink#GUEST_ADDRESS} on
 * {@link NetLink#PORTS}) and carries each connection to the host as a stream
 * of the network link ({@link NetLink}), which the daemon hands to the broker.
 *
 * <p>One thread does all of it, non-blocking, around one {@link Selector}:
 * accepting, reading guest sockets into Data for the host as far as each
 * stream's window allows, and writing the host's Data into them, crediting
 * what went in. However many connections a guest opens, the agent has this
 * thread, the port's reader ({@link NetPort}) and its writer
 * ({@link NetOutbox}), and its memory is bounded: at most
 * {@link NetLink#AGENT_STREAMS} streams (a connection beyond is reset at
 * once; the daemon refuses those beyond its own caps, {@link NetLink#MAX_STREAMS}
 * and {@link NetLink#DNS_STREAMS}, with a NetReset),
 * {@link NetOutbox#BUDGET} bytes queued for the host, and per stream at most
 * one window of the host's bytes that the guest has not read yet, all of those
 * windows together within {@link NetLink#DOWN_BUDGET} ({@link DownWindows}).
 * Nothing a stream does stops the others: the port is read whatever the
 * guest's programs read, and a stream whose program does not read waits on
 * its own window alone.
 *
 * <p>A stream exists only within a session of the link: between the host's
 * Hello and the end of its connection (the daemon stopped or restarted, or
 * another host took over, as after every restore of the machine). When a
 * session ends every stream is reset, since the host side of each is gone,
 * and connections accepted while there is no session are reset at once: a
 * program sees ECONNRESET rather than waiting.
 *
 * <p>The port's reader hands the host's messages over as tasks, run on this
 * thread in the order they came.
 */
final class NetRelay {
    /** The read buffer: one chunk, the most one Data carries on the link. */
    private final ByteBuffer buffer = ByteBuffer.allocateDirect(NetLink.CHUNK);
    private final Selector selector;
    private final Queue<Runnable> tasks = new ConcurrentLinkedQueue<>();
    private final Map<Integer, NetStream> streams = new HashMap<>();
    private final NetListeners listeners;
    private final NetOutbox outbox;
    private final DownWindows downWindows = new DownWindows();
    private boolean session;
    private int nextChannel = 1;
    private boolean capLogged;

    /**
     * Binds the listeners; {@link #start} runs the relay.
     *
     * @param bind  where each guest port's listener binds (the guest port to its address: in the guest, the port
     *              itself on {@link NetLink#GUEST_ADDRESS}; tests bind elsewhere)
     * @param port  what the relay writes to the host (the link's port)
     */
    NetRelay(Map<Integer, InetSocketAddress> bind, java.io.OutputStream port) throws IOException {
        this.selector = Selector.open();
        this.outbox = new NetOutbox(port, () -> post(this::budgetFreed));
        this.listeners = new NetListeners(bind, selector);
    }

    /** Where each guest port's listener is bound (for tests binding port 0). */
    Map<Integer, InetSocketAddress> bound() throws IOException {
        return listeners.bound();
    }

    void start() {
        Thread t = new Thread(this::loop, "net-relay");
        t.setDaemon(true);
        t.start();
    }

    // --- from the port's reader thread ---

    /**
     * A host said Hello: the streams of any session before are reset, the Hello answered (followed by
     * {@link Message.NetWindowReady} if the agent reads the network window), and the session begins.
     */
    void beginSession(Message.Hello answer, boolean window) {
        post(() -> {
            resetAll(false);
            outbox.later(answer);
            if (window) {
                outbox.later(new Message.NetWindowReady());
            }
            session = true;
        });
    }

    /**
     * A piece of the host's bytes read from the network window slot {@code d} names ({@link NetWindowReader}), as a
     * Data's would be, or null when it could not be had (the slot held another's: the stream is then reset both
     * ways, since its bytes would have a hole). Its buffer goes back to the reader once written into the guest's
     * socket, or dropped; the slot goes back to the host at once, in the same write as the credit for the piece
     * if there is one.
     */
    void fromWindow(Message.NetWindowData d, NetStream.Down piece) {
        post(() -> {
            try {
                outbox.later(new Message.NetWindowReturn(d.slot(), d.serial()));
            } finally {
                forStream(d.channel(), () -> window(d, piece)); // the piece is queued or given back either way
            }
        });
    }

    private void window(Message.NetWindowData d, NetStream.Down piece) {
        if (piece != null) {
            receive(d.channel(), piece);
            return;
        }
        NetStream s = streams.get(d.channel());
        if (s != null) {
            Log.info("network link: stream " + d.channel() + " lost a piece from the host's window; resetting it");
            reset(s, true);
        }
    }

    /** The host has gone: every stream is reset, and connections are refused until the next session. */
    void endSession() {
        post(() -> {
            session = false;
            resetAll(false);
        });
    }

    /**
     * A message of the host's on the link, in the current session. Never waits: what the host may send is bounded
     * by the windows the relay grants ({@link DownWindows}), so the port is read on whatever the guests read.
     */
    void fromHost(Message m) {
        post(() -> forStream(m.channel(), () -> dispatch(m)));
    }

    /**
     * Runs what one stream's message or socket asks of the relay. A throw there (a bug, an allocation that failed)
     * resets that stream both ways, as a broken connection would be, so neither its program nor the host waits on
     * it for ever; the relay and every other stream go on.
     */
    private void forStream(int channel, Runnable work) {
        try {
            work.run();
        } catch (RuntimeException | OutOfMemoryError e) {
            Log.info("network relay: stream " + channel + ": " + e + "; resetting it");
            NetStream s = streams.get(channel);
            if (s != null) {
                try {
                    reset(s, true);
                } catch (RuntimeException again) {
                    // the stream is forgotten and its connection reset before anything of a reset can throw
                    Log.info("network relay: stream " + channel + ": " + again + " while resetting it");
                }
            }
        }
    }

    private void post(Runnable task) {
        tasks.add(task);
        selector.wakeup();
    }

    // --- on the relay's thread ---

    private void loop() {
        while (true) {
            try {
                if (tasks.isEmpty()) {
                    selector.select();
                } else {
                    selector.selectNow(); // tasks left by a turn that failed run now, not at the next wake-up
                }
                Runnable task;
                while ((task = tasks.poll()) != null) {
                    task.run();
                }
                outbox.flush(); // the host's messages' answers (credits, slots back) wait for no socket of the turn
                for (SelectionKey key : selector.selectedKeys()) {
                    if (!key.isValid()) {
                        continue;
                    }
                    if (key.channel() instanceof ServerSocketChannel server) {
                        accept(server);
                    } else {
                        NetStream s = (NetStream) key.attachment();
                        forStream(s.channel, () -> {
                            if (key.isWritable()) {
                                writeDown(s);
                            }
                            if (key.isValid() && key.isReadable()) {
                                readUp(s);
                            }
                        });
                    }
                }
                selector.selectedKeys().clear();
            } catch (Throwable e) {
                // a bug, or an allocation or a thread that failed, must cost a connection or two, never the relay:
                // the next turn starts afresh (what this one left selected is looked at again)
                Log.info("network relay: " + e);
            } finally {
                outbox.flush(); // what the turn sent, in one write
            }
        }
    }

    private void dispatch(Message m) {
        switch (m) {
            case Message.Data d -> {
                if (d.stream() == Message.Stream.STDIN) {
                    receive(d.channel(), new NetStream.Down(ByteBuffer.wrap(d.bytes()), null));
                }
            }
            case Message.Eof e -> {
                NetStream s = streams.get(e.channel());
                if (s != null && e.stream() == Message.Stream.STDIN && !s.downEof) {
                    s.downEof = true;
                    writeDown(s);
                }
            }
            case Message.Credit c -> {
                NetStream s = streams.get(c.channel());
                if (s != null && c.stream() == Message.Stream.STDOUT) {
                    if (s.upWindow + c.bytes() > NetLink.WINDOW) {
                        Log.info("network link: the host credited stream " + s.channel + " more than it was sent");
                        reset(s, true);
                        return;
                    }
                    s.upWindow += c.bytes();
                    s.updateInterest();
                }
            }
            case Message.NetReset r -> {
                NetStream s = streams.get(r.channel());
                if (s != null) {
                    reset(s, false);
                }
            }
            default -> Log.info("network link: ignoring " + m.getClass().getSimpleName() + " from the host");
        }
    }

    /** The host's bytes for a stream's guest connection: queued and written as far as the socket takes them. */
    private void receive(int channel, NetStream.Down piece) {
        NetStream s = streams.get(channel);
        if (s == null || s.downEof) {
            piece.done();
            return; // a stream already over: late bytes go nowhere
        }
        if (!s.take(piece)) {
            Log.info("network link: the host overran stream " + s.channel + "'s window; resetting it");
            reset(s, true);
            return;
        }
        writeDown(s);
    }

    private void accept(ServerSocketChannel server) throws IOException {
        SocketChannel guest;
        while ((guest = server.accept()) != null) {
            // the daemon decides which streams it takes (and logs the ones it refuses); the agent passes it up to
            // its own bound, which leaves room for those on their way to the daemon's refusal
            if (!session || streams.size() >= NetLink.AGENT_STREAMS) {
                if (session && !capLogged) {
                    capLogged = true;
                    Log.info("network link: more than " + NetLink.AGENT_STREAMS + " streams open; resetting new "
                            + "connections here until some end");
                }
                NetListeners.abort(guest);
                continue;
            }
            try {
                guest.configureBlocking(false);
                guest.setOption(StandardSocketOptions.TCP_NODELAY, true);
            } catch (IOException e) {
                NetListeners.abort(guest); // it broke before it was a stream: nothing to tell the host
                continue;
            }
            int channel = nextChannel;
            nextChannel = nextChannel == Limits.MAX_CHANNEL ? 1 : nextChannel + 1;
            NetStream s = new NetStream(channel, guest, guest.register(selector, SelectionKey.OP_READ),
                    downWindows.open());
            s.key.attach(s);
            streams.put(channel, s);
            outbox.later(new Message.NetOpen(channel, listeners.port(server)));
        }
    }

    /** Reads what the guest sent, as much as the stream's window and the outbox's budget allow. */
    private void readUp(NetStream s) {
        if (outbox.overBudget()) {
            s.starved = true;
            s.updateInterest();
            return;
        }
        if (!s.wantsRead()) {
            s.updateInterest();
            return;
        }
        Message m;
        try {
            m = s.readUp(buffer);
        } catch (IOException e) {
            reset(s, true); // the guest's connection broke (a reset from its side)
            return;
        }
        if (m != null) {
            outbox.later(m);
            if (m instanceof Message.Eof) {
                finishOrWatch(s);
            } else {
                s.updateInterest();
            }
        }
    }

    /** Writes the host's bytes into the guest's socket as far as it takes them, and credits what went in. */
    private void writeDown(NetStream s) {
        Message.Credit credit;
        try {
            credit = s.credited(s.writeDown(), downWindows);
        } catch (IOException e) {
            reset(s, true); // the guest closed or reset its connection
            return;
        }
        if (credit != null) {
            outbox.later(credit);
        }
        if (s.down.isEmpty() && s.downEof && !s.downEnded) {
            s.downEnded = true;
            try {
                s.socket.shutdownOutput();
            } catch (IOException e) {
                reset(s, true);
                return;
            }
        }
        finishOrWatch(s);
    }

    private void finishOrWatch(NetStream s) {
        if (s.finished()) {
            forget(s);
            s.key.cancel();
            try {
                s.socket.close();
            } catch (IOException ignored) {
                // closed either way
            }
        } else {
            s.updateInterest();
        }
    }

    /** Ends a stream at once: the guest's connection is reset, and the host told unless it said so itself. */
    private void reset(NetStream s, boolean tellHost) {
        if (streams.get(s.channel) != s) {
            return;
        }
        // the stream and its socket first: whatever comes after throws, the program sees its reset and nothing more
        // is written
        forget(s);
        s.abort();
        if (tellHost) {
            outbox.later(new Message.NetReset(s.channel));
        }
        s.dropDown();
    }

    private void resetAll(boolean tellHost) {
        for (NetStream s : new ArrayList<>(streams.values())) {
            reset(s, tellHost);
        }
        capLogged = false;
    }

    /** The outbox drained below half its budget: streams paused for it are read again. */
    private void budgetFreed() {
        for (NetStream s : streams.values()) {
            if (s.starved) {
                s.starved = false;
                s.updateInterest();
            }
        }
    }

    /** Number of open streams (for tests). */
    int streamCount() throws InterruptedException {
        return onRelay(streams::size);
    }

    /** {@code what}, computed on the relay's thread, which alone may read its state (tests). */
    private <T> T onRelay(java.util.function.Supplier<T> what) throws InterruptedException {
        var f = new java.util.concurrent.CompletableFuture<T>();
        post(() -> f.complete(what.get()));
        try {
            return f.get();
        } catch (java.util.concurrent.ExecutionException e) {
            throw new IllegalStateException(e);
        }
    }

    /** The stream is over: the relay forgets it and its window goes back to the budget. */
    private void forget(NetStream s) {
        if (streams.remove(s.channel, s)) {
            downWindows.close(s.downWindow);
        }
    }

    /** What the relay has granted the host over all streams (for tests): at most {@link NetLink#DOWN_BUDGET}. */
    long granted() throws InterruptedException {
        return onRelay(downWindows::granted);
    }
}
