package dev.kosa8.vm;

import dev.kosa8.protocol.FrameReader;
import dev.kosa8.protocol.FrameWriter;
import dev.kosa8.protocol.Limits;
import dev.kosa8.protocol.Message;
import dev.kosa8.protocol.ProtocolException;
import java.io.BufferedInputStream;
import java.io.BufferedOutputStream;
import java.io.IOException;
import java.net.UnixDomainSocketAddress;
import java.nio.channels.Channels;
import java.nio.channels.SocketChannel;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.BooleanSupplier;
import java.util.function.Consumer;

/**
 * The host's end of the agent protocol, over the unix socket QEMU puts behind
 * the agent's virtio-serial port. Multiplexes channels; everything the guest
 * sends is treated as hostile: frames are decoded with limits, and a guest
 * that sends output beyond its credit loses the connection.
 *
 * <p>Writes go through a queue drained by one writer thread, so a caller
 * (a Netty event loop, say) never blocks on a guest that is slow to read.
 * What can queue up is bounded by the protocol's windows.
 */
public final class AgentConnection implements AutoCloseable {
    private final SocketChannel socket;
    private final FrameReader reader;
    private final FrameWriter writer;
    private final LinkedBlockingQueue<Message> outbound = new LinkedBlockingQueue<>();
    private final AgentChannels channels = new AgentChannels(outbound::add);
    private final Map<Long, CompletableFuture<Void>> pings = new ConcurrentHashMap<>();
    /** The agent's Hello; replaced only by {@link #helloAgain}, for which the agent answers once more. */
    private volatile CompletableFuture<Message.Hello> hello = new CompletableFuture<>();
    private final CompletableFuture<String> closed = new CompletableFuture<>();
    private final java.util.concurrent.atomic.AtomicBoolean shuttingDown = new java.util.concurrent.atomic.AtomicBoolean();
    private final AtomicLong nonces = new AtomicLong();

    /**
     * Pongs and answers to asks queued for a guest that may not be reading: bounded, or floods of pings or
     * asks would fill the heap.
     */
    private final AtomicInteger pendingPongs = new AtomicInteger();
    private static final int MAX_PENDING_PONGS = 64;
    private final GuestAskGate asks = new GuestAskGate();

    private AgentConnection(SocketChannel socket) {
        this.socket = socket;
        this.reader = new FrameReader(new BufferedInputStream(Channels.newInputStream(socket), 1 << 18));
        this.writer = new FrameWriter(new BufferedOutputStream(Channels.newOutputStream(socket), 1 << 18));
        Thread.ofVirtual().name("agent-writer").start(this::writeLoop);
        Thread.ofVirtual().name("agent-reader").start(this::readLoop);
    }

    /**
     * Connects and waits for the agent's Hello.
     *
     * @param alive checked while waiting: false once QEMU has exited, which ends the wait at once
     * @throws AgentException if the agent does not answer in time, QEMU dies, or the versions differ
     */
    public static AgentConnection connect(Path socketPath, Duration timeout, BooleanSupplier alive) {
        return connect(socketPath, timeout, alive, c -> { });
    }

    /**
     * Connects, queues the Hello, lets {@code behindHello} queue requests
     * right behind it (sent with it, without waiting for the agent's Hello:
     * the agent serves them in order once it has answered), then waits for
     * the agent's Hello. If the agent turns out to speak another version, the
     * connection closes and those requests are never answered.
     */
    public static AgentConnection connect(Path socketPath, Duration timeout, BooleanSupplier alive,
                                          Consumer<AgentConnection> behindHello) {
        long deadline = System.nanoTime() + timeout.toNanos();
        AgentConnection c = open(socketPath, deadline, alive, behindHello);
        c.awaitHello(deadline, timeout, alive);
        return c;
    }

