package dev.kosa8.egress;

import dev.kosa8.protocol.Message;
import dev.kosa8.protocol.NetLink;
import dev.kosa8.protocol.ProtocolException;
import dev.kosa8.protocol.ReceiveWindow;
import io.netty.bootstrap.Bootstrap;
import io.netty.buffer.ByteBuf;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelOption;
import io.netty.channel.socket.ChannelInputShutdownEvent;
import io.netty.channel.socket.DuplexChannel;
import io.netty.util.ReferenceCountUtil;
import java.nio.file.Path;
import java.util.ArrayDeque;

/**
 * One guest connection on the daemon's side: a stream of the network link
 * joined to a connection to the broker's socket for its port, exactly as a
 * connection that came through QEMU's relay was. Runs on its link's event
 * loop alone, so it needs no locks.
 *
 * <p>Flow control both ways, one window per direction ({@link NetLink#WINDOW} from the guest; towards it, from
 * {@link NetLink#OPEN_WINDOW} as the agent grows it up to {@link NetLink#DOWN_WINDOW}):
 * the guest's bytes are credited back once written into the broker's socket,
 * so the daemon holds at most one window of them per stream; the broker's
 * bytes are read only while the guest has window left and the link's port
 * takes what is written to it ({@link Link#writable}), and at most one read is
 * held back for want of window. So a guest that stops reading its port holds
 * in the daemon what the port's connection buffers ({@link GuestLink#HIGH_WATER})
 * and a read or two per stream, not a window per stream; a stream whose broker
 * side has ended is read to its end (Netty drains a socket once its peer
 * has shut it), at most what the broker's socket buffers
 * ({@link Broker#GUEST_SEND_BUFFER}, doubled by the kernel: one window).
 */
final class LinkStream {
    /** What a stream needs of its link's session. */
    interface Link {
        /** Queues a message for the agent; {@link #flushSoon} sends what is queued. */
        void send(Message m);

        void flushSoon();

        /** The stream is over: the session forgets it. */
        void forget(LinkStream s);

        void log(String message);

        /** Whether the link's port takes more now; when it does again the session {@link #resume}s its streams. */
        boolean writable();

        /** The session's network window, through which larger pieces go; null if the sandbox has none. */
        NetWindow window();
    }

    /** The least the broker's socket is read for at once. */
    static final int MIN_READ = 512;

    private final int channel;
    private final Listener listener;
    private final Link link;
    private final ReceiveWindow upWindow = new ReceiveWindow(NetLink.WINDOW);
    /** The guest's bytes that arrived before the broker's socket was connected. */
    private final ArrayDeque<ByteBuf> early = new ArrayDeque<>();
    private Channel broker;
    private boolean connected;
    /** The guest's side ended writing (its Eof came); once written, the broker's socket is shut for writing. */
    private boolean upEof;
    private boolean upShut;
    /**
     * Bytes the guest may still be sent: {@link NetLink#OPEN_WINDOW} at first, and what the agent credits, which
     * grows the window up to {@link NetLink#DOWN_WINDOW} as the agent's budget allows.
     */
    private int downWindow = NetLink.OPEN_WINDOW;
    /** A read from the broker not yet sent for want of window. */
    private ByteBuf held;
    /** The broker's side ended (end of file or closed); its Eof is sent once {@link #held} is. */
    private boolean downEof;
    private boolean downSent;
    /** The guest's bytes written towards the broker's socket and not yet taken by it. */
    private long upPending;
    /** The broker's socket is closed: nothing more can reach it. */
    private boolean brokerClosed;
    private boolean over;

    LinkStream(int channel, Listener listener, Link link) {
        this.channel = channel;
        this.listener = listener;
        this.link = link;
    }

    int channel() {
        return channel;
    }

    /** The broker's listener the stream leads to. */
    Listener listener() {
        return listener;
    }

