package dev.kosa8.vm;

import dev.kosa8.host.KosaException;
import java.io.IOException;
import java.time.Duration;
import java.util.List;

/**
 * A QEMU started ahead of need for a machine that will be restored: stopped,
 * waiting for a saved state ({@code -S -incoming defer}), its monitor
 * connected. A rewind replaces the sandbox's QEMU (QEMU loads a migration
 * stream only into a process started to receive one), and starting that
 * process and waiting for its monitor cost 45-95 ms of a 0.3-0.5 s rewind on
 * two busy cores (bench/history/undo.md, run 10); a standby spends them while
 * the sandbox runs, and {@link Vm#restore(Standby, VmSpec, List, SavedMachine,
 * Duration, java.util.function.Consumer, java.util.function.Consumer,
 * java.util.function.Consumer)} loads into it.
 *
 * <p>It opens the sandbox's root disk while the running QEMU has it open,
 * which QEMU allows for exactly this case (a migration's target on shared
 * storage): an incoming QEMU keeps its images inactive, taking no lock and
 * caching nothing, until the loaded machine is about to run, when it reads
 * them afresh. So the disk may be reverted to the checkpoint after the
 * standby started ({@code qemu-img snapshot -a} takes the image's lock,
 * which the standby does not hold), and the standby sees the reverted disk.
 * Its sockets and read window live in a directory of their own
 * ({@link VmSpec}'s paths), since the running QEMU holds the others.
 *
 * <p>What it costs while it waits: no CPU, and about 16 MB of private memory
 * (measured: RSS 38 MB, 22 MB of it QEMU's shared libraries); the guest's
 * RAM is reserved, not touched, until a state is loaded.
 */
public final class Standby implements AutoCloseable {
    private final VmSpec spec;
    private final List<String> argv;
    private final QemuProcess qemu;
    private final QmpClient qmp;

    private Standby(VmSpec spec, List<String> argv, QemuProcess qemu, QmpClient qmp) {
        this.spec = spec;
        this.argv = argv;
        this.qemu = qemu;
        this.qmp = qmp;
    }

    /**
     * Starts QEMU for {@code spec} with {@code argv} ({@link QemuCommandLine#of}), stopped and waiting for a
     * state, tells {@code started} about the process at once (before the wait for its monitor: a daemon dying
     * meanwhile must leave enough behind to find it), and connects to its monitor. On failure, including
     * {@code started}'s, nothing is left running.
     */
    public static Standby start(VmSpec spec, List<String> argv, java.util.function.Consumer<QemuProcess> started) {
        List<String> incoming = Vm.incoming(argv);
        QemuProcess qemu = Vm.startQemu(spec, incoming, false, started); // stopped there if started fails
        try {
            return new Standby(spec, incoming, qemu, QmpClient.connect(spec.qmpSocket(), Duration.ofSeconds(30),
                    e -> { }));
        } catch (IOException | RuntimeException e) {
            throw new KosaException(KosaException.Kind.VM, "cannot start a standby QEMU: " + e.getMessage()
                    + "; QEMU " + Vm.stop(qemu, null) + Vm.section("QEMU said", qemu.outputTail(10)),
                    "see " + Vm.qemuLog(spec), e);
        }
    }

    /** Whether a machine started with {@code incomingArgv} can be loaded into it. */
    boolean fits(List<String> incomingArgv) {
        return unfit(incomingArgv) == null;
    }

    /** Why a machine started with {@code incomingArgv} cannot be loaded into it; null when it can. */
    String unfit(List<String> incomingArgv) {
        if (!qemu.isAlive()) {
            return "it ended: " + qemu.exitDescription();
        }
        if (qmp.closedFuture().isDone()) {
            return "its monitor connection closed";
        }
        if (!forRestore(argv).equals(forRestore(incomingArgv))) { // every path of the spec is in it
            return "it was started for another command line";
        }
        return null;
    }

    /**
     * A command line as far as a restore reads it: all of it but the kernel's
     * command line, which only a boot reads (a restored guest's kernel is
     * running already). It carries the host's TSC frequency as
     * {@code /proc/cpuinfo} shows it at the moment ({@link TscFrequency}),
     * which moves on a host whose CPU changes speed.
     */
    static List<String> forRestore(List<String> argv) {
        List<String> masked = new java.util.ArrayList<>(argv);
        for (int i = 0; i + 1 < masked.size(); i++) {
            if (masked.get(i).equals("-append")) {
                masked.set(i + 1, "");
            }
        }
        return masked;
    }

    QemuProcess process() {
        return qemu;
    }

    QmpClient qmp() {
        return qmp;
    }

    public VmSpec spec() {
        return spec;
    }

    /** Stops it: it was not needed, or the sandbox ends. */
    @Override
    public void close() {
        qmp.close();
        qemu.kill();
    }
}
