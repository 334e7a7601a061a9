package dev.kosa8.daemon;

import dev.kosa8.checkpoint.Undo;
import dev.kosa8.egress.Broker;
import dev.kosa8.vm.Vm;
import dev.kosa8.workspace.WorkspaceServer;
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

    /** @param undo the sandbox's one undo ({@link SandboxLayout#undo}): it keeps the commit under way */
    Sandbox(SandboxRecord record, Undo undo) {
        this.record = record;
        this.undo = undo;
    }

    /** The sandbox's checkpoints and pause to disk, with the checkpoint it may be committing. */
    Undo undo() {
        return undo;
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

    /** The running machine, or null. */
    public Vm vm() {
        return runtime.vm();
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

    /** Closes the servers (standby, broker, folder server); the machine is left as it is. */
    void closeServers() {
        SandboxRuntime r = runtime;
        runtime = r.withoutServers();
        r.closeServers();
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
    }

    /** Lets go of the machine without stopping it (the daemon exits; a new one re-attaches) and closes the servers. */
    void detach() {
        SandboxRuntime r = runtime;
        runtime = r.withVm(null).withoutServers();
        if (r.vm() != null) {
            r.vm().detach();
        }
        r.closeServers();
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
