package dev.kosa8.daemon;

import com.fasterxml.jackson.databind.ObjectMapper;
import dev.kosa8.checkpoint.ram.RamStore;
import dev.kosa8.egress.EgressService;
import dev.kosa8.host.AtomicFile;
import dev.kosa8.host.CrashPoints;
import dev.kosa8.host.FileTrees;
import dev.kosa8.host.HostCommand;
import dev.kosa8.host.HostPaths;
import dev.kosa8.host.KosaException;
import dev.kosa8.vm.Accelerator;
import dev.kosa8.vm.GuestCommand;
import dev.kosa8.vm.MachineState;
import dev.kosa8.vm.Vm;
import dev.kosa8.vm.VmSpec;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;
import java.util.function.UnaryOperator;

/**
 * Makes one booted template ({@link Templates}): a cold boot of the shape's
 * machine in its jail, the agent's restore rehearsed, a network's downloads
 * rehearsed ({@link TemplateRehearsals}), the template's CA laid out in the
 * guest's trust stores ({@link GuestTrust}), a sync, the machine saved stopped
 * and its RAM kept as pages ({@link RamStore}). It is written in
 * {@code .making-SHAPE} and committed by a rename, then named as the shape's
 * current template, so a half-made one is never used. A crash before the
 * rename (the {@code template} crash points) leaves a {@code .making-}
 * directory that the next make or prune removes; one between the rename and
 * the pointer's write leaves a whole template no shape names, which the next
 * make replaces and {@code kosa8 image prune} removes.
 */
final class TemplateMaker {
    private static final ObjectMapper JSON = new ObjectMapper();
    private final Path root;
    private final Path runtime;
    private final String qemuBinary;
    private final UnaryOperator<VmSpec> confine;
    private final TemplateRehearsals rehearsals;
    private final GuestTrust trust;
    private final Consumer<String> log;

    TemplateMaker(Path root, Path runtime, String qemuBinary, UnaryOperator<VmSpec> confine,
                  TemplateRehearsals rehearsals, Consumer<String> log) {
        this.root = root;
        this.runtime = runtime;
        this.qemuBinary = qemuBinary;
        this.confine = confine;
        this.rehearsals = rehearsals;
        this.trust = new GuestTrust(log);
        this.log = log;
    }

