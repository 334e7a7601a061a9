package dev.kosa8.daemon;

import dev.kosa8.checkpoint.Undo;
import dev.kosa8.egress.EgressService;
import dev.kosa8.egress.NetMode;
import dev.kosa8.host.CrashPoints;
import dev.kosa8.host.HostCommand;
import dev.kosa8.host.HostPaths;
import dev.kosa8.host.KosaException;
import dev.kosa8.vm.Accelerator;
import dev.kosa8.vm.AcceleratorProbe;
import dev.kosa8.vm.QemuCommandLine;
import dev.kosa8.vm.QemuProcess;
import dev.kosa8.vm.SavedMachine;
import dev.kosa8.vm.Standby;
import dev.kosa8.vm.Vm;
import dev.kosa8.vm.VmSpec;
import dev.kosa8.workspace.WorkspaceSnapshot;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.function.Consumer;

/**
 * Starts a sandbox's machine, every way there is: a cold boot, a restore of
 * a booted template ({@link Templates}), a resume of a machine paused to
 * disk, and a fresh QEMU loaded from a saved state (a rewind's relaunch, a
 * fork). Each records the new QEMU in the sandbox's record as soon as it
 * runs, so a daemon dying next still finds it, and leaves the machine
 * watched ({@link MachineWatch}).
 */
final class MachineLauncher {
    private final SandboxLayout layout;
    private final MachineSpecs specs;
    private final SandboxStore store;
    private final BootImages images;
    private final AcceleratorProbe probe;
    private final String qemuBinary;
    private final Templates templates;
    private final GuestTrust trust;
    private final Folders folders;
    private final SandboxNetworks networks;
    private final MachineWatch watch;
    private final TurnCheckpoints turns;
    private final Consumer<String> log;
    private final java.util.Map<Path, Long> diskSizes = new java.util.concurrent.ConcurrentHashMap<>();

    MachineLauncher(SandboxLayout layout, MachineSpecs specs, SandboxStore store, BootImages images,
                    AcceleratorProbe probe, String qemuBinary, Templates templates, SandboxNetworks networks,
                    MachineWatch watch, TurnCheckpoints turns, Consumer<String> log) {
        this.turns = turns;
        this.layout = layout;
        this.specs = specs;
        this.store = store;
        this.images = images;
        this.probe = probe;
        this.qemuBinary = qemuBinary;
        this.templates = templates;
        this.trust = new GuestTrust(log);
        this.folders = new Folders(layout, log);
        this.networks = networks;
        this.watch = watch;
        this.log = log;
    }

    MachineSpecs specs() {
        return specs;
    }

    /**
     * The size of a new sandbox's disk as its guest sees it: its image's root
     * disk's, read once per image (an image's files never change), so
     * {@code create} runs no {@code qemu-img} of its own.
     */
    long newDiskSize(BootImage image) {
        return diskSizes.computeIfAbsent(image.rootDisk(), DiskUsage::virtualSize);
    }

    Folders folders() {
        return folders;
    }

    /**
     * Starts the machine of {@code s}, whose lock the caller holds: a new
     * sandbox ({@code fresh}) from its shape's booted template, else by a cold
     * boot; a stopped one where it was paused to disk, else by a cold boot of
     * its disk. The record says RUNNING once it is, FAILED if it cannot be.
     */
    void boot(Sandbox s, boolean fresh) {
        SandboxRecord r = s.record();
        try {
            BootImage image = images.of(r);
            Path disk = layout.rootDisk(r.id());
            // another architecture's guest is emulated, whatever this host's processor offers its own
            Accelerator accel = r.image().arch().foreign() ? Accelerator.TCG : r.accelerator().equals("auto")
                    ? probe.choose(image.kernel(), image.initramfs()).accelerator()
                    : Accelerator.parse(r.accelerator());
            Duration timeout = timeout(accel);
            Files.createDirectories(layout.directory(r.id()));
            Templates.Shape shape = new Templates.Shape(image.id(), accel.qemuName(), r.cpus(), r.memoryMiB(),
                    r.network().mode() != NetMode.NONE, !r.workspace().isEmpty());
            // a build sandbox boots a step's disk, which no other sandbox will: no template for it; nor for another
            // architecture's guest (templates are made for this host's)
            Templates.Template template = fresh && !images.isPinned(r.id()) && !r.image().arch().foreign()
                    ? template(shape, image, timeout) : null;
            if (fresh || !Files.exists(disk)) {
                createDisk(disk, template != null ? template.disk() : image.rootDisk());
            }
            HostPaths.privateDirectory(layout.runtime(r.id()));
            r = r.withQemu(0, null, accel.qemuName(), image.id()).withState(SandboxState.STARTING);
            save(s, r);
            if (r.network().mode() != NetMode.NONE) {
                var broker = networks.startBroker(r);
                s.update(rt -> rt.withBroker(broker));
            }
            // recorded before the wait for the agent: a daemon dying mid-boot leaves no unknown QEMU
            Consumer<QemuProcess> started = recordPid(s, r);
            Vm vm;
            if (template != null) {
                vm = fromTemplate(s, specs.of(r, image), image, template, started);
                if (vm == null) {
                    templates.discard(shape);
                    createDisk(disk, image.rootDisk()); // its template's disk was set aside with it
                }
            } else {
                vm = fresh ? null : resumeFromDisk(s, specs.of(r, image), started);
            }
            if (vm == null) {
                vm = Vm.boot(specs.of(r, image), qemuBinary, timeout, started);
                Vm booted = vm;
                s.update(rt -> rt.withVm(booted).stopping(false));
                attachNetwork(s, vm.spec());
                if (s.broker() != null) {
                    trustSandboxCa(s, vm, image, false);
                }
            }
            if (!r.workspace().isEmpty() && s.workspace() == null) {
                folders.serve(s, vm, s.folder());
            }
            s.update(rt -> rt.workspaceLost(false));
            running(s, vm);
            Vm up = vm;
            CrashPoints.reached(fresh ? "create" : "start", "running", () -> up.process().pid());
        } catch (KosaException e) {
            fail(s, firstLine(e.getMessage()));
            throw e;
        } catch (IOException | RuntimeException e) {
            fail(s, e.toString());
            throw new KosaException(KosaException.Kind.VM, "cannot start sandbox " + r.id() + ": " + e.getMessage(),
                    "see `kosa8 logs " + r.id() + "`", e);
        }
    }

