package dev.kosa8.daemon;

import dev.kosa8.egress.Broker;
import dev.kosa8.vm.Standby;
import dev.kosa8.vm.Vm;
import dev.kosa8.workspace.WorkspaceServer;

/**
 * What a sandbox has while its machine runs: the QEMU, and what serves it
 * from the host — the folder's 9p server, the egress broker, a standby QEMU
 * for the next rewind — closed as one. A value: the sandbox holds the
 * current one and replaces it under its lock ({@link Sandbox#update}).
 *
 * @param vm            the running machine, or null
 * @param workspace     the 9p server of the sandbox's folder, or null (not running, or no folder)
 * @param broker        the egress broker, or null (not running, or no network)
 * @param standby       a QEMU waiting to take the machine at the next rewind ({@link Standbys}), or null
 * @param stopping      a stop or removal was asked: the machine's end is expected, not a failure
 * @param workspaceLost the guest's workspace mount lost its server's state (a daemon restart): saving the
 *                      machine as it is would keep the broken mount, so the next stop shuts it down instead and
 *                      the start after mounts afresh
 */
record SandboxRuntime(Vm vm, WorkspaceServer workspace, Broker broker, Standby standby, boolean stopping,
                      boolean workspaceLost) implements AutoCloseable {
    static final SandboxRuntime NONE = new SandboxRuntime(null, null, null, null, false, false);

    SandboxRuntime withVm(Vm v) {
        return new SandboxRuntime(v, workspace, broker, standby, stopping, workspaceLost);
    }

    SandboxRuntime withWorkspace(WorkspaceServer w) {
        return new SandboxRuntime(vm, w, broker, standby, stopping, workspaceLost);
    }

    SandboxRuntime withBroker(Broker b) {
        return new SandboxRuntime(vm, workspace, b, standby, stopping, workspaceLost);
    }

    SandboxRuntime withStandby(Standby s) {
        return new SandboxRuntime(vm, workspace, broker, s, stopping, workspaceLost);
    }

    SandboxRuntime stopping(boolean s) {
        return new SandboxRuntime(vm, workspace, broker, standby, s, workspaceLost);
    }

    SandboxRuntime workspaceLost(boolean lost) {
        return new SandboxRuntime(vm, workspace, broker, standby, stopping, lost);
    }

    /** The same, without the servers: no standby, broker or folder server. */
    SandboxRuntime withoutServers() {
        return new SandboxRuntime(vm, null, null, null, stopping, workspaceLost);
    }

    /** Closes the servers, newest-made first: the standby, the broker, the folder's server. */
    void closeServers() {
        if (standby != null) {
            standby.close();
            Standbys.forget(standby);
        }
        if (broker != null) {
            broker.close();
        }
        if (workspace != null) {
            workspace.close();
        }
    }

    /** Kills the machine and closes every server. */
    @Override
    public void close() {
        if (vm != null) {
            vm.kill();
        }
        closeServers();
    }
}