    /**
     * The first half of {@link #connect(Path, Duration, BooleanSupplier, Consumer)}: connects and queues the
     * Hello and what {@code behindHello} adds, without waiting for an answer. For a machine restored from a saved
     * state this is done before the machine runs (QEMU's socket takes the connection while it is stopped), so the
     * guest never sees its host go: the state was saved with the host connected, and QEMU tells the guest of a
     * change only if the connection differs from the saved one when the machine starts. Connected after it runs,
     * the guest was told its host had gone, racing the new connection: its agent read either the new host's Hello
     * in its old session (as in every restore seen in one CI run's guest logs) or the end of the session, then
     * polled the port every 20 ms until the new host came. Finish with {@link #awaitHello}.
     */
    public static AgentConnection open(Path socketPath, Duration timeout, BooleanSupplier alive,
                                       Consumer<AgentConnection> behindHello) {
        return open(socketPath, System.nanoTime() + timeout.toNanos(), alive, behindHello);
    }

    private static AgentConnection open(Path socketPath, long deadline, BooleanSupplier alive,
                                        Consumer<AgentConnection> behindHello) {
        SocketChannel ch = null;
        while (ch == null) {
            try {
                ch = SocketChannel.open(UnixDomainSocketAddress.of(socketPath));
            } catch (IOException e) {
                if (System.nanoTime() > deadline || !alive.getAsBoolean()) {
                    throw new AgentException("cannot connect to the agent's socket " + socketPath + ": " + e.getMessage());
                }
                sleep(20);
            }
        }
        AgentConnection c = new AgentConnection(ch);
        c.outbound.add(new Message.Hello(Limits.VERSION, "kosa8d", 0));
        behindHello.accept(c);
        return c;
    }

    /**
     * Waits for the agent's Hello on a connection from {@link #open}; on any failure the connection is closed.
     *
     * @throws AgentException if the agent does not answer in time, QEMU dies, or the versions differ
     */
    public void awaitHello(Duration timeout, BooleanSupplier alive) {
        awaitHello(System.nanoTime() + timeout.toNanos(), timeout, alive);
    }

