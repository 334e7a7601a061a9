package dev.kosa8.checkpoint;

import dev.kosa8.vm.GuestCommand;
import dev.kosa8.vm.MachineState;
import dev.kosa8.vm.Vm;
import dev.kosa8.workspace.WorkspaceServer;
import java.io.IOException;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * The instant's three holds, taken in order — the guest's processes frozen,
 * the 9p server idle, QEMU stopped — each pushed onto the procedure's
 * {@link Rollback} as it is taken, so a failure gives back exactly what was
 * held, newest first: the same for a checkpoint and a pause to disk.
 */
final class Halt {
    private final Vm vm;
    private final WorkspaceServer workspace;
    private final Rollback rollback;
    private Rollback.Entry frozen;
    private Rollback.Entry paused;
    private Rollback.Entry stopped;

    /** @param workspace the sandbox's 9p server, or null when it shares no folder */
    Halt(Vm vm, WorkspaceServer workspace, Rollback rollback) {
        this.vm = vm;
        this.workspace = workspace;
        this.rollback = rollback;
    }

    void enter(Steps steps) throws IOException, InterruptedException {
        GuestCommand.freeze(vm.agent(), Checkpointer.FREEZE);
        frozen = rollback.push("thaw the guest", this::thaw);
        steps.done("freeze");
        if (workspace != null) {
            // settled: also every read window slot back, since this machine goes on from here
            if (!workspace.pauseSettled(Duration.ofSeconds(10))) {
                throw new IOException("the workspace server did not become idle within 10 s");
            }
            paused = rollback.push("resume the workspace server", workspace::resume);
        }
        steps.done("idle");
        vm.qmp().execute("stop", Map.of(), Checkpointer.QMP);
        stopped = rollback.push("resume the machine", () -> vm.qmp().execute("cont", Map.of(), Checkpointer.QMP));
        steps.done("stop");
    }

    /** Runs the machine again (QMP {@code cont}): its state is saved, with the machine stopped. */
    void resume() throws Exception {
        stopped.runNow();
    }

    /** QEMU runs the machine again by itself (a background snapshot's start). */
    void machineRuns() {
        stopped.drop();
    }

    /**
     * The machine runs on while QEMU sends its RAM ({@code saving}): the
     * server serves again and the processes thaw. Until QEMU has sent a page,
     * a guest write to it waits for it to be sent, so on a loaded host the
     * thaw's answer may wait for the stream: it is waited for while the
     * stream runs (at most {@link Checkpointer#QMP}), and
     * {@link Checkpointer#FREEZE} after.
     */
    void leave(MachineState.Saving saving) throws Exception {
        if (paused != null) {
            paused.runNow();
        }
        GuestCommand.Pending thaw = GuestCommand.thawLater(vm.agent(), 0, new byte[0]);
        long deadline = System.nanoTime() + Checkpointer.FREEZE.toNanos();
        long last = System.nanoTime() + Checkpointer.QMP.toNanos(); // a stream that never ends is waited for no longer
        while (true) {
            try {
                thaw.done().get(1, TimeUnit.SECONDS);
                frozen.drop();
                return;
            } catch (TimeoutException e) {
                if (System.nanoTime() < last && saving.streaming(Duration.ofSeconds(10))) {
                    deadline = System.nanoTime() + Checkpointer.FREEZE.toNanos();
                } else if (System.nanoTime() > deadline) {
                    vm.agent().abandon(thaw.channel());
                    throw new IOException("the guest did not thaw within " + Checkpointer.FREEZE.toSeconds()
                            + " s of QEMU's stream ending, or of " + Checkpointer.QMP.toMinutes()
                            + " minutes of waiting for it (" + saving.describe() + ")");
                }
            } catch (ExecutionException e) {
                throw (RuntimeException) e.getCause();
            }
        }
    }

    private void thaw() {
        GuestCommand.thaw(vm.agent(), 0, new byte[0], Checkpointer.FREEZE);
    }
}