    /** Connects to the broker's socket for the stream's port, on the link's event loop. */
    void connect(Channel linkChannel, Path socket) {
        ChannelFuture f = new Bootstrap().group(linkChannel.eventLoop()).channel(dev.kosa8.host.NettyTransport.CURRENT.domainSocket())
                .option(ChannelOption.AUTO_READ, false)
                .option(ChannelOption.RCVBUF_ALLOCATOR, new StreamReads(this::readSize))
                .handler(new FromBroker())
                .connect(dev.kosa8.host.NettyTransport.CURRENT.domainAddress(socket));
        broker = f.channel();
        // half-closed streams, set on the configuration itself: NIO's domain socket has the setting but does not
        // take it as a channel option (it would warn and go on closing the whole channel at the broker's end)
        ((io.netty.channel.socket.DuplexChannelConfig) broker.config()).setAllowHalfClosure(true);
        f.addListener(done -> {
            if (!done.isSuccess()) {
                link.log("cannot reach the broker's socket " + socket + ": " + done.cause().getMessage());
                reset(true);
                return;
            }
            connected = true;
            while (!early.isEmpty()) {
                writeUp(early.poll());
            }
            broker.flush();
            shutUpIfDone();
            readIfRoom();
        });
    }

    // --- what the agent sent for this stream ---

    void data(Message.Data d) {
        if (d.stream() != Message.Stream.STDOUT) {
            throw new ProtocolException("the guest may only send its own bytes on stream " + channel);
        }
        if (upEof) {
            throw new ProtocolException("bytes after the end of stream " + channel);
        }
        upWindow.received(d.bytes().length);
        if (d.bytes().length == 0) {
            return; // nothing to write and nothing to credit back (a credit of 0 bytes is not a message)
        }
        if (brokerClosed) {
            // the broker's side is gone: the guest's connection is reset, as a TCP peer that closed resets a
            // writer, and its program stops sending into nothing
            reset(true);
            return;
        }
        ByteBuf b = io.netty.buffer.Unpooled.wrappedBuffer(d.bytes());
        if (!connected) {
            early.add(b);
        } else {
            writeUp(b);
            broker.flush();
        }
    }

    void eof(Message.Eof e) {
        if (e.stream() != Message.Stream.STDOUT) {
            throw new ProtocolException("the guest may only end its own bytes on stream " + channel);
        }
        upEof = true;
        if (brokerClosed) {
            upShut = true;
            finishIfDone();
            return;
        }
        shutUpIfDone();
    }

    void credit(Message.Credit c) {
        if (c.stream() != Message.Stream.STDIN) {
            throw new ProtocolException("the guest may only credit the bytes it was sent on stream " + channel);
        }
        if (downWindow + c.bytes() > NetLink.DOWN_WINDOW) {
            throw new ProtocolException("the guest credited stream " + channel + " more than it was sent");
        }
        downWindow += c.bytes();
        sendHeld();
        readIfRoom();
    }

    /** Ends the stream at once, its broker connection closed; the agent is told unless it said so. */
    void reset(boolean tellAgent) {
        if (over) {
            return;
        }
        over = true;
        if (tellAgent) {
            link.send(new Message.NetReset(channel));
        }
        release();
        if (broker != null) {
            broker.close();
        }
        link.forget(this);
    }

    /** The link ended: the stream goes with it, its broker connection closed. */
    void drop() {
        over = true;
        release();
        if (broker != null) {
            broker.close();
        }
    }

    // --- towards the broker ---

    private void writeUp(ByteBuf b) {
        int n = b.readableBytes();
        upPending += n;
        broker.write(b).addListener(w -> {
            upPending -= n;
            if (over) {
                return;
            }
            if (w.isSuccess()) {
                upWindow.consumed(n);
                link.send(new Message.Credit(channel, Message.Stream.STDOUT, n));
                link.flushSoon();
            } else {
                reset(true);
            }
        });
    }

    private void shutUpIfDone() {
        if (upEof && connected && !upShut && early.isEmpty()) {
            upShut = true;
            ((DuplexChannel) broker).shutdownOutput().addListener(f -> finishIfDone());
        }
    }

    // --- from the broker ---

    /** The link's port takes more again: the broker's side is read if the guest's window has room. */
    void resume() {
        readIfRoom();
    }

    /**
     * Bytes this stream holds in the daemon (tests): the guest's not yet written into the broker's socket, and the
     * broker's not yet sent for want of window.
     */
    long buffered() {
        long n = held == null ? 0 : held.readableBytes();
        for (ByteBuf b : early) {
            n += b.readableBytes();
        }
        return n + upPending;
    }

    private void readIfRoom() {
        if (connected && !over && !downEof && held == null && downWindow > 0 && link.writable()) {
            broker.read();
        }
    }

