package dev.kosa8.daemon;

import dev.kosa8.vm.Vm;
import java.util.function.Consumer;

/** Marks a sandbox failed when its QEMU dies without being asked to; its servers close either way. */
final class MachineWatch {
    private final SandboxStore store;
    private final SandboxLayout layout;
    private final Consumer<String> log;

    MachineWatch(SandboxStore store, SandboxLayout layout, Consumer<String> log) {
        this.store = store;
        this.layout = layout;
        this.log = log;
    }

    /** Watches {@code vm}, the machine {@code s} now runs. */
    void watch(Sandbox s, Vm vm) {
        vm.process().onExit().thenRun(() -> s.locked(() -> {
            if (s.vm() != vm) {
                return; // replaced or let go of on purpose
            }
            boolean expected = s.runtime().stopping();
            s.detach();
            if (!expected && s.record().state() == SandboxState.RUNNING) {
                String why = "QEMU exited unexpectedly (" + vm.process().exitDescription() + ")";
                log.accept("sandbox " + s.id() + ": " + why);
                s.record(s.record().failed(why));
                store.save(s.record());
                layout.cleanRuntime(s.id(), log);
            }
        }));
    }
}
