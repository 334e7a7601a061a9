package dev.kosa8.workspace;

import dev.kosa8.protocol.Ws9p;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.SocketChannel;
import java.util.function.Consumer;

/**
 * The reader of a {@link WorkspaceServer}: one thread that reads the guest's byte stream from the
 * workspace port, cuts it into frames, serves the relay's own messages (the read window's and the
 * quiet clunks') itself in the order they came, and hands every 9p request, admitted by the
 * {@link PauseGate} and ticketed in order, to the {@link Dispatcher}.
 *
 * <p>A frame larger than the negotiated msize or shorter than a header ends the connection (the
 * stream cannot be resynchronised); in a new session, everything before the guest's first Tversion
 * is dropped unanswered. Whatever ends the loop, the channel is closed.
 */
final class PortReader {
    /** A Twrite at least this long, and not yet all in, is read on straight into its request buffer. */
    private static final int DIRECT_READ = 64 * 1024;

    private final SocketChannel channel;
    /** Where large Rreads' data goes past the port; null when QEMU gives the guest none. */
    private final ReadWindow window;
    private final P9Operations ops;
    private final PauseGate gate;
    private final Dispatcher dispatcher;
    private final BufferPool requests;
    private final Consumer<String> log;
    /** Started by the guest's Tcache: its mount caches the folder. */
    private final FolderNotices notices;
    /** Whether the sandbox's folder may be cached: a Tcache otherwise starts no watch (it costs the host's). */
    private final boolean cacheAllowed;
    /** Tcaches ignored; the reader's alone. */
    private long strayCaches;
    /** Quiet clone walks that failed; the reader's alone. */
    private long strayWalks;
    /** Quiet opens that failed; the reader's alone. */
    private long strayOpens;
    /** Until a Tversion arrives, what comes is dropped: see {@link WorkspaceServer#start}. */
    private volatile boolean awaitingVersion;
    /** How many bytes were dropped so; the reader's alone. */
    private long skipped;
    /** Window messages that named nothing lent out; the reader's alone. */
    private long strayReturns;
    /** Quiet clunks that named no fid or did not fit; the reader's alone. */
    private long strayClunks;

    PortReader(SocketChannel channel, ReadWindow window, P9Operations ops, PauseGate gate, Dispatcher dispatcher,
               FolderNotices notices, boolean cacheAllowed, Consumer<String> log, boolean awaitingVersion) {
        this.notices = notices;
        this.cacheAllowed = cacheAllowed;
        this.channel = channel;
        this.window = window;
        this.ops = ops;
        this.gate = gate;
        this.dispatcher = dispatcher;
        this.requests = dispatcher.requests();
        this.log = log;
        this.awaitingVersion = awaitingVersion;
    }

    /** The guest's session is taken over ({@link WorkspaceServer#restore}): its next bytes are served, not skipped. */
    void takeOverSession() {
        awaitingVersion = false;
    }

