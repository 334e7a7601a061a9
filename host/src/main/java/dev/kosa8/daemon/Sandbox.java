package dev.kosa8.daemon;

import dev.kosa8.checkpoint.Undo;
import dev.kosa8.egress.Broker;
import dev.kosa8.host.KosaException;
import dev.kosa8.vm.Vm;
import dev.kosa8.workspace.WorkspaceServer;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Supplier;
import java.util.function.UnaryOperator;

/**
 * A sandbox as the daemon holds it: its record (what is kept on disk) and,
 * while it runs, its {@link SandboxRuntime}. State changes happen under its
 * lock ({@link #locked}).
 */
public final class Sandbox {
    private final ReentrantLock lock = new ReentrantLock();
    private final Undo undo;
    private volatile SandboxRecord record;
    private volatile SandboxRuntime runtime = SandboxRuntime.NONE;
    /** Its commands and file transfers under way ({@link #openStream}). */
    private final java.util.concurrent.atomic.AtomicInteger streams = new java.util.concurrent.atomic.AtomicInteger();
    /**
     * Open (zero) unless a daemon that has just started is still re-attaching
     * to this sandbox's machine: the daemon listens first, and a request for
     * this sandbox waits here ({@link #awaitAttached}) rather than seeing it
     * half re-attached.
     */
    private final CountDownLatch attaching;
    /** Where the daemon reaches its folder. */
    private final SandboxFolder folder;

    /**
     * @param undo       the sandbox's one undo ({@link SandboxLayout#undo}): it keeps the commit under way
     * @param viewParts  where its folder's parts are if it is a view ({@link SandboxLayout#folderView})
     */
    Sandbox(SandboxRecord record, Undo undo, java.nio.file.Path viewParts) {
        this(record, undo, viewParts, false);
    }

    /** @param attaching whether the daemon, just started, is still to re-attach to its machine */
    Sandbox(SandboxRecord record, Undo undo, java.nio.file.Path viewParts, boolean attaching) {
        this.record = record;
        this.undo = undo;
        this.folder = new SandboxFolder(viewParts);
        this.attaching = new CountDownLatch(attaching ? 1 : 0);
    }

    /** Where the daemon reaches its folder: the host folder, or its view ({@link SandboxFolder}). */
    SandboxFolder folderAccess() {
        return folder;
    }

    /**
     * The path the daemon reads and writes the sandbox's folder by, for its folder server, checkpoints, rewinds,
     * {@code diff}, {@code adopt} and held changes; null for a sandbox with no folder.
     */
    java.nio.file.Path folder() {
        return folder.access(record, runtime.workspace() != null);
    }

    /**
     * Runs {@code body} with {@link #folder()}; a view mounted for it alone (no machine serves the folder: a
     * {@code diff}, {@code adopt} or review of a stopped fork) is let go after, rather than kept until the next
     * start. The caller holds the lock.
     */
    <T> T withFolder(java.util.function.Function<java.nio.file.Path, T> body) {
        try {
            return body.apply(folder());
        } finally {
            if (runtime.workspace() == null) {
                folder.release();
            }
        }
    }

    /** The sandbox's checkpoints and pause to disk, with the checkpoint it may be committing. */
    Undo undo() {
        return undo;
    }

    /** Whether the daemon is still re-attaching to this sandbox's machine, having just started. */
    boolean attaching() {
        return attaching.getCount() > 0;
    }

    /** The re-attachment at daemon start is over, whatever its outcome. */
    void attached() {
        attaching.countDown();
    }