    private void awaitHello(long deadline, Duration timeout, BooleanSupplier alive) {
        while (true) {
            try {
                Message.Hello h = hello.get(100, TimeUnit.MILLISECONDS);
                if (h.version() != Limits.VERSION) {
                    close();
                    throw new AgentException("the guest agent speaks protocol version " + h.version()
                            + ", this kosa8 speaks " + Limits.VERSION + "; rebuild the image with `kosa8 image build`");
                }
                return;
            } catch (TimeoutException e) {
                if (closed.isDone()) {
                    throw new AgentException("the agent connection closed during the handshake: " + closed.getNow(""));
                }
                if (!alive.getAsBoolean()) {
                    close();
                    throw new AgentException("QEMU exited, or the guest failed to boot, before the agent answered");
                }
                if (System.nanoTime() > deadline) {
                    close();
                    throw new AgentException("the agent did not answer within " + timeout.toSeconds() + " s");
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                close();
                throw new AgentException("interrupted while waiting for the agent");
            } catch (java.util.concurrent.ExecutionException e) {
                close();
                throw new AgentException("agent handshake failed: " + e.getCause().getMessage());
            }
        }
    }

    /**
     * Says Hello again on this connection and waits for the agent's answer:
     * what the agent of a restored machine reads, the daemon that connects
     * to it being a new host in the session the saved state was in. A
     * template rehearses that wake with it ({@code Templates}). Outside
     * this call a second Hello from the agent still breaks the protocol.
     *
     * @throws AgentException if the agent does not answer within {@code timeout} or the connection ends
     */
    public void helloAgain(Duration timeout) {
        CompletableFuture<Message.Hello> again = new CompletableFuture<>();
        hello = again;
        if (shuttingDown.get()) { // set before shutdown fails the Hello it finds: it found this one, or this sees it
            throw new AgentException("the agent connection has ended: " + closed.getNow("it is closing"));
        }
        outbound.add(new Message.Hello(Limits.VERSION, "kosa8d", 0));
        try {
            again.get(timeout.toMillis(), TimeUnit.MILLISECONDS);
        } catch (TimeoutException e) {
            throw new AgentException("the agent did not answer a second Hello within " + timeout.toSeconds() + " s");
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AgentException("interrupted while waiting for the agent");
        } catch (java.util.concurrent.ExecutionException e) {
            throw new AgentException("the agent connection ended during a second Hello: "
                    + e.getCause().getMessage());
        }
    }

    public Message.Hello agentHello() {
        return hello.getNow(null);
    }

    /**
     * Opens a channel whose messages from the agent go to {@code listener}
     * (called on the reader thread; it must not block). The channel is
     * forgotten after its Exited or Failed.
     */
    public int open(Consumer<Message> listener) {
        return open(listener, Limits.INITIAL_WINDOW);
    }

    /**
     * {@link #open(Consumer)} for a stream whose output window is {@code window} bytes (a published port's is
     * {@link dev.kosa8.protocol.PortLink#WINDOW}): output beyond it breaks the protocol.
     */
    public int open(Consumer<Message> listener, int window) {
        int id = channels.open(listener, window);
        if (shuttingDown.get() && channels.forget(id)) {
            // the connection died before or while we registered: say so instead of waiting forever
            listener.accept(new Message.Failed(id, Message.ErrorCode.INTERNAL,
                    "lost the connection to the sandbox: " + closed.getNow("the agent connection is closed")));
        }
        return id;
    }

    /** Queues a message for the agent. */
    public void send(Message m) {
        channels.sending(m);
        outbound.add(m);
    }

    /**
     * Who serves the guest's asks for turn checkpoints (docs/agents.md); null: none, every ask is refused. Called
     * on a thread of its own, one ask at a time.
     */
    public void onAsk(java.util.function.Function<Message.Ask, Message.Answer> handler) {
        asks.handler(handler);
    }

    /** Sends an answer the guest did not just ask for: to the asks a restored machine woke up waiting on. */
    public void answer(Message.Answer a) {
        reply(a);
    }

    private void reply(Message.Answer a) {
        if (pendingPongs.incrementAndGet() > MAX_PENDING_PONGS) {
            throw new ProtocolException("the guest sends asks without reading the answers");
        }
        outbound.add(a);
    }

    /** Forgets a channel whose consumer went away; its process is hung up. */
    public void abandon(int channel) {
        if (channels.forget(channel)) {
            outbound.add(new Message.Signal(channel, 1));
        }
    }

    /**
     * After a rewind: the guest runs from a RAM in which none of the channels
     * opened since the checkpoint exist. Each is told so (Failed) and
     * forgotten; the connection itself goes on. Channels are numbered upwards
     * and never reused, so a channel the restored agent still knows cannot be
     * mistaken for a new one.
     */
    public void rewound(String checkpoint) {
        failOpenChannels(Message.ErrorCode.REWOUND, "the sandbox was rewound to checkpoint " + checkpoint);
    }

    /** Each open channel is told {@code why} with {@code code}, and forgotten. */
    void failOpenChannels(Message.ErrorCode code, String why) {
        channels.failAll(code, Messages.fitText(why));
    }

    /** Round trip to the agent and back. */
    public Duration ping(Duration timeout) {
        long nonce = nonces.incrementAndGet();
        CompletableFuture<Void> f = new CompletableFuture<>();
        pings.put(nonce, f);
        long start = System.nanoTime();
        outbound.add(new Message.Ping(nonce));
        try {
            f.get(timeout.toMillis(), TimeUnit.MILLISECONDS);
            return Duration.ofNanos(System.nanoTime() - start);
        } catch (TimeoutException e) {
            throw new AgentException("the agent did not answer a ping within " + timeout.toMillis() + " ms");
        } catch (Exception e) {
            throw new AgentException("the agent connection is gone");
        } finally {
            pings.remove(nonce);
        }
    }

    /** Completes, with the reason, when the connection ends. */
    public CompletableFuture<String> closedFuture() {
        return closed;
    }

    public boolean isOpen() {
        return !shuttingDown.get();
    }

    private void readLoop() {
        String reason = "the agent closed the connection";
        try {
            Message m;
            while ((m = reader.read()) != null) {
                route(m);
            }
        } catch (ProtocolException e) {
            reason = "the guest broke the protocol: " + e.getMessage();
        } catch (IOException e) {
            reason = "the agent connection failed: " + e.getMessage();
        } finally {
            shutdown(reason);
        }
    }

    private void route(Message m) {
        switch (m) {
            case Message.Hello h -> {
                if (!hello.complete(h)) {
                    throw new ProtocolException("a second Hello");
                }
            }
            case Message.Pong p -> {
                CompletableFuture<Void> f = pings.get(p.nonce());
                if (f != null) {
                    f.complete(null);
                }
            }
            case Message.Ping p -> {
                if (pendingPongs.incrementAndGet() > MAX_PENDING_PONGS) {
                    throw new ProtocolException("the guest sends pings without reading the answers");
                }
                outbound.add(new Message.Pong(p.nonce()));
            }
            case Message.Ask a -> asks.received(a, this::reply);
            case Message.Answer a -> throw new ProtocolException("the guest may not answer asks");
            case Message.Exec e -> throw new ProtocolException("the guest may not start processes on the host");
            case Message.PutFile p -> throw new ProtocolException("the guest may not write host files");
            case Message.GetFile g -> throw new ProtocolException("the guest may not read host files");
            case Message.FileRequest f -> throw new ProtocolException("the guest may not work on host files");
            case Message.FileEntries f -> channels.bounded(f);
            case Message.WatchEvents e -> channels.bounded(e);
            case Message.MountWorkspace mw -> throw new ProtocolException("the guest may not mount on the host");
            case Message.Freeze f -> throw new ProtocolException("the guest may not freeze the host");
            case Message.Thaw t -> throw new ProtocolException("the guest may not thaw the host");
            case Message.NetOpen _, Message.NetReset _, Message.NetWindowReady _, Message.NetWindowData _,
                 Message.NetWindowReturn _ -> throw new ProtocolException("network streams have a port of their own");
            case Message.Connect c -> throw new ProtocolException("the guest may not open connections on the host");
            case Message.Signal s -> throw new ProtocolException("the guest may not signal the host");
            case Message.Resize r -> throw new ProtocolException("the guest may not resize the host's terminal");
            case Message.Data d -> {
                if (d.stream() == Message.Stream.STDIN) {
                    throw new ProtocolException("the guest may not send stdin");
                }
                channels.output(d);
            }
            case Message.Exited x -> channels.last(x);
            case Message.Failed f -> {
                if (f.code() == Message.ErrorCode.REWOUND) {
                    // the host's own word to its clients ({@link #rewound}): a guest saying it would make them
                    // believe the sandbox was rewound (kosa8 agent would reopen its agent, again and again)
                    throw new ProtocolException("the guest may not say the sandbox was rewound");
                }
                channels.last(f);
            }
            case Message.Started s -> channels.control(s);
            case Message.Eof e -> channels.control(e);
            case Message.FileInfo f -> channels.control(f);
            case Message.Credit c -> {
                if (c.stream() != Message.Stream.STDIN) {
                    throw new ProtocolException("the guest may only credit stdin");
                }
                channels.stdinCredit(c);
            }
        }
    }

    private void writeLoop() {
        try {
            while (true) {
                Message m = outbound.take();
                if (m == POISON) {
                    return;
                }
                writer.write(m);
                if (m instanceof Message.Pong || m instanceof Message.Answer) {
                    pendingPongs.decrementAndGet();
                }
            }
        } catch (IOException e) {
            shutdown("writing to the agent failed: " + e.getMessage());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private static final Message POISON = new Message.Ping(Long.MIN_VALUE);

    private void shutdown(String reason) {
        if (!shuttingDown.compareAndSet(false, true)) {
            return;
        }
        try {
            socket.close();
        } catch (IOException ignored) {
            // closing anyway
        }
        outbound.add(POISON);
        AgentException gone = new AgentException(reason);
        hello.completeExceptionally(gone);
        pings.values().forEach(f -> f.completeExceptionally(gone));
        channels.failAll(Message.ErrorCode.INTERNAL, Messages.fitText("lost the connection to the sandbox: " + reason));
        // last, so whoever waits on it sees every channel already failed
        closed.complete(reason);
    }

    @Override
    public void close() {
        shutdown("closed by the host");
    }

    private static void sleep(long ms) {
        try {
            Thread.sleep(ms);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** The agent could not be reached or broke the protocol. */
    public static final class AgentException extends RuntimeException {
        public AgentException(String message) {
            super(message);
        }
    }
}
