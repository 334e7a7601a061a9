package dev.kosa8.workspace;

import dev.kosa8.host.KosaException;
import dev.kosa8.protocol.Ws9p;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.List;
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
 *
 * <p>This class is the façade, and owns the server's life (connect, serve, close). The work is
 * done by: {@link ServerSetup} (the socket, the windows, the daemon's uid and umask),
 * {@link PortReader} (the reader thread), {@link PauseGate} (requests in flight, pause and
 * resume), {@link Dispatcher} (the workers and the replies) and {@link P9Operations} (what each
 * request does to the folder).
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

    private final SocketChannel channel;
    /** Where large Rreads' data goes past the port; null when QEMU gives the guest none. */
    private final ReadWindow window;
    /** Where large Twrites' data comes past the port; null when QEMU gives the guest none. */
    private final WriteWindow writes;
    private final int rootFd;
    private final P9Operations ops;
    private final Consumer<String> log;
    private final PauseGate gate;
    private final Dispatcher dispatcher;
    private final PortReader portReader;
    private final AtomicBoolean closing = new AtomicBoolean();
    /** Held by {@link #restore} and while {@link #close} marks the server closed: no restore runs past a close. */
    private final Object lifecycle = new Object();
    private final Thread reader;
    /** The held layer this server serves held paths from, or null when nothing is held. */
    private final HeldChanges held;
    /** What changes on the host, told to a guest that caches the folder. */
    private final FolderNotices notices;
    /** What the held layer tells of the guest's view it changed (an accept or reject): told to a caching guest. */
    private final Consumer<List<String>> heldChanged;

    private WorkspaceServer(SocketChannel channel, ReadWindow window, WriteWindow writes, int rootFd,
                            Consumer<String> log, boolean awaitingVersion, HeldChanges held, boolean cache) {
        this.held = held;
        this.channel = channel;
        this.window = window;
        this.writes = writes;
        this.rootFd = rootFd;
        this.log = log;
        this.ops = new P9Operations(rootFd, ServerSetup.ownerUid(), ServerSetup.umask(), MSIZE, log, held);
        this.gate = new PauseGate(window);
        this.dispatcher = new Dispatcher(channel, window, writes, ops, gate, log);
        this.notices = new FolderNotices(rootFd, st -> ops.qid(st).path(), ops::attributesOf, ops::isGuestsOwn,
                ops::startNoting, this::sendNotices, log);
        this.portReader = new PortReader(channel, window, ops, gate, dispatcher, notices, cache, log,
                awaitingVersion);
        this.heldChanged = notices::told;
        if (held != null) {
            held.tellChanges(heldChanged);
        }
        this.reader = new Thread(portReader::readLoop, "ws9p-reader");
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
     * @param held    the sandbox's held layer, which the server closes when it closes; null to hold nothing
     * @param cache   whether the guest may cache the folder: its Tcache then starts the folder's watch
     *                ({@link FolderNotices}); otherwise it is ignored
     */
    public static WorkspaceServer start(Path folder, Path socket, Path window, Path writes, Duration timeout,
                                        Consumer<String> log, HeldChanges held, boolean cache) {
        WorkspaceServer s = connect(folder, socket, window, writes, timeout, log, held, cache);
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
                                          Consumer<String> log, HeldChanges held, boolean cache) {
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
            w = ServerSetup.openWindow(window);
            ww = ServerSetup.openWrites(writes, log);
            SocketChannel ch = ServerSetup.connect(socket, timeout);
            return new WorkspaceServer(ch, w, ww, root, log, true, held, cache);
        } catch (RuntimeException e) {
            if (w != null) {
                w.close();
            }
            if (ww != null) {
                ww.close();
            }
            LinuxFs.closeQuietly(root);
            if (held != null) {
                held.close();
            }
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
        return serve(folder, ch, window, writes, log, newSession, null);
    }

    /** For tests: as above, holding what {@code held}'s policy holds. */
    static WorkspaceServer serve(Path folder, SocketChannel ch, Path window, Path writes, Consumer<String> log,
                                 boolean newSession, HeldChanges held) throws ErrnoException {
        return serve(folder, ch, window, writes, log, newSession, held, false);
    }

    /** For tests: as above, the guest allowed to cache the folder or not. */
    static WorkspaceServer serve(Path folder, SocketChannel ch, Path window, Path writes, Consumer<String> log,
                                 boolean newSession, HeldChanges held, boolean cache) throws ErrnoException {
        WorkspaceServer s = new WorkspaceServer(ch, ServerSetup.openWindow(window),
                ServerSetup.openWrites(writes, log), LinuxFs.openRoot(folder.toString()), log, newSession, held,
                cache);
        s.reader.start();
        return s;
    }

    /** The held layer this server serves held paths from, or null. */
    public HeldChanges held() {
        return held;
    }

    /** How the guest's cache of the folder is kept true to the host, for {@code kosa8 inspect}. */
    public String cacheState() {
        return notices.state();
    }

    /**
     * Notices to the guest, counted in flight as a request is (none is half-sent at a checkpoint's
     * instant), read and sent with no request being served ({@link Dispatcher#exclusively}).
     */
    private void sendNotices(Consumer<Consumer<ByteBuffer>> batch) {
        try {
            gate.admit();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return;
        }
        try {
            if (!gate.closed()) {
                dispatcher.exclusively(() -> batch.accept(notice -> {
                    if (!gate.closed()) {
                        dispatcher.send(notice);
                    }
                }));
            }
        } finally {
            gate.done();
        }
    }

    /** Whether no request is being served right now. */
    public boolean idle() {
        return gate.idle();
    }

    /**
     * Holds back requests not yet started and waits until those being served
     * have answered. Between {@code pause} and {@link #resume} the fid table
     * does not change.
     *
     * @return whether the server became idle within the timeout
     */
    public boolean pause(Duration timeout) throws InterruptedException {
        return gate.pause(timeout);
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
        return gate.pauseSettled(timeout);
    }

    public void resume() {
        gate.resume();
    }

    /** The fid table and open files, to be restored with {@link #restore}. Call while paused. */
    public WorkspaceSnapshot snapshot() {
        if (!idle()) {
            throw new IllegalStateException("the workspace server is serving a request; pause it first");
        }
        return WorkspaceSnapshot.of(ops, window != null && window.enabled(), notices.started());
    }

    /**
     * Replaces the fid table with a snapshot's, and takes over the guest's
     * session from there: the guest's next bytes are served, not skipped to
     * a Tversion. Call while paused, or before the guest runs.
     */
    public void restore(WorkspaceSnapshot snapshot) {
        synchronized (lifecycle) {
            if (gate.closed()) {
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
            if (snapshot.cached()) {
                notices.start(); // the guest caches; it drops everything first (the folder may have changed)
            }
            portReader.takeOverSession();
        }
    }

    /** Starts reading and serving the guest's requests; once only, after {@link #connect} (and {@link #restore}). */
    public void serve() {
        if (gate.closed()) {
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
            gate.markClosed(); // a restore (a rewind's, on a thread of its own) is done, or will not start
        }
        resume();
        if (held != null) {
            held.stopTelling(heldChanged);
        }
        ServerSetup.closeQuietly(channel); // first: a worker stuck writing to the guest lets go of its locks
        reader.interrupt(); // it may wait for a request buffer that a discarded task will never give back
        dispatcher.shutdownNow();
        boolean watchStopped = notices.stop();
        try {
            reader.join(5_000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        boolean stopped = false;
        try {
            stopped = dispatcher.awaitTermination(5, TimeUnit.SECONDS);
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
        if (stopped && watchStopped) {
            LinuxFs.closeQuietly(rootFd);
            if (held != null) {
                held.close();
            }
        } else {
            // a worker may still resolve paths from the root: leaking it is safe, closing it is not (the
            // number could be reused by another open, and the worker would resolve the guest's path from there)
            log.accept("a request is still being served; leaving the workspace root open");
        }
    }
}
