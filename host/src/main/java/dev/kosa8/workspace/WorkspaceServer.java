package dev.kosa8.workspace;

import dev.kosa8.host.KosaException;
import dev.kosa8.protocol.Ws9p;
import java.io.IOException;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.SocketChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Consumer;

/**
 * The 9P2000.L server of one sandbox's folder, run by the daemon. It
 * connects to the unix socket behind the workspace's virtio-serial port
 * (QEMU listens on it), reads 9p requests from the guest kernel (through the
 * agent's relay), serves them on a pool of threads, and writes the replies
 * back in whatever order they finish, as 9p allows.
 *
 * <p>Nothing the guest sends can crash or hang the server: a frame larger
 * than the negotiated msize or shorter than a header closes the connection
 * (the stream cannot be resynchronised), a malformed body is answered with
 * an Rlerror, the fid table is bounded, and each request holds one buffer of
 * at most msize bytes from a fixed pool, so memory stays bounded whatever
 * the guest queues.
 *
 * <p>State for checkpoints (see docs/workspace.md): {@link #idle()} tells
 * whether a request is being served, {@link #pause}/{@link #resume} hold new
 * requests back, and {@link #snapshot()}/{@link #restore} capture and rebuild
 * the fid table and open files.
 */
public final class WorkspaceServer implements AutoCloseable {
    /**
     * The largest 9p message, {@link Ws9p#MSIZE}: 1 MiB of data and Linux's allowance for an I/O
     * message's header ({@code P9_IOHDRSZ}, 24 bytes). Linux asks for at most msize - 24 bytes in one
     * Tread or Twrite, so a program's 1 MiB block is one request, not a request of 1 MiB - 24 and one
     * of 24 bytes (a whole round trip for nothing, about a sixth of a 1 GiB read's time under TCG). The
     * guest's fd transport (the relay's mount) takes 1 MiB at most; its kernel clamps the mount to that.
     */
    public static final int MSIZE = Ws9p.MSIZE;
    private static final int WORKERS = 8;
    /** A Twrite at least this long, and not yet all in, is read on straight into its request buffer. */
    private static final int DIRECT_READ = 64 * 1024;

    private final SocketChannel channel;
    /** Where large Rreads' data goes past the port; null when QEMU gives the guest none. */
    private final ReadWindow window;
    /** Where large Twrites' data comes past the port; null when QEMU gives the guest none. */
    private final WriteWindow writes;
    private final int rootFd;
    private final P9Operations ops;
    private final Consumer<String> log;
    private final ExecutorService workers;
    /** Requests: twice the workers, so the reader can read on while every worker is busy. */
    private final BufferPool requests = new BufferPool(WORKERS * 2, MSIZE);
    private final BufferPool replies = new BufferPool(WORKERS, MSIZE);
    private final ReentrantLock writeLock = new ReentrantLock();
    private final AtomicInteger inFlight = new AtomicInteger();
    private final Map<Integer, CountDownLatch> running = new ConcurrentHashMap<>();
    private final Object pauseLock = new Object();
    private boolean paused;
    private volatile boolean closed;
    private final AtomicBoolean closing = new AtomicBoolean();
    /** Held by {@link #restore} and while {@link #close} marks the server closed: no restore runs past a close. */
    private final Object lifecycle = new Object();
    private final Thread reader;
    /** Until a Tversion arrives, what comes is dropped: see {@link #start}. */
    private volatile boolean awaitingVersion;
    /** How many bytes were dropped so; the reader's alone. */
    private long skipped;
    /** Window messages that named nothing lent out; the reader's alone. */
    private long strayReturns;
    /** Quiet clunks that named no fid or did not fit; the reader's alone. */
    private long strayClunks;

    private WorkspaceServer(SocketChannel channel, ReadWindow window, WriteWindow writes, int rootFd,
                            Consumer<String> log, boolean awaitingVersion) {
        this.channel = channel;
        this.window = window;
        this.writes = writes;
        this.awaitingVersion = awaitingVersion;
        this.rootFd = rootFd;
        this.log = log;
        this.ops = new P9Operations(rootFd, ownerUid(), umask(), MSIZE, log);
        this.workers = Executors.newFixedThreadPool(WORKERS, r -> {
            Thread t = new Thread(r, "ws9p-worker");
            t.setDaemon(true);
            return t;
        });
        this.reader = new Thread(this::readLoop, "ws9p-reader");
        this.reader.setDaemon(true);
    }

