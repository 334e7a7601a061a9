package dev.kosa8.daemon;

import dev.kosa8.egress.EgressService;
import dev.kosa8.egress.NetMode;
import dev.kosa8.vm.Accelerator;
import dev.kosa8.vm.CheckpointMode;
import dev.kosa8.vm.Jail;
import dev.kosa8.vm.VmSpec;
import java.nio.file.Path;

/** The {@link VmSpec} of a sandbox's machine, from its record, its image and the {@link SandboxLayout}. */
final class MachineSpecs {
    private final SandboxLayout layout;
    private final Jail jail;
    private final Budget defaults;
    private final CheckpointMode mode;

    /**
     * @param jail     the jail every machine runs in ({@link dev.kosa8.vm.JailProbe})
     * @param defaults the budget of a sandbox whose record has none, and of templates ({@link Settings#budget})
     * @param mode     how checkpoints save RAM: in {@link CheckpointMode#FILE_RAM} a sandbox's machine keeps its
     *                 RAM in a file ({@link SandboxLayout#memoryFile})
     */
    MachineSpecs(SandboxLayout layout, Jail jail, Budget defaults, CheckpointMode mode) {
        this.layout = layout;
        this.jail = jail;
        this.defaults = defaults;
        this.mode = mode;
    }

    /** What {@code r} may keep on disk: its own budget, else the settings' default. */
    Budget budget(SandboxRecord r) {
        return r.budgetOr(defaults);
    }

    Jail jail() {
        return jail;
    }

    /** The spec of the machine of {@code r} in its runtime directory. */
    VmSpec of(SandboxRecord r, BootImage image) {
        return of(r, image, layout.runtime(r.id()));
    }

    /**
     * The spec of a machine for {@code r} whose QEMU keeps its sockets and
     * read window in {@code machineDir}: the runtime directory, or its
     * {@value SandboxLayout#ALT} subdirectory for a QEMU started while another
     * runs (a standby, {@link Standbys}); the broker's sockets stay in the
     * runtime directory, shared, and the daemon joins each machine's network
     * port to them ({@code Broker.attach}). A null {@code image} gives a spec good for
     * re-attaching to a running QEMU, which needs no image file.
     */
    VmSpec of(SandboxRecord r, BootImage image, Path machineDir) {
        Path dir = layout.directory(r.id());
        BootImage img = image != null ? image : new BootImage("", Path.of("/"), Path.of("/"), Path.of("/"), "");
        Accelerator accel = r.accelerator().equals("auto") ? Accelerator.TCG : Accelerator.parse(r.accelerator());
        boolean net = r.network().mode() != NetMode.NONE;
        return new VmSpec(r.id(), accel, r.cpus(), r.memoryMiB(), img.kernel(), img.initramfs(),
                layout.rootDisk(r.id()),
                img.kernelArgs() + r.image().arch().kernelArgs(accel)
                        + (net ? " kosa8.net=1 " + EgressService.kernelArgument(EgressService.certificateAuthority(dir,
                                r.id())) : ""), layout.consoleLog(r.id()),
                machineDir.resolve("qmp.sock"), machineDir.resolve("agent.sock"),
                r.workspace().isEmpty() ? null : machineDir.resolve("ws9p.sock"),
                net ? machineDir.resolve("net.sock") : null)
                .confined(jail, budget(r).consoleBytes())
                .withMemoryFile(mode == CheckpointMode.FILE_RAM ? layout.memoryFile(r.id(), machineDir) : null)
                .withArch(r.image().arch());
    }

    /**
     * The spec of {@code r}'s QEMU running in {@code machineDir}, found again by a restarted daemon: its RAM is a
     * file where its command line says so, whatever this daemon's mode (a daemon restarted in the other mode
     * checkpoints each machine the way it runs).
     */
    VmSpec running(SandboxRecord r, Path machineDir) {
        VmSpec spec = of(r, null, machineDir);
        boolean fileRam = dev.kosa8.vm.QemuProcess.arguments(r.qemuPid())
                .map(a -> String.join(" ", a).contains("memory-backend-file,id="))
                .orElse(spec.memoryFile() != null);
        return spec.withMemoryFile(fileRam ? layout.memoryFile(r.id(), machineDir) : null);
    }

    /**
     * {@code spec} fit to restore {@code state} into: a machine whose RAM was saved as a file
     * ({@link dev.kosa8.vm.FileRamMachine}) keeps it in a file again, whatever this daemon's mode (a daemon
     * restarted in the background-snapshot mode still rewinds to the checkpoints taken in file RAM); any other
     * state loads into either kind.
     */
    VmSpec forState(String id, VmSpec spec, dev.kosa8.vm.SavedMachine state) {
        if (state instanceof dev.kosa8.vm.FileRamMachine && spec.memoryFile() == null) {
            return spec.withMemoryFile(layout.memoryFile(id, spec.qmpSocket().getParent()));
        }
        return spec;
    }

    /** A template's machine, in the same jail and with the same console limit as the sandboxes'. */
    VmSpec confine(VmSpec spec) {
        return spec.confined(jail, defaults.consoleBytes());
    }

    /** Checks a new sandbox's settings: VmSpec's constructor names every bad field. */
    void validate(SandboxRecord r) {
        Path run = layout.runtime(r.id());
        new VmSpec(r.id(), Accelerator.TCG, r.cpus(), r.memoryMiB(), Path.of("/"), Path.of("/"), Path.of("/"), "",
                Path.of("/"), run.resolve("qmp.sock"), run.resolve("agent.sock"), run.resolve("ws9p.sock"),
                r.network().mode() == NetMode.NONE ? null : run.resolve("net.sock"));
    }
}