    /** A boot that failed after QEMU started: nothing of it may keep running once the record says failed. */
    private void fail(Sandbox s, String why) {
        s.closeRuntime();
        save(s, s.record().failed(why));
        layout.cleanMemory(s.id(), log); // no QEMU maps it any more: a failed start's guest RAM on disk goes
    }

    static Duration timeout(Accelerator accel) {
        return accel == Accelerator.TCG ? Duration.ofSeconds(180) : Duration.ofSeconds(30);
    }

    /** A new overlay disk for a sandbox on {@code backing} (the image, or a template's disk); replaces any. */
    private static void createDisk(Path disk, Path backing) {
        try {
            Files.deleteIfExists(disk);
        } catch (IOException e) {
            throw new KosaException(KosaException.Kind.HOST, "cannot replace " + disk + ": " + e.getMessage(),
                    "check the sandbox's directory", e);
        }
        HostCommand.of("qemu-img", "create", "-q", "-f", "qcow2", "-F", "qcow2", "-b",
                        backing.toAbsolutePath().toString(), disk.toString())
                .logTo(disk.resolveSibling("qemu.log"))
                .run(KosaException.Kind.VM, "creating the sandbox's disk");
    }

    /** The booted template for a new sandbox of this shape, made first if needed; null when it cannot be had. */
    private Templates.Template template(Templates.Shape shape, BootImage image, Duration timeout) {
        try {
            return templates.obtain(shape, image, timeout);
        } catch (KosaException e) {
            log.accept(firstLine(e.getMessage()) + "; booting without a template");
            return null;
        }
    }

    /**
     * Starts a new sandbox from a booted template instead of booting it: a
     * fresh QEMU loads the template's machine (its disk is already the
     * sandbox's backing file); the guest wakes with its clock set and its
     * random generator reseeded; the sandbox's CA replaces the template's in
     * the guest's trust stores; the template's RAM pages become the base of
     * the sandbox's first checkpoint. The console log begins with the
     * template's boot. Returns null, having stopped what it started, when
     * the template cannot be restored: the caller boots afresh.
     */
    private Vm fromTemplate(Sandbox s, VmSpec spec, BootImage image, Templates.Template template,
                            Consumer<QemuProcess> started) {
        try {
            long t0 = System.nanoTime();
            Files.copy(template.console(), spec.consoleLog(), StandardCopyOption.REPLACE_EXISTING);
            Vm vm = restore(s, null, spec, template.machine(), null, null, started, () -> { });
            s.update(rt -> rt.withVm(vm).stopping(false));
            long t2 = System.nanoTime();
            if (spec.netSocket() != null) {
                trustSandboxCa(s, vm, image, template.trustLaidOut());
            }
            long t3 = System.nanoTime();
            vm.loadRest();
            if (template.ramId() != null) {
                s.undo().startFromTemplate(template.dir(), template.ramId());
            }
            log.accept("sandbox " + s.id() + ": restored from its template in " + (System.nanoTime() - t0) / 1_000_000
                    + " ms (load " + ((t2 - t0) / 1_000_000 - vm.wakeMillis()) + ", wake " + vm.wakeMillis() + ", trust "
                    + (t3 - t2) / 1_000_000 + " ms)");
            return vm;
        } catch (IOException | RuntimeException e) {
            log.accept("sandbox " + s.id() + ": cannot start from its template (" + firstLine(String.valueOf(
                    e.getMessage())) + "); booting afresh");
            s.dropHalfStarted();
            return null;
        }
    }

