package dev.kosa8.daemon;

import dev.kosa8.host.KosaException;
import dev.kosa8.vm.GuestCommand;
import dev.kosa8.vm.Vm;
import dev.kosa8.vm.WorkspaceTransport;
import dev.kosa8.vm.VmSpec;
import dev.kosa8.workspace.HeldChanges;
import dev.kosa8.workspace.WorkspaceServer;
import dev.kosa8.workspace.WorkspaceSnapshot;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.function.Consumer;

/**
 * The one folder, per sandbox: starts the 9p server of a sandbox's folder
 * beside its machine and has the agent mount it — at boot, after a restore
 * (with the saved fid table), and after a daemon restart (afresh).
 */
final class Folders {
    private final Consumer<String> log;
    private final SandboxLayout layout;

    Folders(SandboxLayout layout, Consumer<String> log) {
        this.layout = layout;
        this.log = log;
    }

    /** The sandbox's held layer, opened for a server to serve held paths from (the server closes it). */
    private HeldChanges held(Sandbox s) {
        return HeldLayers.open(layout, s.id(), logFor(s));
    }

    private Consumer<String> logFor(Sandbox s) {
        return m -> log.accept("sandbox " + s.id() + " workspace: " + m);
    }

    /**
     * Connects a new 9p server for the sandbox's folder to the workspace's
     * port and has the agent mount it. A sandbox whose folder cannot be
     * mounted is not started: running the agent's commands somewhere else
     * than the folder the user named would be worse than failing.
     */
    /**
     * The host path the agent also binds the folder at in the guest (so paths the guest prints are the
     * host's); none for a view, whose path is the daemon's way in ({@code /proc/PID/root/...}), no path of
     * the user's.
     */
    private static String guestPath(Sandbox s, Path folder) {
        return s.folderAccess().isView(s.record()) ? "" : folder.toString();
    }

    /** Whether the sandbox's guest may cache its folder (the default; not with {@code --workspace-transport uncached}). */
    private static boolean cached(Sandbox s) {
        return s.record().workspaceTransport().cached();
    }

    void serve(Sandbox s, Vm vm, Path folder) {
        try {
            WorkspaceServer server = WorkspaceServer.start(folder, vm.spec().workspaceSocket(),
                    vm.spec().workspaceWindow(), vm.spec().workspaceWrites(), Duration.ofSeconds(10), logFor(s), held(s), cached(s));
            s.update(r -> r.withWorkspace(server));
            GuestCommand.mountWorkspace(vm.agent(), guestPath(s, folder), WorkspaceServer.MSIZE, false,
                    s.record().workspaceTransport(), Duration.ofSeconds(60));
        } catch (RuntimeException e) {
            s.dropHalfStarted();
            throw new KosaException(KosaException.Kind.VM, "cannot share " + s.record().workspace() + " with sandbox "
                    + s.id() + ": " + e.getMessage(), "see `kosa8 logs " + s.id() + "` and the daemon's log", e);
        }
    }

    /**
     * After a daemon restart: serves the folder again on the same port and
     * has the agent mount it afresh. The previous server's fid table died
     * with it, so the guest's old mount cannot go on: the agent fails what
     * it waits on (EIO, where a request to the dead server would wait
     * forever) and mounts the folder anew, and new commands see it as before
     * (docs/workspace.md, "A daemon restart"). If that fails, the old mount
     * stays, answered with errors; `kosa8 stop` then shuts the guest down
     * rather than saving it, and `start` mounts the folder afresh.
     */
    void reconnect(Sandbox s, Vm vm, Path folder) {
        s.update(r -> r.workspaceLost(true));
        try {
            WorkspaceServer server = WorkspaceServer.start(folder, vm.spec().workspaceSocket(),
                    vm.spec().workspaceWindow(), vm.spec().workspaceWrites(), Duration.ofSeconds(5), logFor(s), held(s), cached(s));
            s.update(r -> r.withWorkspace(server));
            GuestCommand.mountWorkspace(vm.agent(), guestPath(s, folder), WorkspaceServer.MSIZE, true,
                    s.record().workspaceTransport(), Duration.ofSeconds(30));
            s.update(r -> r.workspaceLost(false));
            log.accept("sandbox " + s.id() + ": workspace mounted afresh; what waited on the old mount got EIO");
        } catch (RuntimeException e) { // KosaException or AgentException: the old mount stays, as said above
            log.accept("sandbox " + s.id() + ": cannot mount its workspace afresh: " + e.getMessage()
                    + "; it answers errors until the sandbox is stopped and started");
        }
    }

    /**
     * For a machine being restored: connects the folder's server to the new
     * QEMU's port before the guest runs, but has it read none of the guest's
     * requests until {@code beforeServe} (a rewind putting the folder back)
     * is done and the saved fid table {@code saved} is in. Those run on a
     * thread of their own, beside the guest's first steps, which under TCG
     * take longer than the folder. No guest process can see the folder
     * meanwhile (every access is a request the server has not read yet).
     *
     * @return done once the folder is served; failed with what stopped it
     */
    CompletableFuture<Void> serveRestored(Sandbox s, VmSpec spec, Path folder, WorkspaceSnapshot saved,
                                          Runnable beforeServe) {
        WorkspaceServer w = WorkspaceServer.connect(folder, spec.workspaceSocket(), spec.workspaceWindow(),
                spec.workspaceWrites(), Duration.ofSeconds(10), logFor(s), held(s), cached(s));
        s.update(r -> r.withWorkspace(w));
        CompletableFuture<Void> serving = new CompletableFuture<>();
        Thread.ofPlatform().daemon().name("kosa8-serve-" + s.id()).start(() -> {
            try {
                beforeServe.run();
                if (w.held() != null) {
                    w.held().reload(); // a rewind put the held layer back as it was at its checkpoint
                }
                if (saved != null) {
                    w.restore(saved);
                }
                w.serve();
                serving.complete(null);
            } catch (RuntimeException | Error e) {
                serving.completeExceptionally(e);
            }
        });
        return serving;
    }
}