    void readLoop() {
        // requests are at most MSIZE; twice that lets a partly read frame sit beside a whole one
        ByteBuffer in = ByteBuffer.allocateDirect(2 * WorkspaceServer.MSIZE);
        try {
            while (!gate.closed()) {
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
                    if (type == Ws9p.TSYNC) {
                        // before a command the agent starts: every change seen so far, then the Rsync
                        if (length == Ws9p.SYNC_SIZE) {
                            notices.sync(in.duplicate().order(ByteOrder.LITTLE_ENDIAN).getInt(in.position() + Ws9p.HEADER));
                        }
                        in.position(in.position() + length);
                        continue;
                    }
                    if (type == Ws9p.TCACHE) {
                        // the guest's mount caches: from now on it is told what changes on the host
                        if (length == Ws9p.TCACHE_SIZE && cacheAllowed) {
                            notices.start();
                        } else if (strayCaches++ == 0) {
                            log.accept("ignoring the guest's Tcache: this sandbox's folder is not to be cached");
                        }
                        in.position(in.position() + length);
                        continue;
                    }
                    boolean ofWindow = type == Ws9p.TWINDOW || type == Ws9p.TRETURN;
                    boolean quiet = type == Ws9p.TQUIET || type == Ws9p.TCLUNKQ || type == Ws9p.TWALKQ
                            || type == Ws9p.TLOPENQ;
                    if (ofWindow || quiet) {
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
                        gate.awaitIdle();
                        if (window != null) {
                            window.newSession();
                        }
                    }
                    ByteBuffer request = requests.take();
                    request.clear();
                    ByteBuffer frame = in.slice(in.position(), length);
                    request.put(frame).flip();
                    in.position(in.position() + length);
                    gate.admit();
                    dispatcher.dispatch(request, dispatcher.ticket(request));
                }
                in.compact();
            }
        } catch (P9Exception e) {
            log.accept("closing the workspace connection: the guest sent a broken frame (" + e.getMessage() + ")");
        } catch (IOException e) {
            if (!gate.closed()) {
                log.accept("workspace connection failed: " + e.getMessage());
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (RuntimeException e) {
            // the pool was shut down under a dispatch (close), or a bug: the connection ends, the daemon goes on
            if (!gate.closed()) {
                log.accept("workspace reader stopped: " + e);
            }
        } finally {
            ServerSetup.closeQuietly(channel);
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
            gate.admit();
            dispatcher.dispatch(request, dispatcher.ticket(request));
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
     * A Twalkq (a clone walk the guest's module has answered itself, {@link Ws9p}): the fid is cloned
     * here, in the order the guest sent it, so the request on the new fid that follows finds it; a
     * clone has no system call to make. One that does not fit or fails (no such fid, the table full)
     * is counted and logged the first time: the new fid's next request then fails, as it should.
     */
    private void quietWalk(ByteBuffer m) throws InterruptedException {
        gate.admit();
        try {
            if (m.remaining() != Ws9p.TWALKQ_SIZE || m.getShort(Ws9p.TWALKQ_SIZE - 2) != 0) {
                throw new ErrnoException(ErrnoException.EINVAL, "Twalkq of " + m.remaining() + " bytes");
            }
            ops.cloneFid(m.getInt(Ws9p.TWALKQ_FID), m.getInt(Ws9p.TWALKQ_NEWFID));
        } catch (ErrnoException e) {
            if (strayWalks++ == 0) {
                log.accept("a quiet clone walk failed (" + e.getMessage() + "); later ones are not logged");
            }
        } finally {
            gate.done();
        }
    }

    /**
     * A Tlopenq: a read-only open the module answered itself (a cached mount's), made here in the order
     * the guest sent it, so the requests on the fid that follow find it open. One that fails leaves its
     * error with the fid, which each later use of its descriptor answers; counted, logged the first time.
     */
    private void quietOpen(ByteBuffer m) throws InterruptedException {
        gate.admit();
        try {
            if (m.remaining() != Ws9p.TLOPENQ_SIZE) {
                throw new ErrnoException(ErrnoException.EINVAL, "Tlopenq of " + m.remaining() + " bytes");
            }
            ops.openQuietly(m.getInt(Ws9p.HEADER), m.getInt(Ws9p.HEADER + 4));
        } catch (ErrnoException e) {
            if (strayOpens++ == 0) {
                log.accept("a quiet open failed (" + e.getMessage() + "); later ones are not logged");
            }
        } catch (RuntimeException e) {
            log.accept("internal error serving a quiet open: " + e); // the reader serves on, as a worker would
        } finally {
            gate.done();
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
            dispatcher.send(QuietClunks.rquiet());
            return;
        }
        if (type == Ws9p.TWALKQ) {
            quietWalk(m);
            return;
        }
        if (type == Ws9p.TLOPENQ) {
            quietOpen(m);
            return;
        }
        Fid f = null;
        if (type == Ws9p.TCLUNKQ && m.remaining() == Ws9p.TCLUNKQ_SIZE) {
            gate.admit();
            f = ops.unlist(m.getInt(P9Codec.HEADER));
            if (f == null) {
                gate.done();
            } else {
                Fid dropped = f;
                try {
                    dispatcher.execute(() -> {
                        try {
                            ops.release(dropped);
                        } finally {
                            gate.done();
                        }
                    });
                } catch (java.util.concurrent.RejectedExecutionException closing) {
                    ops.release(dropped); // the server is closing: its descriptor is closed here instead
                    gate.done();
                }
            }
        }
        if (f == null && strayClunks++ == 0) {
            log.accept("ignoring a quiet clunk that names no fid or does not fit (type " + type + ", "
                    + m.remaining() + " bytes); later ones are not logged");
        }
    }
}
