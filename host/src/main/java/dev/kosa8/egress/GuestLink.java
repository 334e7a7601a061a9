package dev.kosa8.egress;

import dev.kosa8.protocol.Codec;
import dev.kosa8.protocol.Limits;
import dev.kosa8.protocol.Message;
import dev.kosa8.protocol.NetLink;
import dev.kosa8.protocol.ProtocolException;
import io.netty.bootstrap.Bootstrap;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.WriteBufferWaterMark;
import io.netty.handler.codec.LengthFieldBasedFrameDecoder;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

/**
 * The daemon's end of a sandbox's network link ({@link NetLink}): connects to
 * the unix socket QEMU puts behind the guest's network port and hands each
 * stream the agent opens to the sandbox's {@link Broker}, as a connection to
 * the broker's socket for the stream's port ({@link LinkStream}). All of it
 * runs on one of the brokers' event loops: however many connections a guest
 * holds, it costs the host no process and no thread.
 *
 * <p>What the guest may say is narrow: open a stream to one of the four ports
 * (nothing names a sandbox, a socket or a host), send within the stream's
 * window, end or reset it. The link refuses a stream beyond
 * {@link Broker#MAX_CONNECTIONS} open ones, or {@link Broker#DNS_CONNECTIONS}
 * to DNS, counted apart (its connection is reset in the
 * guest; the audit log says so once) and one to a port with no listener; any
 * other breach of the protocol ends the link, and with it the guest's
 * network until its machine is next replaced or the daemon restarts. What the
 * guest sends while the daemon cannot send to it is not read.
 *
 * <p>Each connection to the port is a session: the link says Hello and drops
 * what the agent sent before its answer (a machine restored from a saved
 * state may still hold frames of its last session). A connection that breaks
 * before the answer is made again a few times (a frame cut in two by the last
 * session's end cannot be read past), each after {@link #AGAIN_AFTER}; one that
 * breaks after it is not.
 */
public final class GuestLink implements AutoCloseable {
    /** How long the agent may take to answer a Hello before the link connects again. */
    static final Duration HELLO_TIMEOUT = Duration.ofSeconds(30);
    /**
     * How long the link waits before it connects again: well past the agent's count of a host gone
     * ({@link Limits#HOST_GONE_MILLIS}), so that it drops what an earlier connection cut off mid-frame and reads the
     * next Hello from its start (sooner, the agent reads the Hello on as the rest of that frame). Three times it:
     * the agent counts in the guest's time, which stands still while the machine is stopped (a checkpoint's
     * instant), and a retry is rare (a connection the agent never answered).
     */
    static final Duration AGAIN_AFTER = Duration.ofMillis(3 * Limits.HOST_GONE_MILLIS);
    /** Connections made in a row that ended before the agent answered, after which the link gives up. */
    static final int ATTEMPTS = 5;
    /**
     * Bytes queued for the port beyond which it counts as full: the link then stops reading the agent's messages
     * and its streams stop reading the broker's sockets until the port has taken half of them.
     */
    static final int HIGH_WATER = 2 << 20;

    private final Ends ends;
    private final Path socket;
    /** The network window, null if the sandbox has none; each session starts it afresh. */
    private final NetWindow window;
    private final EventLoopGroup group;
    private final Consumer<String> log;
    private final CompletableFuture<Void> answered = new CompletableFuture<>();
    private volatile Channel channel;
    private volatile Session session;
    private volatile boolean closed;
    private volatile int attempts;

    /**
     * Where a link's streams go: the unix socket of each listener (null: none, and a stream to it is reset), and who
     * hears of a stream refused over its listener's cap. A sandbox's {@link Broker}; a template's
     * {@link NetRehearsal}.
     */
    record Ends(java.util.function.Function<Listener, Path> sockets, Consumer<Listener> overCap) {
    }

    private GuestLink(Ends ends, Path socket, NetWindow window, EventLoopGroup group, Consumer<String> log) {
        this.ends = ends;
        this.socket = socket;
        this.window = window;
        this.group = group;
        this.log = log;
    }

    /**
     * Connects to the port's socket and starts serving; the agent's answer comes when it comes.
     *
     * @param window the network window's file ({@code VmSpec.netWindow()}), or null to send every byte through the
     *               port; a window that cannot be opened is logged and left out
     */
    static GuestLink connect(Ends ends, Path socket, Path window, EventLoopGroup group, Consumer<String> log) {
        NetWindow w = null;
        try {
            w = NetWindow.open(window, m -> log.accept("network link: " + m));
        } catch (java.io.IOException e) {
            log.accept("network link: no window (" + e.getMessage() + "); every byte goes through the port");
        }
        GuestLink link = new GuestLink(ends, socket, w, group, log);
        link.connect();
        return link;
    }