    /**
     * Boots the shape's machine, rehearses it, saves it stopped, keeps its RAM as pages, and commits it: renamed
     * from {@code .making-SHAPE} to its own directory, then named in {@code pointer}. The caller holds the shape's
     * lock.
     *
     * @return the template's directory
     */
    Path make(Templates.Shape shape, BootImage image, Duration bootTimeout, Path pointer) {
        long t0 = System.nanoTime();
        Path dir = root.resolve(shape.name() + "-" + Long.toHexString(System.currentTimeMillis()));
        Path work = root.resolve(".making-" + shape.name());
        Path run = runtime.resolve(Integer.toHexString(shape.name().hashCode()));
        Vm vm = null;
        try {
            FileTrees.delete(work);
            Files.createDirectories(work);
            HostPaths.privateDirectory(run);
            Path disk = work.resolve("disk.qcow2");
            HostCommand.of("qemu-img", "create", "-q", "-f", "qcow2", "-F", "qcow2", "-b",
                            image.rootDisk().toAbsolutePath().toString(), disk.toString())
                    .logTo(work.resolve("qemu.log"))
                    .run(KosaException.Kind.VM, "creating a template's disk");
            CrashPoints.reached("template", "disk");
            Accelerator accel = Accelerator.parse(shape.accelerator());
            String args = image.kernelArgs() + dev.kosa8.vm.GuestArch.host().kernelArgs(accel);
            dev.kosa8.egress.tls.SandboxCa ca = null;
            if (shape.net()) {
                // a CA of the template's own: the init then writes every setting a CA brings; each sandbox's
                // replaces it after the restore
                ca = EgressService.certificateAuthority(work, "template");
                args += " kosa8.net=1 " + EgressService.kernelArgument(ca);
            }
            VmSpec spec = new VmSpec("template-" + Integer.toHexString(shape.name().hashCode()), accel, shape.cpus(),
                    shape.memoryMiB(), image.kernel(), image.initramfs(), disk, args, work.resolve("console.log"),
                    run.resolve("qmp.sock"), run.resolve("agent.sock"), shape.workspace() ? run.resolve("ws9p.sock")
                    : null, shape.net() ? run.resolve("net.sock") : null);
            spec = confine.apply(spec);
            vm = Vm.boot(spec, qemuBinary, bootTimeout, q -> { });
            Vm booted = vm;
            CrashPoints.reached("template", "booted", () -> booted.process().pid());
            TemplateRehearsals.restore(vm);
            // the rehearsal's socket lies beside the machine's runtime folder, not in it: that folder is QEMU's
            // (its jail hides only what is there when QEMU starts), and QEMU must not reach a listener of the daemon
            int downloads = shape.net() ? rehearsals.network(vm, spec, runtime.resolve(run.getFileName()
                    + ".rehearsal")) : 0;
            CrashPoints.reached("template", "rehearsed", () -> booted.process().pid());
            boolean trustLaidOut = ca != null && layOut(vm, ca, image);
            try {
                GuestCommand.run(vm.agent(), List.of("sync"), Duration.ofSeconds(60));
            } catch (dev.kosa8.vm.AgentConnection.AgentException e) {
                // an imported image may have no sync: kosa8's own busybox beside it has (the machine is saved
                // stopped anyway, its page cache with its RAM)
                try {
                    GuestCommand.run(vm.agent(), List.of("/run/kosa8/busybox", "sync"), Duration.ofSeconds(60));
                } catch (dev.kosa8.vm.AgentConnection.AgentException e2) {
                    log.accept("template " + shape.name() + ": no sync in the image (" + e.getMessage() + ")");
                }
            }
            vm.qmp().execute("stop", Map.of(), Duration.ofSeconds(30));
            MachineState.saveStopped(vm.qmp(), run.resolve("vmstate.sock"), work.resolve("machine.vmstate"),
                    Duration.ofMinutes(10));
            CrashPoints.reached("template", "saved", () -> booted.process().pid());
            vm.quit(Duration.ofSeconds(15));
            vm = null;
            keepAsPages(work, Templates.ramId(dir));
            CrashPoints.reached("template", "pages");
            FileTrees.delete(work.resolve("ca")); // the template's CA key is of no further use
            disk.toFile().setReadOnly();
            AtomicFile.write(work.resolve("template.json"), JSON.writerWithDefaultPrettyPrinter().writeValueAsBytes(Map.of(
                    "shape", shape, "created", Instant.now().toString(), "bootImage", image.id(),
                    "trustLaidOut", trustLaidOut, "rehearsals", TemplateRehearsals.REHEARSALS, "netRehearsals", downloads)));
            CrashPoints.reached("template", "described");
            Files.move(work, dir, StandardCopyOption.ATOMIC_MOVE);
            CrashPoints.reached("template", "moved");
            AtomicFile.write(pointer, (dir.getFileName() + "\n").getBytes(StandardCharsets.US_ASCII));
            CrashPoints.reached("template", "current");
            log.accept("made template " + dir.getFileName() + " in " + Duration.ofNanos(System.nanoTime() - t0)
                    .toMillis() + " ms");
            return dir;
        } catch (IOException | RuntimeException e) {
            if (vm != null) {
                vm.kill();
            }
            try {
                FileTrees.delete(work);
            } catch (IOException ignored) {
                // a leftover .making- directory is replaced by the next attempt
            }
            throw new KosaException(KosaException.Kind.VM, "cannot make the booted template " + shape.name() + ": "
                    + e.getMessage(), "see the daemon's log; sandboxes boot without a template meanwhile", e);
        } finally {
            try {
                FileTrees.delete(run);
            } catch (IOException ignored) {
                // sockets of a QEMU that is gone
            }
        }
    }

    /**
     * Lays the template's CA out in the guest ({@link GuestTrust#layOut}); an image whose trust stores cannot take
     * it (an imported one without a shell or a CA bundle) gets a template without, said in the log, and each
     * sandbox then installs its own CA as after a cold boot.
     */
    private boolean layOut(Vm vm, dev.kosa8.egress.tls.SandboxCa ca, BootImage image) {
        try {
            return trust.layOut(vm.agent(), ca, image, Duration.ofSeconds(60));
        } catch (RuntimeException e) {
            if (java.nio.file.Files.isRegularFile(image.systemCertificates())) {
                throw e;
            }
            log.accept("template of image " + image.id() + ": its trust stores do not take the CA (" + e.getMessage()
                    + ")");
            return false;
        }
    }

    /**
     * Keeps the template's RAM as pages (and deletes the stream), so each
     * sandbox made from it can share them with its first checkpoint; a
     * stream {@link RamStore} cannot take apart stays whole, and says why.
     */
    private void keepAsPages(Path work, String ramId) {
        try {
            new RamStore(work).store(ramId, work.resolve("machine.vmstate"), null);
        } catch (IOException e) {
            log.accept("template " + ramId + ": its RAM is kept as one stream (" + e.getMessage() + ")");
        }
    }
}