    /**
     * Serves {@code folder} to the guest behind {@code socket}, as a new
     * session: bytes before the guest's first Tversion are dropped, not
     * served. A server started for a guest that was already talking to
     * another one (the daemon restarted) may first receive the rest of a
     * request half-sent to the old server, and requests for fids it never
     * heard of; it skips them until the agent has the folder mounted afresh.
     * A server that is given the guest's session instead ({@link #restore})
     * serves everything.
     *
     * @param window  the read window QEMU gives the guest ({@code VmSpec.workspaceWindow()}), or null
     * @param writes  the write window QEMU gives the guest ({@code VmSpec.workspaceWrites()}), or null
     * @param timeout how long to keep trying to connect (QEMU may still be creating the socket)
     */
    public static WorkspaceServer start(Path folder, Path socket, Path window, Path writes, Duration timeout,
                                        Consumer<String> log) {
        WorkspaceServer s = connect(folder, socket, window, writes, timeout, log);
        s.serve();
        return s;
    }

    /**
     * As {@link #start}, but reads nothing from the guest until {@link #serve}:
     * a restore connects the server before its machine runs, and the guest's
     * requests wait (in the port and the relay) while the folder and the fid
     * table are put back beside the guest's first steps.
     */
    public static WorkspaceServer connect(Path folder, Path socket, Path window, Path writes, Duration timeout,
                                          Consumer<String> log) {
        if (!LinuxFs.AVAILABLE) {
            throw new KosaException(KosaException.Kind.HOST, "sharing a folder needs Linux on x86-64 here",
                    "pass --workspace none");
        }
        int root;
        try {
            root = LinuxFs.openRoot(folder.toString());
        } catch (ErrnoException e) {
            throw new KosaException(KosaException.Kind.USAGE, "cannot open the workspace " + folder + ": "
                    + e.getMessage(), "check the folder exists and is yours, or pass --workspace none");
        }
        ReadWindow w = null;
        WriteWindow ww = null;
        try {
            w = openWindow(window);
            ww = openWrites(writes, log);
            SocketChannel ch = connect(socket, timeout);
            return new WorkspaceServer(ch, w, ww, root, log, true);
        } catch (RuntimeException e) {
            if (w != null) {
                w.close();
            }
            if (ww != null) {
                ww.close();
            }
            closeQuietly(root);
            throw e;
        }
    }

    /** For tests: serves {@code folder} over an already connected channel, from the first byte on. */
    static WorkspaceServer serve(Path folder, SocketChannel ch, Consumer<String> log) throws ErrnoException {
        return serve(folder, ch, log, false);
    }

    /** For tests: serves {@code folder} over an already connected channel, as {@link #start} does if asked. */
    static WorkspaceServer serve(Path folder, SocketChannel ch, Consumer<String> log, boolean newSession)
            throws ErrnoException {
        return serve(folder, ch, null, null, log, newSession);
    }

    /** For tests: as {@link #serve(Path, SocketChannel, Consumer, boolean)}, with read and write window files. */
    static WorkspaceServer serve(Path folder, SocketChannel ch, Path window, Path writes, Consumer<String> log,
                                 boolean newSession) throws ErrnoException {
        WorkspaceServer s = new WorkspaceServer(ch, openWindow(window), openWrites(writes, log),
                LinuxFs.openRoot(folder.toString()), log, newSession);
        s.reader.start();
        return s;
    }

    private static ReadWindow openWindow(Path window) {
        try {
            return ReadWindow.open(window);
        } catch (IOException e) {
            throw new KosaException(KosaException.Kind.VM, "cannot open the workspace's read window " + window + ": "
                    + e.getMessage(), "see `kosa8 logs ID`");
        }
    }

    /**
     * The write window, or null without one. A sandbox whose QEMU a daemon from before the write window
     * started has none (a new daemon re-attaching to it after an upgrade): its agent, as old, never sends
     * a Twritew, and the server serves it without.
     */
    private static WriteWindow openWrites(Path writes, Consumer<String> log) {
        if (writes != null && !Files.exists(writes)) {
            log.accept("no write window at " + writes + " (a QEMU started before there was one); large writes come"
                    + " through the port");
            return null;
        }
        try {
            return WriteWindow.open(writes);
        } catch (IOException e) {
            throw new KosaException(KosaException.Kind.VM, "cannot open the workspace's write window " + writes + ": "
                    + e.getMessage(), "see `kosa8 logs ID`");
        }
    }