    private void connect() {
        if (closed) {
            return;
        }
        attempts++;
        Session s = new Session();
        var f = new Bootstrap().group(group).channel(dev.kosa8.host.NettyTransport.CURRENT.domainSocket())
                .option(ChannelOption.WRITE_BUFFER_WATER_MARK, new WriteBufferWaterMark(HIGH_WATER / 2, HIGH_WATER))
                .handler(new io.netty.channel.ChannelInitializer<Channel>() {
                    @Override
                    protected void initChannel(Channel ch) {
                        ch.pipeline().addLast(new LengthFieldBasedFrameDecoder(Limits.MAX_FRAME, 0, Codec.HEADER, 0,
                                Codec.HEADER));
                        ch.pipeline().addLast(s);
                    }
                })
                .connect(dev.kosa8.host.NettyTransport.CURRENT.domainAddress(socket));
        channel = f.channel();
        session = s;
        f.addListener(done -> {
            if (!done.isSuccess()) {
                again("cannot connect to " + socket + ": " + done.cause().getMessage());
            }
        });
        if (closed) {
            channel.close();
        }
    }

    /** A connection ended before the agent answered: once more after a moment, or give up. */
    private void again(String why) {
        if (closed) {
            return;
        }
        if (attempts >= ATTEMPTS) {
            log.accept("network link: giving up after " + attempts + " tries (" + why + "); the sandbox has no "
                    + "network until it is restarted");
            answered.completeExceptionally(new IllegalStateException(why));
            return;
        }
        group.next().schedule((Runnable) this::connect, AGAIN_AFTER.toMillis(), TimeUnit.MILLISECONDS);
    }

    /** Completes when the agent has answered the link's Hello; fails when the link gives up or is closed first. */
    public CompletableFuture<Void> answered() {
        return answered;
    }

    /** Whether the agent answered the link's Hello within {@code timeout}: false when it gave up or closed first. */
    boolean answeredWithin(Duration timeout) {
        try {
            answered.get(timeout.toMillis(), TimeUnit.MILLISECONDS);
            return true;
        } catch (java.util.concurrent.TimeoutException | java.util.concurrent.ExecutionException e) {
            return false;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        }
    }

    /** The number of open streams (tests). */
    int streams() throws Exception {
        Session s = session;
        Channel c = channel;
        return c.eventLoop().submit(() -> s.streams.size()).get(5, TimeUnit.SECONDS);
    }

    /**
     * The bytes the daemon holds for this link (tests): queued for the port, and each stream's
     * ({@link LinkStream#buffered}).
     */
    long buffered() throws Exception {
        Session s = session;
        Channel c = channel;
        return c.eventLoop().submit(() -> {
            long n = c.unsafe().outboundBuffer() == null ? 0 : c.unsafe().outboundBuffer().totalPendingWriteBytes();
            for (LinkStream st : s.streams.values()) {
                n += st.buffered();
            }
            return n;
        }).get(30, TimeUnit.SECONDS); // a loaded host (the suite beside two guests) has taken over 5 s
    }

    /** Ends the link: every stream is reset in the guest, since its host side goes. */
    @Override
    public void close() {
        closed = true;
        answered.completeExceptionally(new IllegalStateException("the link was closed"));
        Channel c = channel;
        if (c != null) {
            c.close().awaitUninterruptibly(2000);
        }
        if (window != null) {
            window.close();
        }
    }

    /** One connection to the port: its Hello, its streams. Runs on its channel's event loop. */
    private final class Session extends ChannelInboundHandlerAdapter implements LinkStream.Link {
        private final Map<Integer, LinkStream> streams = new HashMap<>();
        private Channel ch;
        private boolean hello;
        private boolean flushing;
        private String ended = "the port's connection closed";

