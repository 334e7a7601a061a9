package dev.kosa8.daemon;

import dev.kosa8.host.CrashPoints;
import dev.kosa8.host.KosaException;
import dev.kosa8.vm.Vm;
import java.time.Duration;
import java.util.Map;
import java.util.function.Consumer;

/**
 * {@code kosa8 stop}: a running persistent sandbox paused to disk (its machine saved as it runs, for a start to
 * resume exactly there), or, with {@code shutdown} or when it cannot be saved, its guest shut down, the next
 * start booting afresh from its disk.
 */
final class SandboxStops {
    private final SandboxLayout layout;
    private final SandboxStore store;
    private final Consumer<String> log;

    SandboxStops(SandboxLayout layout, SandboxStore store, Consumer<String> log) {
        this.layout = layout;
        this.store = store;
        this.log = log;
    }

    /**
     * Stops a sandbox. A running persistent one is paused to disk: its
     * machine saved as it runs ({@code Undo.suspend}), for a start to
     * resume exactly there. With {@code shutdown}, or when the machine cannot
     * be saved, the guest is shut down instead and the next start boots
     * afresh from the disk.
     */
    void stop(Sandbox s, boolean shutdown) {
        s.locked(() -> {
            SandboxState st = s.record().state();
            if (st == SandboxState.STOPPED) {
                return;
            }
            s.update(rt -> rt.stopping(true));
            Vm vm = s.vm();
            if (vm != null) {
                boolean lost = s.runtime().workspaceLost();
                if (lost && !shutdown) {
                    log.accept("sandbox " + s.id() + ": its workspace lost its server in a daemon restart; shutting it"
                            + " down rather than saving it so, and the next start mounts the folder afresh");
                }
                boolean saved = !shutdown && !lost && !s.record().ephemeral() && st == SandboxState.RUNNING
                        && vm.agent().isOpen() && suspend(s, vm);
                if (saved) {
                    CrashPoints.reached("stop", "saved", () -> vm.process().pid());
                    vm.quit(Duration.ofSeconds(15));
                    CrashPoints.reached("stop", "quit");
                } else {
                    vm.shutdown(Duration.ofSeconds(15));
                }
                s.update(rt -> rt.withVm(null));
            }
            s.closeServers();
            s.record(s.record().stopped());
            store.save(s.record());
            CrashPoints.reached("stop", "recorded");
            layout.cleanRuntime(s.id(), log);
        });
    }

    /** Pauses the machine to disk; false, said in the log, when it cannot be saved. */
    private boolean suspend(Sandbox s, Vm vm) {
        try {
            Map<String, Long> steps = s.undo().suspend(SandboxUndo.machine(s, vm));
            log.accept("sandbox " + s.id() + " paused to disk " + steps);
            return true;
        } catch (KosaException e) {
            log.accept("sandbox " + s.id() + ": " + e.getMessage() + "; shutting it down instead");
            return false;
        }
    }

}