    /** Puts the sandbox's CA in the guest's trust stores ({@link GuestTrust}). */
    private void trustSandboxCa(Sandbox s, Vm vm, BootImage image, boolean laidOut) {
        try {
            trust.install(vm.agent(), EgressService.certificateAuthority(layout.directory(s.id()), s.id()),
                    networks.hostCas(s.record()), image, laidOut, Duration.ofSeconds(60));
        } catch (RuntimeException e) {
            if (Files.isRegularFile(image.systemCertificates())) {
                throw e;
            }
            // an imported image kept no CA bundle and may lack the shell and tools the script needs: the init
            // wrote the CA to /etc/kosa8/ca.pem (NODE_EXTRA_CA_CERTS names it); intercepted TLS needs a client
            // told to trust it
            log.accept("sandbox " + s.id() + ": the image's trust stores do not take the sandbox CA ("
                    + firstLine(String.valueOf(e.getMessage())) + "); only /etc/kosa8/ca.pem holds it");
        }
    }

    /**
     * Resumes a sandbox paused to disk by a stop: a fresh QEMU loads the
     * saved machine, the workspace server takes the saved fid table before
     * the guest runs, and the guest wakes with its clock set and its random
     * generator reseeded. Returns null, having discarded the saved state,
     * when there is none or it cannot be resumed (a changed image or QEMU):
     * the caller then boots afresh from the disk.
     */
    private Vm resumeFromDisk(Sandbox s, VmSpec spec, Consumer<QemuProcess> started) {
        Undo undo = s.undo();
        Path folder = s.folder();
        try {
            var saved = undo.suspended();
            if (saved.isEmpty()) {
                return null;
            }
            Vm vm = restore(s, null, spec, saved.get().machine(), folder, saved.get().server(), started, () -> { });
            s.update(rt -> rt.withVm(vm).stopping(false));
            CrashPoints.reached("start", "restored", () -> vm.process().pid());
            undo.discardSuspended();
            CrashPoints.reached("start", "discarded", () -> vm.process().pid());
            log.accept("sandbox " + s.id() + " resumed where it was stopped (" + saved.get().when() + ")");
            turns.woke(s, vm, null, null);
            return vm;
        } catch (IOException | RuntimeException e) {
            log.accept("sandbox " + s.id() + ": cannot resume where it was stopped (" + firstLine(String.valueOf(
                    e.getMessage())) + "); booting afresh from its disk");
            s.dropHalfStarted();
            try {
                undo.discardSuspended();
            } catch (IOException ignored) {
                // booting afresh does not need it gone
            }
            return null;
        }
    }

    /**
     * A rewind's second half ({@link Undo.Relauncher}): a fresh QEMU for the
     * sandbox — the standby, when it fits — loaded from a saved state, its
     * workspace served again with the checkpoint's fid table once {@code
     * beforeServe} has put its folder back. Replaces the sandbox's machine
     * and records the new QEMU at once, so a daemon dying now still finds it.
     */
    Vm relaunch(Sandbox s, SavedMachine state, WorkspaceSnapshot server, Runnable beforeServe) {
        SandboxRecord r = s.record();
        VmSpec spec = specs.forState(s.id(), nextSpec(s), state);
        Path folder = s.folder();
        Vm old = s.vm();
        s.update(rt -> rt.withWorkspace(null));
        Standby standby = Standbys.take(s);
        Vm next;
        try {
            next = restore(s, standby, spec, state, folder, server, recordPid(s, r), beforeServe);
        } finally {
            Standbys.forget(standby);
        }
        // the folder is served with the checkpoint's fid table again
        s.update(rt -> rt.withVm(next).workspaceLost(false));
        running(s, next);
        Path oldMemory = old == null ? null : old.spec().memoryFile();
        if (oldMemory != null && !oldMemory.equals(spec.memoryFile())) {
            try {
                Files.deleteIfExists(oldMemory); // the old QEMU has let go of its files; what it maps goes as it ends
            } catch (IOException e) {
                log.accept("sandbox " + s.id() + ": cannot remove the old machine's memory file: " + e.getMessage());
            }
        }
        return next;
    }

    /** The spec of the machine that would replace {@code s}'s running one: in the machine directory it does not use. */
    VmSpec nextSpec(Sandbox s) {
        return specs.of(s.record(), images.of(s.record()), layout.nextMachineDir(s.id(), s.vm()));
    }