        @Override
        public void channelActive(ChannelHandlerContext ctx) {
            ch = ctx.channel();
            if (window != null) {
                window.newSession();
            }
            send(new Message.Hello(Limits.VERSION, "kosa8d", 0));
            ch.flush();
            ch.eventLoop().schedule(() -> {
                if (!hello && ch.isActive()) {
                    ended = "the agent did not answer within " + HELLO_TIMEOUT.toSeconds() + " s";
                    ch.close();
                }
            }, HELLO_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
            ctx.fireChannelActive();
        }

        @Override
        public void channelRead(ChannelHandlerContext ctx, Object msg) {
            ByteBuf frame = (ByteBuf) msg;
            Message m;
            try {
                m = Codec.decode(frame.nioBuffer());
            } finally {
                frame.release();
            }
            handle(m);
        }

        private void handle(Message m) {
            if (!hello) {
                if (m instanceof Message.Hello h) {
                    if (h.version() != Limits.VERSION) {
                        attempts = ATTEMPTS; // another connection would hear the same
                        throw new ProtocolException("the guest agent speaks protocol " + h.version() + ", this kosa8 "
                                + Limits.VERSION + "; rebuild the image with `kosa8 image build`");
                    }
                    hello = true;
                    attempts = 0;
                    answered.complete(null);
                }
                return; // anything before the answer is an earlier session's
            }
            switch (m) {
                case Message.NetOpen o -> open(o);
                case Message.Data d -> {
                    LinkStream s = streams.get(d.channel());
                    if (s != null) {
                        s.data(d);
                    }
                }
                case Message.Eof e -> {
                    LinkStream s = streams.get(e.channel());
                    if (s != null) {
                        s.eof(e);
                    }
                }
                case Message.Credit c -> {
                    LinkStream s = streams.get(c.channel());
                    if (s != null) {
                        s.credit(c);
                    }
                }
                case Message.NetReset r -> {
                    LinkStream s = streams.get(r.channel());
                    if (s != null) {
                        s.reset(false);
                    }
                }
                case Message.NetWindowReady r -> {
                    if (window != null) {
                        window.enable();
                    }
                }
                case Message.NetWindowReturn r -> {
                    if (window != null) {
                        window.giveBack(r); // one not lent under its serial (a late one) frees nothing
                    }
                }
                default -> throw new ProtocolException("the guest sent " + m.getClass().getSimpleName()
                        + " on the network link");
            }
        }

        private void open(Message.NetOpen o) {
            if (streams.containsKey(o.channel())) {
                throw new ProtocolException("stream " + o.channel() + " opened twice");
            }
            Listener l = Listener.ofGuestPort(o.port());
            Path target = l == null ? null : ends.sockets().apply(l);
            if (target == null) {
                send(new Message.NetReset(o.channel()));
                flushSoon();
                return;
            }
            if (open(l == Listener.DNS) >= GuestConnections.cap(l)) {
                ends.overCap().accept(l);
                send(new Message.NetReset(o.channel()));
                flushSoon();
                return;
            }
            LinkStream s = new LinkStream(o.channel(), l, this);
            streams.put(o.channel(), s);
            s.connect(ch, target);
        }

        /** The open streams to the DNS listener, or to the others: each kind has a cap of its own. */
        private long open(boolean dns) {
            return streams.values().stream().filter(s -> (s.listener() == Listener.DNS) == dns).count();
        }

        /**
         * The agent's messages are read, and the broker's sockets, only while the port takes the link's: what the
         * guest floods waits in the port, and what it does not read waits in the broker's sockets.
         */
        @Override
        public void channelWritabilityChanged(ChannelHandlerContext ctx) {
            boolean writable = ctx.channel().isWritable();
            ctx.channel().config().setAutoRead(writable);
            if (writable) {
                for (LinkStream s : new ArrayList<>(streams.values())) {
                    s.resume();
                }
            }
            ctx.fireChannelWritabilityChanged();
        }

        @Override
        public boolean writable() {
            return ch != null && ch.isWritable();
        }

        @Override
        public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
            Throwable c = cause instanceof io.netty.handler.codec.DecoderException && cause.getCause() != null
                    ? cause.getCause() : cause;
            ended = (c instanceof ProtocolException ? "" : c.getClass().getSimpleName() + ": ") + c.getMessage();
            ctx.close();
        }

        @Override
        public void channelInactive(ChannelHandlerContext ctx) {
            for (LinkStream s : new ArrayList<>(streams.values())) {
                s.drop();
            }
            streams.clear();
            if (closed) {
                return;
            }
            if (hello) {
                log.accept("network link ended: " + ended);
            } else {
                again(ended);
            }
        }

        @Override
        public void send(Message m) {
            if (ch != null && ch.isActive()) {
                ch.write(Unpooled.wrappedBuffer(Codec.encode(m)));
            }
        }

        @Override
        public void flushSoon() {
            if (!flushing && ch != null) {
                flushing = true;
                ch.eventLoop().execute(() -> {
                    flushing = false;
                    ch.flush();
                });
            }
        }

        @Override
        public NetWindow window() {
            return window;
        }

        @Override
        public void forget(LinkStream s) {
            streams.remove(s.channel(), s);
        }

        @Override
        public void log(String message) {
            log.accept("network link: " + message);
        }
    }
}
