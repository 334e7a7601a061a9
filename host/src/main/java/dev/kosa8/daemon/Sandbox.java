package dev.kosa8.daemon;

import dev.kosa8.vm.Vm;
import dev.kosa8.workspace.WorkspaceServer;
import java.util.concurrent.locks.ReentrantLock;

/**
 * A sandbox as the daemon holds it: its record and, while it runs, its
 * machine. State changes happen under {@link #lock()}.
 */
public final class Sandbox {
    private final ReentrantLock lock = new ReentrantLock();
    private volatile SandboxRecord record;
    private volatile Vm vm;
    private volatile boolean stopping;
    private volatile boolean workspaceLost;
    private volatile WorkspaceServer workspace;
    /** A QEMU waiting to take the machine at the next rewind ({@link Standbys}), or null. */
    private volatile dev.kosa8.vm.Standby standby;
    private volatile dev.kosa8.egress.Broker broker;

    Sandbox(SandboxRecord record) {
        this.record = record;
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

    public Vm vm() {
        return vm;
    }

    void vm(Vm vm) {
        this.vm = vm;
    }

    dev.kosa8.vm.Standby standby() {
        return standby;
    }

    void standby(dev.kosa8.vm.Standby s) {
        this.standby = s;
    }

    /** The 9p server of the sandbox's folder while the machine runs; null otherwise or with no folder. */
    WorkspaceServer workspace() {
        return workspace;
    }

    void workspace(WorkspaceServer w) {
        this.workspace = w;
    }

    /** The sandbox's egress broker while the machine runs; null otherwise or with no network. */
    dev.kosa8.egress.Broker broker() {
        return broker;
    }

    void broker(dev.kosa8.egress.Broker b) {
        this.broker = b;
    }

    boolean stopping() {
        return stopping;
    }

    void stopping(boolean s) {
        this.stopping = s;
    }

    /**
     * Whether the guest's workspace mount lost its server's state (a daemon
     * restart): saving the machine as it is would keep the broken mount, so
     * the next stop shuts it down instead and the start after mounts afresh.
     */
    boolean workspaceLost() {
        return workspaceLost;
    }

    void workspaceLost(boolean lost) {
        this.workspaceLost = lost;
    }

    ReentrantLock lock() {
        return lock;
    }
}