    /**
     * A new sandbox's machine restored from another's checkpoint (a fork):
     * the record says RUNNING once it runs.
     */
    Vm restoreFork(Sandbox s, SavedMachine state, Path folder, WorkspaceSnapshot server) {
        SandboxRecord r = s.record();
        Vm vm = restore(s, null, specs.forState(r.id(), specs.of(r, images.of(r)), state), state, folder, server,
                recordPid(s, r), () -> { });
        s.update(rt -> rt.withVm(vm));
        vm.loadRest();
        running(s, vm);
        return vm;
    }

    /** Records {@code vm} as the sandbox's running machine, and watches it. */
    private void running(Sandbox s, Vm vm) {
        awaitNetwork(s, timeout(vm.spec().accelerator()));
        save(s, s.record().withQemu(vm.process().pid(), vm.process().startInstant(), s.record().accelerator(),
                s.record().imageId()).withState(SandboxState.RUNNING));
        watch.watch(s, vm);
        turns.attach(s, vm);
    }

    /**
     * A fresh QEMU for the sandbox, loaded from a saved state (a checkpoint,
     * a pause to disk, a template) — into {@code standby} when it fits
     * ({@link Vm#restore(Standby, VmSpec, java.util.List, SavedMachine, Duration, Consumer, Consumer, Consumer)}):
     * its pid goes to {@code started} at once; the folder, when there is
     * one, is served with the saved fid table once {@code beforeServe} is
     * done ({@link Folders#serveRestored}). Returns once the guest has thawed
     * and the folder is served; if the folder cannot be put back, the new
     * machine is killed and the failure thrown.
     */
    private Vm restore(Sandbox s, Standby standby, VmSpec spec, SavedMachine state, Path folder,
                       WorkspaceSnapshot server, Consumer<QemuProcess> started, Runnable beforeServe) {
        CompletableFuture<Void> serving = new CompletableFuture<>();
        Vm vm = Vm.restore(standby, spec, QemuCommandLine.of(spec, qemuBinary), state, timeout(spec.accelerator()),
                started, qmp -> {
                    // before the guest runs, so its agent finds the new host's Hello as it wakes
                    attachNetwork(s, spec);
                    if (folder == null) {
                        beforeServe.run();
                        serving.complete(null);
                    } else {
                        folders.serveRestored(s, spec, folder, server, beforeServe).whenComplete((v, e) -> {
                            if (e != null) {
                                serving.completeExceptionally(e);
                            } else {
                                serving.complete(null);
                            }
                        });
                    }
                }, m -> log.accept("sandbox " + s.id() + ": " + m));
        try {
            serving.get(); // no deadline, as before: a large folder takes as long as it takes to put back
            return vm;
        } catch (ExecutionException e) {
            Throwable cause = e.getCause();
            vm.kill();
            throw new KosaException(KosaException.Kind.VM, "the sandbox's folder could not be served again: "
                    + cause.getMessage(), "the saved state is kept", cause);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            vm.kill();
            throw new KosaException(KosaException.Kind.VM, "interrupted while the sandbox's folder was put back",
                    "try again", e);
        }
    }

    /**
     * Joins the sandbox's broker to the network port of the machine {@code spec} describes ({@code Broker.attach}),
     * ending the link to the machine before: at every boot and restore, since each machine has a port of its own.
     * Nothing for a sandbox without a network.
     */
    void attachNetwork(Sandbox s, VmSpec spec) {
        var broker = s.broker();
        if (broker != null && spec.netSocket() != null) {
            broker.attach(spec.netSocket(), spec.netWindow(), m -> log.accept("sandbox " + s.id() + ": " + m));
        }
    }

    /**
     * Waits until the guest's agent answers on the network link, so the sandbox's first command finds its network
     * there: a connection made before the answer would be reset. Logs, and goes on, when it does not answer.
     */
    void awaitNetwork(Sandbox s, Duration timeout) {
        var broker = s.broker();
        if (broker != null && !broker.awaitLinked(timeout)) {
            log.accept("sandbox " + s.id() + ": its agent did not answer on the network link; its network does not "
                    + "work (see its console: `kosa8 logs " + s.id() + "`)");
        }
    }

    /** Records a QEMU in the sandbox's record as soon as it runs: a daemon dying next still finds it. */
    private Consumer<QemuProcess> recordPid(Sandbox s, SandboxRecord r) {
        return q -> save(s, r.withQemu(q.pid(), q.startInstant(), r.accelerator(), r.imageId()));
    }

    private void save(Sandbox s, SandboxRecord r) {
        s.record(r);
        store.save(r);
    }

    static String firstLine(String s) {
        int nl = s.indexOf('\n');
        return nl < 0 ? s : s.substring(0, nl);
    }
}