    /** Waits while the daemon is still re-attaching to this sandbox's machine (at most {@code limit}). */
    void awaitAttached(Duration limit) {
        try {
            if (!attaching.await(limit.toMillis(), TimeUnit.MILLISECONDS)) {
                throw new KosaException(KosaException.Kind.DAEMON, "kosa8d is still re-attaching to sandbox " + id()
                        + " after its restart (over " + limit.toSeconds() + " s)",
                        "try again in a moment; the daemon's log (kosa8d.log, docs/files.md) says what it is doing");
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new KosaException(KosaException.Kind.DAEMON, "interrupted waiting for sandbox " + id(), "", e);
        }
    }

    public String id() {
        return record.id();
    }

    public SandboxRecord record() {
        return record;
    }

    void record(SandboxRecord r) {
        this.record = r;
    }

    /**
     * Counts one more command or file transfer under way, if fewer than
     * {@code max} are: each holds a channel of the agent's and up to a window
     * of buffers in the daemon, so a guest's client cannot pile them up
     * without end. Refused with what to do; {@link #closeStream} when it ends.
     */
    void openStream(int max) {
        while (true) {
            int n = streams.get();
            if (n >= max) {
                throw new dev.kosa8.host.KosaException(dev.kosa8.host.KosaException.Kind.LIMIT, "sandbox " + id()
                        + " has " + n + " commands and file transfers under way, the most it may have at once",
                        "wait for one to end, or raise \"streams\" in kosa8's settings.json (then `kosa8 daemon"
                                + " stop`; sandboxes run on)");
            }
            if (streams.compareAndSet(n, n + 1)) {
                return;
            }
        }
    }

    void closeStream() {
        streams.decrementAndGet();
    }

    /** The running machine, or null. */
    public Vm vm() {
        return runtime.vm();
    }

    /**
     * The running machine once the operation under way on it, if any (a checkpoint's pause, a rewind, a stop), is
     * over: what a new command or file call runs on. A command sent during a rewind lands on the machine put back,
     * not on the one being let go of.
     */
    public Vm current() {
        return locked(this::running);
    }

    /** The running machine, or a STATE error naming the sandbox's state. */
    public Vm running() {
        Vm vm = vm();
        if (vm == null || record().state() != SandboxState.RUNNING) {
            SandboxRecord r = record();
            String why = r.state() == SandboxState.FAILED && !r.failure().isEmpty() ? " (" + r.failure() + ")" : "";
            throw new KosaException(KosaException.Kind.STATE, "sandbox " + id() + " is not running: it is "
                    + r.state().label() + why, r.state() == SandboxState.STOPPED
                    ? "start it with `kosa8 start " + id() + "`" : "see `kosa8 logs " + id() + "`, then `kosa8 rm "
                    + id() + "`");
        }
        if (!vm.agent().isOpen()) {
            throw new KosaException(KosaException.Kind.VM, "the agent in sandbox " + id() + " is gone: "
                    + vm.agent().closedFuture().getNow("its connection closed"),
                    "see `kosa8 logs " + id() + "`; `kosa8 stop " + id() + "` and `kosa8 start " + id()
                            + "` boot it again");
        }
        return vm;
    }

    SandboxRuntime runtime() {
        return runtime;
    }

    /** Replaces the runtime with {@code change} of it; the caller holds the lock. */
    void update(UnaryOperator<SandboxRuntime> change) {
        runtime = change.apply(runtime);
    }

    /** The 9p server of the sandbox's folder while the machine runs; null otherwise or with no folder. */
    WorkspaceServer workspace() {
        return runtime.workspace();
    }

    /** The sandbox's egress broker while the machine runs; null otherwise or with no network. */
    Broker broker() {
        return runtime.broker();
    }

    /** Closes the servers (standby, broker, folder server) and lets its folder's view go; the machine is left as it is. */
    void closeServers() {
        SandboxRuntime r = runtime;
        runtime = r.withoutServers();
        r.closeServers();
        folder.release();
    }

    /**
     * Stops what a restore that failed half-way started (its QEMU, the
     * folder's server it had connected) so that a cold boot after it starts
     * clean; the broker stays, the booted machine needs it.
     */
    void dropHalfStarted() {
        SandboxRuntime r = runtime;
        runtime = r.withVm(null).withWorkspace(null);
        if (r.vm() != null) {
            r.vm().kill();
        }
        if (r.workspace() != null) {
            r.workspace().close();
        }
    }

    /** Kills the machine and closes everything that served it (a boot abandoned, a removal). */
    void closeRuntime() {
        SandboxRuntime r = runtime;
        runtime = r.withVm(null).withoutServers();
        r.close();
        folder.release(); // after its server: nothing of the guest's reaches the view any more
    }

    /** Lets go of the machine without stopping it (the daemon exits; a new one re-attaches) and closes the servers. */
    void detach() {
        SandboxRuntime r = runtime;
        runtime = r.withVm(null).withoutServers();
        if (r.vm() != null) {
            r.vm().detach();
        }
        r.closeServers();
        folder.release();
    }

    /** Runs {@code action} under the sandbox's lock. */
    <T> T locked(Supplier<T> action) {
        lock.lock();
        try {
            return action.get();
        } finally {
            lock.unlock();
        }
    }

    /** Runs {@code action} under the sandbox's lock. */
    void locked(Runnable action) {
        lock.lock();
        try {
            action.run();
        } finally {
            lock.unlock();
        }
    }

    ReentrantLock lock() {
        return lock;
    }
}