    /**
     * Sends what is held as far as the window goes: through a slot of the network window where it takes the piece
     * ({@link NetWindow#takes}, at most {@link NetLink#SLOT_DATA} a slot), else in frames of at most
     * {@link NetLink#CHUNK} through the port. Once the broker's side has ended, {@link #held} may hold a whole socket
     * buffer (Netty reads it to the end), far more than one {@link Message.Data} may carry, and one credit may open
     * a window of up to {@link NetLink#DOWN_WINDOW}.
     */
    private void sendHeld() {
        if (held == null) {
            return;
        }
        boolean sent = false;
        NetWindow window = link.window();
        while (downWindow > 0 && held.isReadable()) {
            int n = Math.min(downWindow, held.readableBytes());
            Message.NetWindowData lent = window != null && window.takes(n)
                    ? window.lend(channel, held, Math.min(n, NetLink.SLOT_DATA)) : null;
            if (lent != null) {
                downWindow -= lent.count();
                link.send(lent);
            } else {
                byte[] bytes = new byte[Math.min(NetLink.CHUNK, n)];
                held.readBytes(bytes);
                downWindow -= bytes.length;
                link.send(new Message.Data(channel, Message.Stream.STDIN, bytes));
            }
            sent = true;
        }
        if (sent) {
            link.flushSoon();
        }
        if (!held.isReadable()) {
            held.release();
            held = null;
            sendEofIfDone();
        }
    }

    /**
     * How much one read of the broker's socket asks for: what the guest's window has room for, so a read is sent at
     * once and not held, up to a window slot while one is free, else up to what one Data on the port carries (so
     * what the daemon holds for a guest that keeps every slot and stops reading its port is what it held before the
     * window: the port's queue and a read or two of {@link NetLink#CHUNK} per stream).
     */
    int readSize() {
        if (downWindow <= 0 || held != null) {
            return NetLink.CHUNK; // the drain after the broker's end, which reads whatever the window
        }
        NetWindow window = link.window();
        int most = window != null && window.takes(NetWindow.THRESHOLD) ? NetLink.SLOT_DATA : NetLink.CHUNK;
        return Math.max(MIN_READ, Math.min(most, downWindow));
    }

    private void sendEofIfDone() {
        if (downEof && held == null && !downSent && !over) {
            downSent = true;
            link.send(new Message.Eof(channel, Message.Stream.STDIN));
            link.flushSoon();
            finishIfDone();
        }
    }

    /**
     * Both ways over: the broker's end of file passed on to the guest, and the guest's to the broker (or the
     * broker closed after it). A stream whose broker closed stays counted until the guest's side ends, or is
     * reset when the guest sends into it.
     */
    private void finishIfDone() {
        if (!over && downSent && upShut) {
            over = true;
            release();
            broker.close();
            link.forget(this);
        }
    }

    private void release() {
        if (held != null) {
            held.release();
            held = null;
        }
        while (!early.isEmpty()) {
            early.poll().release();
        }
    }

    private final class FromBroker extends ChannelInboundHandlerAdapter {
        @Override
        public void channelRead(ChannelHandlerContext ctx, Object msg) {
            if (!(msg instanceof ByteBuf b) || over) {
                ReferenceCountUtil.release(msg);
                return;
            }
            // one read per request, but once the broker's side has ended Netty reads its socket to the end whatever
            // was requested: what comes then is kept behind what is held, at most the socket's buffer
            if (held == null) {
                held = b;
            } else {
                // one flat list of reads, however many the drain after the broker's end brings
                io.netty.buffer.CompositeByteBuf all = held instanceof io.netty.buffer.CompositeByteBuf c ? c
                        : ctx.alloc().compositeBuffer(Integer.MAX_VALUE).addComponent(true, held);
                held = all.addComponent(true, b);
            }
            sendHeld();
        }

        @Override
        public void channelReadComplete(ChannelHandlerContext ctx) {
            readIfRoom();
        }

        @Override
        public void userEventTriggered(ChannelHandlerContext ctx, Object evt) {
            if (evt instanceof ChannelInputShutdownEvent) {
                downEof = true;
                sendEofIfDone();
            }
            ctx.fireUserEventTriggered(evt);
        }

        @Override
        public void channelInactive(ChannelHandlerContext ctx) {
            brokerClosed = true;
            downEof = true;
            if (upEof) {
                upShut = true;
            }
            sendEofIfDone();
            finishIfDone();
        }

        @Override
        public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
            ctx.close();
        }
    }
}