    private static SocketChannel connect(Path socket, Duration timeout) {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (true) {
            try {
                SocketChannel ch = SocketChannel.open(StandardProtocolFamily.UNIX);
                try {
                    ch.connect(UnixDomainSocketAddress.of(socket));
                    return ch;
                } catch (IOException e) {
                    ch.close();
                    throw e;
                }
            } catch (IOException e) {
                if (System.nanoTime() > deadline) {
                    throw new KosaException(KosaException.Kind.VM, "cannot connect to the workspace port at "
                            + socket + ": " + e.getMessage(), "see `kosa8 logs ID`");
                }
                try {
                    Thread.sleep(20);
                } catch (InterruptedException ie) {
                    Thread.currentThread().interrupt();
                    throw new KosaException(KosaException.Kind.VM, "interrupted", "");
                }
            }
        }
    }

    private void readLoop() {
        // requests are at most MSIZE; twice that lets a partly read frame sit beside a whole one
        ByteBuffer in = ByteBuffer.allocateDirect(2 * MSIZE);
        try {
            while (!closed) {
                if (channel.read(in) < 0) {
                    log.accept("the guest side closed (the sandbox stopped or unmounted)");
                    return;
                }
                in.flip();
                if (awaitingVersion && !skipToVersion(in)) {
                    in.compact();
                    continue;
                }
                while (true) {
                    int length = P9Codec.frameLength(in, ops.msize());
                    if (length < 0) {
                        break;
                    }
                    int type = in.remaining() > 4 ? in.get(in.position() + 4) & 0xff : -1;
                    if (in.remaining() < length) {
                        if (type == P9Codec.TWRITE && length >= DIRECT_READ) {
                            readRestOfWrite(in, length);
                            continue;
                        }
                        break;
                    }
                    boolean ofWindow = type == Ws9p.TWINDOW || type == Ws9p.TRETURN;
                    if (ofWindow || type == Ws9p.TQUIET || type == Ws9p.TCLUNKQ) {
                        // the relay's own messages, served here in the order they came
                        ByteBuffer m = in.slice(in.position(), length).order(ByteOrder.LITTLE_ENDIAN);
                        in.position(in.position() + length);
                        if (ofWindow) {
                            windowMessage(m, type);
                        } else {
                            quietMessage(m, type);
                        }
                        continue;
                    }
                    if (type == P9Codec.TVERSION) {
                        // a Tversion starts a new session: every earlier request answers before it does, so
                        // the guest's relay can tell the old session's answers from the new one's
                        awaitIdle();
                        if (window != null) {
                            window.newSession();
                        }
                    }
                    ByteBuffer request = requests.take();
                    request.clear();
                    ByteBuffer frame = in.slice(in.position(), length);
                    request.put(frame).flip();
                    in.position(in.position() + length);
                    admit();
                    dispatch(request, ticket(request));
                }
                in.compact();
            }
        } catch (P9Exception e) {
            log.accept("closing the workspace connection: the guest sent a broken frame (" + e.getMessage() + ")");
        } catch (IOException e) {
            if (!closed) {
                log.accept("workspace connection failed: " + e.getMessage());
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (RuntimeException e) {
            // the pool was shut down under a dispatch (close), or a bug: the connection ends, the daemon goes on
            if (!closed) {
                log.accept("workspace reader stopped: " + e);
            }
        } finally {
            closeChannel();
        }
    }

    /**
     * A Twrite of which {@code in} holds only the start (all that is left in
     * it): the rest is read from the socket straight into its request
     * buffer. Otherwise each read of a part would compact {@code in}, moving
     * everything read so far to its start, and then copy the whole frame
     * once more: for a 1 MiB Twrite arriving in socket-buffer-sized parts, a
     * few MiB of copying, and measurably slower 1 MiB writes.
     */
    private void readRestOfWrite(ByteBuffer in, int length) throws IOException, InterruptedException {
        ByteBuffer request = requests.take();
        boolean dispatched = false;
        try {
            request.clear().limit(length);
            request.put(in);
            while (request.hasRemaining()) {
                if (channel.read(request) < 0) {
                    throw new IOException("the guest side closed in the middle of a Twrite");
                }
            }
            request.flip();
            admit();
            dispatch(request, ticket(request));
            dispatched = true;
        } finally {
            if (!dispatched) {
                requests.give(request); // a close or an interrupt: the pool stays whole
            }
        }
    }

    /**
     * Moves {@code in}'s position to the first Tversion in it; without one,
     * drops all but a Tversion's length less one byte (it may start there).
     *
     * @return whether a Tversion was found
     */
    private boolean skipToVersion(ByteBuffer in) {
        int at = P9Codec.findVersion(in);
        if (at >= 0) {
            skipped += at - in.position();
            if (skipped > 0) {
                log.accept("skipped " + skipped + " bytes the guest sent before mounting the folder afresh");
            }
            in.position(at);
            awaitingVersion = false;
            return true;
        }
        int keep = Math.min(in.remaining(), P9Codec.VERSION_FRAME - 1);
        skipped += in.remaining() - keep;
        in.position(in.limit() - keep);
        return false;
    }

    /**
     * A message of the read window's ({@link ReadWindow}), from the guest's relay: answered by
     * nothing. One that does not fit is dropped and counted (logged the first time): it cannot
     * break the server, and a guest that sends many gets one line.
     */
    private void windowMessage(ByteBuffer m, int type) {
        boolean fits;
        if (type == Ws9p.TWINDOW) {
            fits = window != null && m.remaining() == Ws9p.TWINDOW_SIZE;
            if (fits) {
                window.enable(true);
            }
        } else {
            fits = window != null && m.remaining() == Ws9p.TRETURN_SIZE
                    && window.giveBack(m.getInt(Ws9p.TRETURN_SLOT),
                            Integer.toUnsignedLong(m.getInt(Ws9p.TRETURN_SERIAL)));
        }
        if (!fits && strayReturns++ == 0) {
            log.accept("ignoring a read-window message that names nothing lent out (type " + type + ", "
                    + m.remaining() + " bytes); later ones are not logged");
        }
    }

    /**
     * A message of the quiet clunks' ({@link QuietClunks}): a Tquiet is answered at once; a Tclunkq
     * takes its fid out of the table here, in the order the guest sent it (waiting while paused, as any
     * request), and closes its descriptor on a worker, counted as a request in flight until it has.
     * One that does not fit, or names no fid, changes nothing and is counted (logged the first time).
     */
    private void quietMessage(ByteBuffer m, int type) throws InterruptedException {
        if (type == Ws9p.TQUIET && m.remaining() == Ws9p.TQUIET_SIZE) {
            send(QuietClunks.rquiet());
            return;
        }
        Fid f = null;
        if (type == Ws9p.TCLUNKQ && m.remaining() == Ws9p.TCLUNKQ_SIZE) {
            admit();
            f = ops.unlist(m.getInt(P9Codec.HEADER));
            if (f == null) {
                done();
            } else {
                Fid dropped = f;
                try {
                    workers.execute(() -> {
                        try {
                            ops.release(dropped);
                        } finally {
                            done();
                        }
                    });
                } catch (java.util.concurrent.RejectedExecutionException closing) {
                    ops.release(dropped); // the server is closing: its descriptor is closed here instead
                    done();
                }
            }
        }
        if (f == null && strayClunks++ == 0) {
            log.accept("ignoring a quiet clunk that names no fid or does not fit (type " + type + ", "
                    + m.remaining() + " bytes); later ones are not logged");
        }
    }

    /** A request has answered (or needs none): one fewer in flight. */
    private void done() {
        if (inFlight.decrementAndGet() == 0) {
            synchronized (inFlight) {
                inFlight.notifyAll();
            }
        }
    }

    /** Waits until no request is being served. */
    private void awaitIdle() throws InterruptedException {
        synchronized (inFlight) {
            while (inFlight.get() != 0 && !closed) {
                inFlight.wait(100);
            }
        }
    }

    /**
     * What the reader notes about a request before any worker takes it.
     *
     * @param done    opened once the request has answered; null for a Tflush
     * @param flushed for a Tflush, the latch of the request it names, or null
     */
    private record Ticket(CountDownLatch done, CountDownLatch flushed) {
    }

    /**
     * Notes a request in the order the guest sent it, so a Tflush waits for the reply of the
     * request it names however the workers are scheduled. A flush waits only for a request that
     * came before it and is not a flush: the workers take requests in order, so that one is
     * already being served and never waits itself; flushes cannot wait in a circle, nor for a
     * request queued behind them.
     */
    private Ticket ticket(ByteBuffer request) {
        ByteBuffer le = request.duplicate().order(ByteOrder.LITTLE_ENDIAN);
        if ((le.get(4) & 0xff) == P9Codec.TFLUSH) {
            boolean hasOldTag = le.limit() >= P9Codec.HEADER + 2;
            return new Ticket(null, hasOldTag ? running.get(le.getShort(P9Codec.HEADER) & 0xffff) : null);
        }
        CountDownLatch done = new CountDownLatch(1);
        running.put(le.getShort(5) & 0xffff, done);
        return new Ticket(done, null);
    }

    private void dispatch(ByteBuffer request, Ticket ticket) {
        workers.execute(() -> {
            try {
                serveOne(request, ticket);
            } finally {
                requests.give(request);
                done();
            }
        });
    }

    private void serveOne(ByteBuffer request, Ticket ticket) {
        CountDownLatch done = ticket.done();
        ByteBuffer out = null;
        int tag = -1;
        try {
            out = replies.take();
            out.clear().limit(ops.msize());
            P9Framed framed;
            try {
                if (writes != null && request.limit() > 4 && (request.get(4) & 0xff) == Ws9p.TWRITEW) {
                    writes.expand(request, ops.msize()); // now the Twrite it stands for
                }
                framed = P9Codec.decodeRequest(request, ops.msize());
            } catch (P9Exception e) {
                tag = e.tag();
                P9Codec.encodeReply(tag, new P9Reply.Lerror(e.errno()), out);
                send(out);
                return;
            }
            tag = framed.tag();
            if (framed.request() instanceof P9Request.Flush && ticket.flushed() != null) {
                // answer the flush only after the request it names has answered
                ticket.flushed().await(30, TimeUnit.SECONDS);
            }
            ops.serve(tag, framed.request(), out);
            send(out);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (RuntimeException e) {
            // a bug must not take the server down: answer EIO and say so in the log
            log.accept("internal error serving a request: " + e);
            if (out != null && tag >= 0) {
                out.clear().limit(ops.msize());
                P9Codec.encodeReply(tag, new P9Reply.Lerror(ErrnoException.EIO), out);
                send(out);
            }
        } finally {
            if (done != null) {
                running.values().remove(done);
                done.countDown();
            }
            if (out != null) {
                replies.give(out);
            }
        }
    }

    private void send(ByteBuffer out) {
        out.flip();
        if (window != null) {
            window.divert(out);
        }
        writeLock.lock();
        try {
            while (out.hasRemaining()) {
                channel.write(out);
            }
        } catch (IOException e) {
            if (!closed) {
                log.accept("cannot answer the guest: " + e.getMessage());
            }
        } finally {
            writeLock.unlock();
        }
    }

    /** Whether no request is being served right now. */
    public boolean idle() {
        return inFlight.get() == 0;
    }

    /**
     * Holds back requests not yet started and waits until those being served
     * have answered. Between {@code pause} and {@link #resume} the fid table
     * does not change.
     *
     * @return whether the server became idle within the timeout
     */
    public boolean pause(Duration timeout) throws InterruptedException {
        synchronized (pauseLock) {
            paused = true;
        }
        long deadline = System.nanoTime() + timeout.toNanos();
        synchronized (inFlight) {
            while (inFlight.get() != 0) {
                long left = deadline - System.nanoTime();
                if (left <= 0) {
                    resume(); // not idle in time: serve on rather than leave the guest waiting
                    return false;
                }
                inFlight.wait(Math.max(1, left / 1_000_000));
            }
        }
        return true;
    }

    /**
     * As {@link #pause}, and also every slot of the read window back from
     * the guest: the instant of a checkpoint or a pause to disk, whose
     * machine goes on from there (the window is not saved with it). The
     * guest must be running and its processes frozen: the relay returns
     * the slots, and no new read lends one out meanwhile (a paused server
     * serves nothing; one read lent out before the pause is waited for
     * with the server serving again).
     *
     * @return whether both held within the timeout; if not, the server serves on
     */
    public boolean pauseSettled(Duration timeout) throws InterruptedException {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (true) {
            if (window != null && !window.awaitReturned(deadline)) {
                return false;
            }
            if (!pause(Duration.ofNanos(Math.max(0, deadline - System.nanoTime())))) {
                return false;
            }
            if (window == null || window.lentOut() == 0) {
                return true;
            }
            resume(); // a read answered through the window just before the pause: its return comes behind it
        }
    }

    public void resume() {
        synchronized (pauseLock) {
            paused = false;
            pauseLock.notifyAll();
        }
    }

    /**
     * Waits while paused, then counts the request in flight, both under the pause lock: a
     * {@link #pause} that returns idle has seen every request admitted before it, and no other
     * starts until {@link #resume}.
     */
    private void admit() throws InterruptedException {
        synchronized (pauseLock) {
            while (paused && !closed) {
                pauseLock.wait();
            }
            inFlight.incrementAndGet();
        }
    }

    /** The fid table and open files, to be restored with {@link #restore}. Call while paused. */
    public WorkspaceSnapshot snapshot() {
        if (!idle()) {
            throw new IllegalStateException("the workspace server is serving a request; pause it first");
        }
        return WorkspaceSnapshot.of(ops, window != null && window.enabled());
    }

    /**
     * Replaces the fid table with a snapshot's, and takes over the guest's
     * session from there: the guest's next bytes are served, not skipped to
     * a Tversion. Call while paused, or before the guest runs.
     */
    public void restore(WorkspaceSnapshot snapshot) {
        synchronized (lifecycle) {
            if (closed) {
                // the restore opens files from the root descriptor, which a close may have let go of
                throw new IllegalStateException("the workspace server is closed");
            }
            if (!idle()) {
                throw new IllegalStateException("the workspace server is serving a request; pause it first");
            }
            snapshot.restoreInto(ops);
            if (window != null) {
                window.enable(snapshot.readWindow());
            }
            awaitingVersion = false;
        }
    }

    /** Starts reading and serving the guest's requests; once only, after {@link #connect} (and {@link #restore}). */
    public void serve() {
        if (closed) {
            throw new IllegalStateException("the workspace server is closed");
        }
        reader.start();
    }

    /** Stops serving and closes every descriptor. Idempotent: the root descriptor is closed once only. */
    @Override
    public void close() {
        if (!closing.compareAndSet(false, true)) {
            return;
        }
        synchronized (lifecycle) {
            closed = true; // a restore (a rewind's, on a thread of its own) is done, or will not start
        }
        resume();
        closeChannel();
        reader.interrupt(); // it may wait for a request buffer that a discarded task will never give back
        workers.shutdownNow();
        try {
            reader.join(5_000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        boolean stopped = false;
        try {
            stopped = workers.awaitTermination(5, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        ops.clunkAll();
        if (window != null) {
            window.close();
        }
        if (writes != null) {
            writes.close();
        }
        if (stopped) {
            closeQuietly(rootFd);
        } else {
            // a worker may still resolve paths from the root: leaking it is safe, closing it is not (the
            // number could be reused by another open, and the worker would resolve the guest's path from there)
            log.accept("a request is still being served; leaving the workspace root open");
        }
    }

    private void closeChannel() {
        try {
            channel.close();
        } catch (IOException ignored) {
            // closing anyway
        }
    }

    private static void closeQuietly(int fd) {
        try {
            LinuxFs.close(fd);
        } catch (ErrnoException ignored) {
            // nothing to do
        }
    }

    private static int ownerUid() {
        return statusField("Uid:", 10);
    }

    private static int umask() {
        int u = statusField("Umask:", 8);
        return u < 0 ? 022 : u;
    }

    /** A field of /proc/self/status: the daemon's own uid and umask, without a native call. */
    private static int statusField(String name, int radix) {
        try {
            for (String line : Files.readAllLines(Path.of("/proc/self/status"))) {
                if (line.startsWith(name)) {
                    return Integer.parseInt(line.substring(name.length()).trim().split("\\s+")[0], radix);
                }
            }
        } catch (IOException | NumberFormatException e) {
            // fall through
        }
        return -1;
    }
}
