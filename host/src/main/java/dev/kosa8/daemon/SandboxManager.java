package dev.kosa8.daemon;

import dev.kosa8.host.HostCommand;
import dev.kosa8.host.HostPaths;
import dev.kosa8.host.KosaException;
import dev.kosa8.egress.Broker;
import dev.kosa8.egress.EgressService;
import dev.kosa8.egress.HostPattern;
import dev.kosa8.egress.NetMode;
import dev.kosa8.egress.SandboxNetwork;
import dev.kosa8.vm.Accelerator;
import dev.kosa8.vm.GuestCommand;
import dev.kosa8.vm.QemuCommandLine;
import dev.kosa8.workspace.WorkspaceFolder;
import dev.kosa8.workspace.WorkspaceServer;
import dev.kosa8.vm.AcceleratorProbe;
import dev.kosa8.vm.Tail;
import dev.kosa8.vm.TscFrequency;
import dev.kosa8.vm.Vm;
import dev.kosa8.vm.VmSpec;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Consumer;
import java.util.function.Supplier;

/**
 * Owns every sandbox of the user: creates, boots, stops, removes them, keeps
 * their records on disk, and re-attaches to machines still running after the
 * daemon itself restarts.
 */
public final class SandboxManager {
    /** What a new sandbox should be. */
    public record CreateRequest(boolean ephemeral, int cpus, int memoryMiB, String accelerator, String workspace,
                                NetMode net, List<String> allow, List<String> secrets,
                                dev.kosa8.vm.WorkspaceTransport workspaceTransport) {
        public CreateRequest {
            workspaceTransport = workspaceTransport == null ? dev.kosa8.vm.WorkspaceTransport.AUTO : workspaceTransport;
            net = net == null ? NetMode.CLOSED : net;
            allow = allow == null ? List.of() : List.copyOf(allow);
            secrets = secrets == null ? List.of() : List.copyOf(secrets);
        }
    }

    private final HostPaths paths;
    private final SandboxStore store;
    private final Supplier<BootImage> images;
    private final AcceleratorProbe probe;
    private final String qemuBinary;
    private final Consumer<String> log;
    private final EgressService egress;
    private final SandboxSecrets secrets;
    private final Templates templates;
    private final Standbys standbys;
    private final GuestTrust trust;
    private final Map<String, Sandbox> sandboxes = new ConcurrentHashMap<>();

    public SandboxManager(HostPaths paths, Supplier<BootImage> images, AcceleratorProbe probe, String qemuBinary,
                          EgressService egress, Supplier<dev.kosa8.secrets.SecretStore> secretStore,
                          Consumer<String> log) {
        this.egress = egress;
        this.secrets = new SandboxSecrets(secretStore, log);
        this.templates = new Templates(paths, qemuBinary, log);
        this.standbys = new Standbys(log);
        this.trust = new GuestTrust(log);
        this.paths = paths;
        this.store = new SandboxStore(paths.sandboxes());
        this.images = images;
        this.probe = probe;
        this.qemuBinary = qemuBinary;
        this.log = log;
    }

    /** At daemon start: loads every record and re-attaches to machines that still run. */
    public void recover() {
        for (SandboxRecord r : store.loadAll(log)) {
            Sandbox s = new Sandbox(r);
            sandboxes.put(r.id(), s);
            Standbys.sweep(r.qemuPid(), machineDirs(r.id()), log);
            if (r.state() != SandboxState.RUNNING && r.state() != SandboxState.STARTING) {
                if (r.state() == SandboxState.REMOVING) {
                    // the daemon died half-way through a removal: finish it, QEMU included
                    discardLeftover(s);
                }
                continue;
            }
            if (r.ephemeral()) {
                // its client went away with the old daemon: nobody can use it now
                log.accept("removing ephemeral sandbox " + r.id() + " left by a previous daemon");
                discardLeftover(s);
                continue;
            }
            try {
                Vm vm = Vm.reattach(vmSpec(r, null, machineDirOf(r)), r.qemuPid(), r.qemuStarted(),
                        Duration.ofSeconds(20));
                s.vm(vm);
                if (dev.kosa8.checkpoint.Checkpointer.wasInterrupted(checkpointDir(s))) {
                    // a daemon that died in the middle of a checkpoint or rewind left the processes frozen
                    try {
                        GuestCommand.thaw(vm.agent(), 0, new byte[0], Duration.ofSeconds(20));
                        dev.kosa8.checkpoint.Checkpointer.clearInterrupted(checkpointDir(s));
                        log.accept("sandbox " + r.id() + ": a checkpoint or rewind was cut short; its processes "
                                + "run on");
                    } catch (RuntimeException | IOException e) {
                        log.accept("sandbox " + r.id() + ": cannot thaw its processes: " + e.getMessage());
                    }
                }
                if (r.network().mode() != NetMode.NONE) {
                    s.broker(startBroker(r));
                }
                s.record(r.withState(SandboxState.RUNNING));
                if (!r.workspace().isEmpty()) {
                    reconnectWorkspace(s, vm, Path.of(r.workspace()));
                }
                watch(s, vm);
                log.accept("re-attached to sandbox " + r.id() + " (QEMU pid " + r.qemuPid() + ")");
            } catch (KosaException e) {
                QemuKill.ifSame(r.qemuPid(), r.qemuStarted());
                s.record(r.failed("lost while the daemon was down: " + e.getMessage()));
                store.save(s.record());
                log.accept("sandbox " + r.id() + ": " + e.getMessage());
            }
        }
    }

    /** Stops a previous daemon's QEMU for the sandbox, if it still runs, and removes its files. */
    private void discardLeftover(Sandbox s) {
        SandboxRecord r = s.record();
        QemuKill.ifSame(r.qemuPid(), r.qemuStarted());
        try {
            removeFiles(s);
        } catch (KosaException e) {
            log.accept("sandbox " + r.id() + ": " + e.getMessage());
        }
    }

    public Sandbox create(CreateRequest req) {
        String id = SandboxIds.newId();
        List<dev.kosa8.secrets.GrantedSecret> granted = secrets.grant(List.of(), req.secrets());
        if (!granted.isEmpty() && req.net() == NetMode.NONE) {
            throw new KosaException(KosaException.Kind.USAGE, "--secret needs a network: the key is put into requests"
                    + " on their way out", "drop --net none, or drop --secret");
        }
        SandboxNetwork network = new SandboxNetwork(req.net(), List.of()).allowing(egress.presets().expand(req.allow()))
                .allowing(secrets.allowRules(granted));
        SandboxRecord r = new SandboxRecord(id, Instant.now(), req.ephemeral(), req.cpus(), req.memoryMiB(),
                req.accelerator(), "", SandboxState.STARTING, 0, null, "",
                WorkspaceFolder.check(req.workspace(), Path.of(System.getProperty("user.home"))), network, granted,
                req.workspaceTransport());
        validate(r);
        Sandbox s = new Sandbox(r);
        sandboxes.put(id, s);
        store.save(r);
        s.lock().lock();
        try {
            boot(s, true);
            return s;
        } finally {
            s.lock().unlock();
        }
    }

    private void validate(SandboxRecord r) {
        // VmSpec's constructor names every bad field; build one just to check
        new VmSpec(r.id(), Accelerator.TCG, r.cpus(), r.memoryMiB(), Path.of("/"), Path.of("/"), Path.of("/"), "",
                Path.of("/"), runtimeDir(r.id()).resolve("qmp.sock"), runtimeDir(r.id()).resolve("agent.sock"),
                runtimeDir(r.id()).resolve("ws9p.sock"), r.network().mode() == NetMode.NONE ? null
                        : EgressService.guestNetwork(runtimeDir(r.id())));
    }

    private void boot(Sandbox s, boolean fresh) {
        SandboxRecord r = s.record();
        try {
            BootImage image = images.get();
            Path dir = store.directory(r.id());
            Path disk = dir.resolve("root.qcow2");
            Accelerator accel = r.accelerator().equals("auto")
                    ? probe.choose(image.kernel(), image.initramfs()).accelerator()
                    : Accelerator.parse(r.accelerator());
            Duration timeout = accel == Accelerator.TCG ? Duration.ofSeconds(180) : Duration.ofSeconds(30);
            Files.createDirectories(dir);
            Templates.Shape shape = new Templates.Shape(image.id(), accel.qemuName(), r.cpus(), r.memoryMiB(),
                    r.network().mode() != NetMode.NONE, !r.workspace().isEmpty());
            Templates.Template template = fresh ? template(shape, image, timeout) : null;
            if (fresh || !Files.exists(disk)) {
                createDisk(disk, template != null ? template.disk() : image.rootDisk());
            }
            HostPaths.privateDirectory(runtimeDir(r.id()));
            r = r.withQemu(0, null, accel.qemuName(), image.id()).withState(SandboxState.STARTING);
            s.record(r);
            store.save(r);
            if (r.network().mode() != NetMode.NONE) {
                s.broker(startBroker(r));
            }
            SandboxRecord starting = r;
            java.util.function.Consumer<dev.kosa8.vm.QemuProcess> started = q -> {
                // recorded before the wait for the agent: a daemon dying mid-boot leaves no unknown QEMU
                SandboxRecord withPid = starting.withQemu(q.pid(), q.startInstant(), accel.qemuName(), image.id());
                s.record(withPid);
                store.save(withPid);
            };
            Vm vm;
            if (template != null) {
                vm = fromTemplate(s, vmSpec(r, image), image, template, started);
                if (vm == null) {
                    templates.discard(shape);
                    createDisk(disk, image.rootDisk()); // its template's disk was set aside with it
                }
            } else {
                vm = fresh ? null : resumeFromDisk(s, vmSpec(r, image), started);
            }
            if (vm == null) {
                vm = Vm.boot(vmSpec(r, image), qemuBinary, timeout, started);
                s.vm(vm);
                s.stopping(false);
                if (s.broker() != null) {
                    trustSandboxCa(s, vm, image, false);
                }
            }
            if (!r.workspace().isEmpty() && s.workspace() == null) {
                serveWorkspace(s, vm, Path.of(r.workspace()));
            }
            r = r.withQemu(vm.process().pid(), vm.process().startInstant(), accel.qemuName(), image.id())
                    .withState(SandboxState.RUNNING);
            s.workspaceLost(false);
            s.record(r);
            store.save(r);
            watch(s, vm);
        } catch (KosaException e) {
            abandonBoot(s);
            s.record(s.record().failed(firstLine(e.getMessage())));
            store.save(s.record());
            throw e;
        } catch (IOException | RuntimeException e) {
            abandonBoot(s);
            s.record(s.record().failed(e.toString()));
            store.save(s.record());
            throw new KosaException(KosaException.Kind.VM, "cannot start sandbox " + r.id() + ": " + e.getMessage(),
                    "see `kosa8 logs " + r.id() + "`", e);
        }
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
                            java.util.function.Consumer<dev.kosa8.vm.QemuProcess> started) {
        try {
            long t0 = System.nanoTime();
            Files.copy(template.console(), spec.consoleLog(), java.nio.file.StandardCopyOption.REPLACE_EXISTING);
            Vm vm = restoreMachine(s, spec, template.machine(), null, null, started, () -> { });
            s.vm(vm);
            s.stopping(false);
            long t2 = System.nanoTime();
            if (spec.network() != null) {
                trustSandboxCa(s, vm, image, template.trustLaidOut());
            }
            long t3 = System.nanoTime();
            vm.loadRest();
            if (template.ramId() != null) {
                dev.kosa8.checkpoint.Checkpointer.startFrom(checkpointDir(s), template.dir(), template.ramId(), true, log);
            }
            log.accept("sandbox " + s.id() + ": restored from its template in " + (System.nanoTime() - t0) / 1_000_000
                    + " ms (load " + ((t2 - t0) / 1_000_000 - vm.wakeMillis()) + ", wake " + vm.wakeMillis() + ", trust "
                    + (t3 - t2) / 1_000_000 + " ms)");
            return vm;
        } catch (IOException | RuntimeException e) {
            log.accept("sandbox " + s.id() + ": cannot start from its template (" + firstLine(String.valueOf(
                    e.getMessage())) + "); booting afresh");
            dropHalfStarted(s);
            return null;
        }
    }

    /** Puts the sandbox's CA in the guest's trust stores ({@link GuestTrust}). */
    private void trustSandboxCa(Sandbox s, Vm vm, BootImage image, boolean laidOut) {
        trust.install(vm.agent(), EgressService.certificateAuthority(store.directory(s.id()), s.id()), image, laidOut,
                Duration.ofSeconds(60));
    }

    /**
     * Resumes a sandbox paused to disk by {@link #stop}: a fresh QEMU loads
     * the saved machine, the workspace server takes the saved fid table
     * before the guest runs, and the guest wakes with its clock set and its
     * random generator reseeded. Returns null, having discarded the saved
     * state, when there is none or it cannot be resumed (a changed image or
     * QEMU): the caller then boots afresh from the disk.
     */
    private Vm resumeFromDisk(Sandbox s, VmSpec spec,
                              java.util.function.Consumer<dev.kosa8.vm.QemuProcess> started) {
        dev.kosa8.checkpoint.Suspension saved = suspension(s);
        if (!saved.exists()) {
            return null;
        }
        Path folder = s.record().workspace().isEmpty() ? null : Path.of(s.record().workspace());
        try {
            dev.kosa8.checkpoint.Suspension.Record what = saved.read();
            Vm vm = restoreMachine(s, spec, dev.kosa8.vm.SavedMachine.file(saved.state()), folder, what.server(),
                    started, () -> { });
            s.vm(vm);
            s.stopping(false);
            saved.discard();
            log.accept("sandbox " + s.id() + " resumed where it was stopped (" + what.suspended() + ")");
            return vm;
        } catch (IOException | RuntimeException e) {
            log.accept("sandbox " + s.id() + ": cannot resume where it was stopped (" + firstLine(String.valueOf(
                    e.getMessage())) + "); booting afresh from its disk");
            dropHalfStarted(s);
            try {
                saved.discard();
            } catch (IOException ignored) {
                // booting afresh does not need it gone
            }
            return null;
        }
    }

    /**
     * Stops what a restore that failed half-way started (its QEMU, the
     * workspace server it had connected) so that the cold boot that follows
     * starts clean; the broker stays, the booted machine needs it.
     */
    private static void dropHalfStarted(Sandbox s) {
        Vm half = s.vm();
        if (half != null) {
            s.vm(null);
            half.kill();
        }
        closeWorkspace(s);
    }

    private dev.kosa8.checkpoint.Suspension suspension(Sandbox s) {
        return new dev.kosa8.checkpoint.Suspension(store.directory(s.id()));
    }

    /**
     * Connects a new 9p server for the sandbox's folder to the workspace's
     * port and has the agent mount it. A sandbox whose folder cannot be
     * mounted is not started: running the agent's commands somewhere else
     * than the folder the user named would be worse than failing.
     */
    private void serveWorkspace(Sandbox s, Vm vm, Path folder) {
        WorkspaceServer server = null;
        try {
            server = WorkspaceServer.start(folder, vm.spec().workspaceSocket(), vm.spec().workspaceWindow(),
                    vm.spec().workspaceWrites(),
                    Duration.ofSeconds(10),
                    m -> log.accept("sandbox " + s.id() + " workspace: " + m));
            s.workspace(server);
            String guestPath = folder.toString();
            GuestCommand.mountWorkspace(vm.agent(), guestPath, WorkspaceServer.MSIZE, false,
                    s.record().workspaceTransport(), Duration.ofSeconds(60));
        } catch (RuntimeException e) {
            if (server != null) {
                server.close();
            }
            s.workspace(null);
            vm.kill();
            s.vm(null);
            throw new KosaException(KosaException.Kind.VM, "cannot share " + folder + " with sandbox " + s.id()
                    + ": " + e.getMessage(), "see `kosa8 logs " + s.id() + "` and the daemon's log", e);
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
    private void reconnectWorkspace(Sandbox s, Vm vm, Path folder) {
        s.workspaceLost(true);
        try {
            s.workspace(WorkspaceServer.start(folder, vm.spec().workspaceSocket(), vm.spec().workspaceWindow(),
                    vm.spec().workspaceWrites(),
                    Duration.ofSeconds(5),
                    m -> log.accept("sandbox " + s.id() + " workspace: " + m)));
            GuestCommand.mountWorkspace(vm.agent(), folder.toString(), WorkspaceServer.MSIZE, true,
                    s.record().workspaceTransport(), Duration.ofSeconds(30));
            s.workspaceLost(false);
            log.accept("sandbox " + s.id() + ": workspace mounted afresh; what waited on the old mount got EIO");
        } catch (RuntimeException e) { // KosaException or AgentException: the old mount stays, as said above
            log.accept("sandbox " + s.id() + ": cannot mount its workspace afresh: " + e.getMessage()
                    + "; it answers errors until the sandbox is stopped and started");
        }
    }

    /** A boot that failed after QEMU started: nothing of it may keep running once the record says failed. */
    private static void abandonBoot(Sandbox s) {
        dropHalfStarted(s);
        closeServers(s);
    }

    private Broker startBroker(SandboxRecord r) {
        // every sandbox's folder, running or not: any guest may write its own, and test settings read from one
        // would let it open a network for itself
        Map<String, Path> workspaces = new java.util.HashMap<>();
        for (Sandbox other : sandboxes.values()) {
            String w = other.record().workspace();
            if (w != null && !w.isEmpty()) {
                workspaces.put(other.id(), Path.of(w));
            }
        }
        if (r.workspace() != null && !r.workspace().isEmpty()) {
            workspaces.put(r.id(), Path.of(r.workspace()));
        }
        Broker b = egress.start(r.id(), runtimeDir(r.id()), store.directory(r.id()), r.network().policy(), workspaces);
        b.secrets(secrets.bindings(r));
        return b;
    }

    /** Closes what serves the running machine from the host: its workspace server and its broker. */
    private static void closeServers(Sandbox s) {
        Standbys.drop(s);
        Broker b = s.broker();
        if (b != null) {
            s.broker(null);
            b.close();
        }
        closeWorkspace(s);
    }

    private static void closeWorkspace(Sandbox s) {
        WorkspaceServer w = s.workspace();
        if (w != null) {
            s.workspace(null);
            w.close();
        }
    }

    private static String firstLine(String s) {
        int nl = s.indexOf('\n');
        return nl < 0 ? s : s.substring(0, nl);
    }

    /** Marks the sandbox failed when its QEMU dies without being asked to. */
    private void watch(Sandbox s, Vm vm) {
        vm.process().onExit().thenRun(() -> {
            s.lock().lock();
            try {
                if (s.vm() != vm) {
                    return;
                }
                vm.detach();
                s.vm(null);
                closeServers(s);
                if (!s.stopping() && s.record().state() == SandboxState.RUNNING) {
                    String why = "QEMU exited unexpectedly (" + vm.process().exitDescription() + ")";
                    log.accept("sandbox " + s.id() + ": " + why);
                    s.record(s.record().failed(why));
                    store.save(s.record());
                    cleanRuntime(s.id());
                }
            } finally {
                s.lock().unlock();
            }
        });
    }

    VmSpec vmSpec(SandboxRecord r, BootImage image) {
        return vmSpec(r, image, runtimeDir(r.id()));
    }

    /**
     * The spec of a machine for {@code r} whose QEMU keeps its sockets and
     * read window in {@code machineDir}: the runtime directory, or its
     * {@value #ALT} subdirectory for a QEMU started while another runs (a
     * standby, {@link Standbys}); the broker's sockets stay in the runtime
     * directory, shared.
     */
    VmSpec vmSpec(SandboxRecord r, BootImage image, Path machineDir) {
        Path dir = store.directory(r.id());
        Path run = runtimeDir(r.id());
        BootImage img = image != null ? image : new BootImage("", Path.of("/"), Path.of("/"), Path.of("/"), "");
        Accelerator accel = r.accelerator().equals("auto") ? Accelerator.TCG : Accelerator.parse(r.accelerator());
        boolean net = r.network().mode() != NetMode.NONE;
        return new VmSpec(r.id(), accel, r.cpus(), r.memoryMiB(), img.kernel(), img.initramfs(), dir.resolve("root.qcow2"),
                img.kernelArgs() + TscFrequency.kernelArg(accel)
                        + (net ? " kosa8.net=1 " + EgressService.kernelArgument(EgressService.certificateAuthority(dir,
                                r.id())) : ""), dir.resolve("console.log"),
                machineDir.resolve("qmp.sock"), machineDir.resolve("agent.sock"),
                r.workspace().isEmpty() ? null : machineDir.resolve("ws9p.sock"),
                net ? EgressService.guestNetwork(run) : null);
    }

    /** The subdirectory of a sandbox's runtime directory for a QEMU started while another runs. */
    static final String ALT = "alt";

    /** Both directories a sandbox's QEMU may keep its sockets in. */
    private List<Path> machineDirs(String id) {
        return List.of(runtimeDir(id), runtimeDir(id).resolve(ALT));
    }

    /**
     * The directory the next QEMU of {@code s} uses: the one its running QEMU
     * does not (a standby starts while it runs; a rewind alternates); made,
     * private, if missing.
     */
    private Path nextMachineDir(Sandbox s) {
        Path run = runtimeDir(s.id());
        Vm vm = s.vm();
        return HostPaths.privateDirectory(vm != null && vm.spec().qmpSocket().getParent().equals(run)
                ? run.resolve(ALT) : run);
    }

    /** The spec of the machine that would replace {@code s}'s running one. */
    private VmSpec nextSpec(Sandbox s) {
        return vmSpec(s.record(), images.get(), nextMachineDir(s));
    }

    /**
     * The directory of a previous daemon's QEMU for {@code r}, as its command
     * line names it (after a rewind it may be {@value #ALT}); the runtime
     * directory when the command line cannot be read.
     */
    private Path machineDirOf(SandboxRecord r) {
        Path run = runtimeDir(r.id());
        return dev.kosa8.vm.QemuProcess.arguments(r.qemuPid())
                .flatMap(QemuCommandLine::qmpSocket)
                .map(Path::getParent)
                .filter(machineDirs(r.id())::contains)
                .orElse(run);
    }

    /** After a checkpoint or a rewind: a standby QEMU for the next rewind, in the background. */
    private void prepareStandby(Sandbox s) {
        standbys.prepare(s, this::nextSpec, spec -> QemuCommandLine.of(spec, qemuBinary));
    }

    private Path runtimeDir(String id) {
        return paths.runtime().resolve(id);
    }

    /**
     * Removes the images and templates nothing needs any more ({@link
     * Pruner}); with {@code dryRun}, only says what they are. Every sandbox
     * folder on disk counts, whatever its record says.
     */
    public List<Pruner.Item> prune(boolean dryRun) {
        List<Path> disks = new java.util.ArrayList<>();
        if (Files.isDirectory(paths.sandboxes())) {
            try (var dirs = Files.list(paths.sandboxes())) {
                dirs.filter(Files::isDirectory).forEach(d -> disks.add(d.resolve("root.qcow2")));
            } catch (IOException e) {
                throw new KosaException(KosaException.Kind.HOST, "cannot list " + paths.sandboxes() + ": "
                        + e.getMessage(), "check the permissions of kosa8's data folder", e);
            }
        }
        return Pruner.prune(new dev.kosa8.image.ImageStore(paths), templates, disks, dryRun);
    }

    public List<Sandbox> list() {
        List<Sandbox> all = new ArrayList<>(sandboxes.values());
        all.sort(Comparator.comparing((Sandbox s) -> s.record().created()));
        return all;
    }

    /** Finds a sandbox by its id or a unique prefix of it. */
    public Sandbox get(String idOrPrefix) {
        Sandbox exact = sandboxes.get(idOrPrefix);
        if (exact != null) {
            return exact;
        }
        List<Sandbox> matches = idOrPrefix.isEmpty() ? List.of()
                : sandboxes.values().stream().filter(s -> s.id().startsWith(idOrPrefix)).toList();
        if (matches.size() == 1) {
            return matches.getFirst();
        }
        if (matches.size() > 1) {
            throw new KosaException(KosaException.Kind.USAGE, "'" + idOrPrefix + "' matches " + matches.size()
                    + " sandboxes", "give more characters of the id (see `kosa8 ls`)");
        }
        throw new KosaException(KosaException.Kind.USAGE, "no sandbox '" + idOrPrefix + "'",
                "`kosa8 ls` lists your sandboxes");
    }

    /** The running machine of a sandbox, or a STATE error naming the sandbox's state. */
    public Vm running(Sandbox s) {
        Vm vm = s.vm();
        if (vm == null || s.record().state() != SandboxState.RUNNING) {
            SandboxRecord r = s.record();
            String why = r.state() == SandboxState.FAILED && !r.failure().isEmpty() ? " (" + r.failure() + ")" : "";
            throw new KosaException(KosaException.Kind.STATE, "sandbox " + s.id() + " is not running: it is "
                    + r.state().name().toLowerCase(java.util.Locale.ROOT) + why,
                    r.state() == SandboxState.STOPPED ? "start it with `kosa8 start " + s.id() + "`"
                            : "see `kosa8 logs " + s.id() + "`, then `kosa8 rm " + s.id() + "`");
        }
        if (!vm.agent().isOpen()) {
            throw new KosaException(KosaException.Kind.VM, "the agent in sandbox " + s.id() + " is gone: "
                    + vm.agent().closedFuture().getNow("its connection closed"),
                    "see `kosa8 logs " + s.id() + "`; `kosa8 stop " + s.id() + "` and `kosa8 start " + s.id()
                            + "` boot it again");
        }
        return vm;
    }

    /**
     * Stops a sandbox. A running persistent one is paused to disk: its
     * machine saved as it runs ({@link dev.kosa8.checkpoint.Suspension}), for
     * {@link #start} to resume exactly there. With {@code shutdown}, or when
     * the machine cannot be saved, the guest is shut down instead and the
     * next start boots afresh from the disk.
     */
    public void stop(Sandbox s, boolean shutdown) {
        s.lock().lock();
        try {
            SandboxState st = s.record().state();
            if (st == SandboxState.STOPPED) {
                return;
            }
            Vm vm = s.vm();
            s.stopping(true);
            if (vm != null) {
                boolean saved = false;
                if (s.workspaceLost() && !shutdown) {
                    log.accept("sandbox " + s.id() + ": its workspace lost its server in a daemon restart; shutting it"
                            + " down rather than saving it so, and the next start mounts the folder afresh");
                }
                if (!shutdown && !s.workspaceLost() && !s.record().ephemeral() && st == SandboxState.RUNNING
                        && vm.agent().isOpen()) {
                    try {
                        Map<String, Long> steps = checkpointer(s, vm).suspend(suspension(s));
                        log.accept("sandbox " + s.id() + " paused to disk " + steps);
                        saved = true;
                    } catch (KosaException e) {
                        log.accept("sandbox " + s.id() + ": " + e.getMessage() + "; shutting it down instead");
                    }
                }
                if (saved) {
                    vm.quit(Duration.ofSeconds(15));
                } else {
                    vm.shutdown(Duration.ofSeconds(15));
                }
                s.vm(null);
            }
            closeServers(s);
            s.record(s.record().stopped());
            store.save(s.record());
            cleanRuntime(s.id());
        } finally {
            s.lock().unlock();
        }
    }

    public void start(Sandbox s) {
        s.lock().lock();
        try {
            SandboxState st = s.record().state();
            if (st == SandboxState.RUNNING) {
                return;
            }
            if (st != SandboxState.STOPPED && st != SandboxState.FAILED) {
                throw new KosaException(KosaException.Kind.STATE, "sandbox " + s.id() + " is "
                        + st.name().toLowerCase(java.util.Locale.ROOT), "wait for it, or remove it with `kosa8 rm -f`");
            }
            boot(s, false);
        } finally {
            s.lock().unlock();
        }
    }

    public void remove(Sandbox s, boolean force) {
        s.lock().lock();
        try {
            SandboxState st = s.record().state();
            if ((st == SandboxState.RUNNING || st == SandboxState.STARTING) && !force) {
                throw new KosaException(KosaException.Kind.STATE, "sandbox " + s.id() + " is running",
                        "stop it first with `kosa8 stop " + s.id() + "`, or use `kosa8 rm -f " + s.id() + "`");
            }
            s.stopping(true);
            s.record(s.record().withState(SandboxState.REMOVING));
            store.save(s.record());
            Vm vm = s.vm();
            if (vm != null) {
                vm.kill();
                s.vm(null);
            }
            closeServers(s);
            removeFiles(s);
        } finally {
            s.lock().unlock();
        }
    }

    private void removeFiles(Sandbox s) {
        try {
            store.delete(s.id());
            cleanRuntime(s.id());
            sandboxes.remove(s.id());
        } catch (IOException e) {
            throw new KosaException(KosaException.Kind.HOST, "cannot delete the files of sandbox " + s.id() + ": "
                    + e.getMessage(), "delete " + store.directory(s.id()) + " by hand", e);
        }
    }

    private void cleanRuntime(String id) {
        Path run = runtimeDir(id);
        try {
            for (Path dir : machineDirs(id)) {
                for (String name : List.of("qmp.sock", "agent.sock", "ws9p.sock", "ws9p.window", "ws9p.writes",
                        "vmstate.sock", "vmstate.sock.err", "incoming.sock", Standbys.PID_FILE)) {
                    Files.deleteIfExists(dir.resolve(name));
                }
            }
            Files.deleteIfExists(run.resolve(ALT));
            for (dev.kosa8.egress.Listener l : dev.kosa8.egress.Listener.values()) {
                Files.deleteIfExists(run.resolve("net").resolve(l.socketName()));
            }
            Files.deleteIfExists(run.resolve("net"));
            Files.deleteIfExists(run);
        } catch (IOException e) {
            log.accept("cannot clean " + run + ": " + e.getMessage());
        }
    }

    /** Adds rules (presets expanded) to a sandbox's allow-list; a running sandbox's broker applies them at once. */
    public SandboxNetwork allow(Sandbox s, List<String> rules) {
        return changeNetwork(s, n -> n.allowing(egress.presets().expand(rules)));
    }

    /** Removes every rule for a host pattern; open connections to it are closed. */
    public SandboxNetwork deny(Sandbox s, String pattern) {
        HostPattern p;
        try {
            p = HostPattern.parse(pattern);
        } catch (IllegalArgumentException e) {
            throw new KosaException(KosaException.Kind.USAGE, "bad host '" + pattern + "': " + e.getMessage(),
                    "name a host or *.domain as it appears in `kosa8 net " + s.id() + "`");
        }
        SandboxNetwork before = s.record().network();
        SandboxNetwork after = changeNetwork(s, n -> n.denying(p));
        if (after.equals(before)) {
            throw new KosaException(KosaException.Kind.USAGE, pattern + " is not on the allow-list of sandbox " + s.id(),
                    "`kosa8 net " + s.id() + "` shows the list");
        }
        return after;
    }

    private SandboxNetwork changeNetwork(Sandbox s, java.util.function.UnaryOperator<SandboxNetwork> change) {
        s.lock().lock();
        try {
            SandboxRecord r = s.record();
            if (r.network().mode() == NetMode.NONE) {
                throw new KosaException(KosaException.Kind.STATE, "sandbox " + s.id() + " has no network",
                        "create a sandbox without --net none to give it one");
            }
            SandboxNetwork next = change.apply(r.network());
            s.record(r.withNetwork(next));
            store.save(s.record());
            Broker b = s.broker();
            if (b != null) {
                b.policy(next.policy());
            }
            return next;
        } finally {
            s.lock().unlock();
        }
    }

    /**
     * Gives a sandbox more secrets: each host joins its allow-list, and a
     * running sandbox's broker puts the key into requests at once; the guest
     * sees the placeholder in the environment of the commands it runs from now.
     */
    public List<dev.kosa8.secrets.GrantedSecret> grant(Sandbox s, List<String> names) {
        s.lock().lock();
        try {
            SandboxRecord r = s.record();
            if (r.network().mode() == NetMode.NONE) {
                throw new KosaException(KosaException.Kind.STATE, "sandbox " + s.id() + " has no network, so no key "
                        + "can be put into its requests", "create a sandbox without --net none to give it secrets");
            }
            List<dev.kosa8.secrets.GrantedSecret> next = secrets.grant(r.secrets(), names);
            r = r.withSecrets(next).withNetwork(r.network().allowing(secrets.allowRules(next)));
            apply(s, r);
            return next;
        } finally {
            s.lock().unlock();
        }
    }

    /**
     * Takes secrets away: the broker stops putting them into requests at
     * once, and their placeholders leave the environment of new commands.
     * Their hosts stay on the allow-list (`kosa8 deny` closes them).
     */
    public List<dev.kosa8.secrets.GrantedSecret> revoke(Sandbox s, List<String> names) {
        s.lock().lock();
        try {
            SandboxRecord r = s.record();
            List<dev.kosa8.secrets.GrantedSecret> next = SandboxSecrets.revoke(s.id(), r.secrets(), names);
            apply(s, r.withSecrets(next));
            return next;
        } finally {
            s.lock().unlock();
        }
    }

    /** After `kosa8 secret set` changed a value: every running broker takes the new one. */
    public void reloadSecrets() {
        for (Sandbox s : sandboxes.values()) {
            Broker b = s.broker();
            if (b != null && !s.record().secrets().isEmpty()) {
                b.secrets(secrets.bindings(s.record()));
            }
        }
    }

    private void apply(Sandbox s, SandboxRecord r) {
        s.record(r);
        store.save(r);
        Broker b = s.broker();
        if (b != null) {
            b.policy(r.network().policy());
            b.secrets(secrets.bindings(r));
        }
    }

    /** What every command run in the sandbox gets in its environment: each secret's placeholder. */
    public Map<String, String> secretEnvironment(Sandbox s) {
        Map<String, String> env = new java.util.LinkedHashMap<>();
        for (dev.kosa8.secrets.GrantedSecret g : s.record().secrets()) {
            env.put(g.env(), g.sentinel());
        }
        return env;
    }

    /**
     * Writes the guest's whole RAM to {@code file} as an ELF core (QMP
     * {@code dump-guest-memory}), for forensics, and for checking from the
     * host that no key is inside the machine. The guest keeps running.
     */
    public void dumpMemory(Sandbox s, Path file) {
        if (!file.isAbsolute() || Files.exists(file)) {
            throw new KosaException(KosaException.Kind.USAGE, "the dump goes to a new file named by an absolute path, "
                    + "not " + file, "name a file that does not exist yet");
        }
        Vm vm = running(s);
        try {
            vm.qmp().execute("dump-guest-memory", Map.of("paging", false, "protocol", "file:" + file),
                    Duration.ofMinutes(10));
        } catch (RuntimeException e) {
            throw new KosaException(KosaException.Kind.VM, "cannot dump the memory of sandbox " + s.id() + ": "
                    + e.getMessage(), "check that " + file.getParent() + " is writable and has room for "
                    + s.record().memoryMiB() + " MiB", e);
        }
    }

    /** Takes a checkpoint of a running sandbox (docs/checkpoints.md). */
    public dev.kosa8.checkpoint.Checkpoint checkpoint(Sandbox s, String message) {
        s.lock().lock();
        try {
            dev.kosa8.checkpoint.Checkpoint c = checkpointer(s, running(s)).checkpoint(message);
            prepareStandby(s);
            return c;
        } finally {
            s.lock().unlock();
        }
    }

    /** Rewinds a running sandbox in place to a checkpoint (an id or a unique prefix; empty: the latest). */
    public Map.Entry<dev.kosa8.checkpoint.Checkpoint, Map<String, Long>> rewind(Sandbox s, String checkpoint) {
        s.lock().lock();
        try {
            Vm vm = running(s);
            dev.kosa8.checkpoint.Checkpoint c = findCheckpoint(s, checkpoint);
            dev.kosa8.checkpoint.Checkpointer.Rewound done;
            try {
                done = checkpointer(s, vm).rewind(c,
                        (state, server, beforeServe) -> relaunch(s, state, server, beforeServe));
            } catch (KosaException e) {
                if (s.vm() == vm && !vm.isAlive()) {
                    // the old machine is gone and no new one runs: the sandbox is stopped, its disk at the checkpoint
                    s.vm(null);
                    closeServers(s);
                    s.record(s.record().failed(firstLine(e.getMessage())));
                    store.save(s.record());
                    cleanRuntime(s.id());
                }
                throw e;
            }
            log.accept("sandbox " + s.id() + " rewound to " + c.id() + " " + done.stepMillis());
            prepareStandby(s);
            return Map.entry(c, done.stepMillis());
        } finally {
            s.lock().unlock();
        }
    }

    /**
     * A rewind's second half: a fresh QEMU for the sandbox, loaded from a
     * saved state, its workspace served again with the checkpoint's fid table
     * once {@code beforeServe} has put its folder back. Replaces the sandbox's machine and records the
     * new QEMU at once, so a daemon dying now still finds it.
     */
    private Vm relaunch(Sandbox s, dev.kosa8.vm.SavedMachine state, dev.kosa8.workspace.WorkspaceSnapshot server,
                        Runnable beforeServe) {
        SandboxRecord r = s.record();
        BootImage image = images.get();
        VmSpec spec = vmSpec(r, image, nextMachineDir(s));
        Path folder = r.workspace().isEmpty() ? null : Path.of(r.workspace());
        s.workspace(null);
        dev.kosa8.vm.Standby standby = Standbys.take(s);
        Vm next;
        try {
            next = restoreMachine(s, standby, spec, state, folder, server, recordPid(s, r), beforeServe);
        } finally {
            Standbys.forget(standby);
        }
        s.vm(next);
        s.workspaceLost(false); // the folder is served with the checkpoint's fid table again
        SandboxRecord running = s.record().withQemu(next.process().pid(), next.process().startInstant(),
                r.accelerator(), r.imageId()).withState(SandboxState.RUNNING);
        s.record(running);
        store.save(running);
        watch(s, next);
        return next;
    }

    /**
     * Makes a new, independent, persistent sandbox from a checkpoint of
     * another: the machine as it was at that instant, with its own disk (the
     * checkpoint's disk state copied out of the parent's image), its own copy
     * of the workspace (in {@code workspace}, or beside the parent's folder),
     * its own broker, audit log and copy of the policy, and fresh
     * placeholders for its secrets. It keeps the parent's CA: the guest has
     * trusted that certificate since its boot (it is on its disk and in its
     * RAM), and the key stays on the host either way.
     *
     * <p>Processes in the fork that were started before the checkpoint still
     * hold the parent's placeholders in their environment; they are worth
     * nothing, since the broker sets the real key by host, not by
     * placeholder, and new commands get the fork's.
     */
    public Sandbox fork(Sandbox parent, String checkpoint, String workspace) {
        SandboxRecord p = parent.record();
        dev.kosa8.checkpoint.Checkpoint c;
        Path parentDir = store.directory(parent.id());
        parent.lock().lock();
        String id = SandboxIds.newId();
        Sandbox s;
        try {
            c = findCheckpoint(parent, checkpoint);
            dev.kosa8.vm.SavedMachine state;
            try {
                state = dev.kosa8.checkpoint.Checkpointer.savedMachine(checkpointDir(parent), c);
            } catch (IOException e) {
                throw new KosaException(KosaException.Kind.USAGE, e.getMessage(),
                        "take a new checkpoint and fork from that");
            }
            String folder = "";
            if (!p.workspace().isEmpty()) {
                Path target = workspace == null || workspace.isEmpty()
                        ? Path.of(p.workspace()).resolveSibling(Path.of(p.workspace()).getFileName() + "-" + id)
                        : Path.of(workspace).toAbsolutePath().normalize();
                folder = forkFolder(target);
            }
            List<dev.kosa8.secrets.GrantedSecret> granted = secrets.grant(List.of(),
                    p.secrets().stream().map(dev.kosa8.secrets.GrantedSecret::name).toList());
            SandboxRecord r = new SandboxRecord(id, Instant.now(), false, p.cpus(), p.memoryMiB(), p.accelerator(),
                    p.imageId(), SandboxState.STARTING, 0, null, "", folder, p.network(), granted,
                    p.workspaceTransport());
            s = new Sandbox(r);
            sandboxes.put(id, s);
            store.save(r);
            s.lock().lock();
            try {
                Path dir = store.directory(id);
                Files.createDirectories(dir);
                copyDisk(parentDir.resolve("root.qcow2"), c.id(), dir.resolve("root.qcow2"), dir.resolve("qemu.log"));
                if (!folder.isEmpty()) {
                    new dev.kosa8.checkpoint.FolderSnapshots(checkpointDir(parent).resolve("workspace"))
                            .copyTo(c.id(), Path.of(folder));
                }
                if (Files.isDirectory(parentDir.resolve("ca"))) {
                    copyTree(parentDir.resolve("ca"), dir.resolve("ca"));
                }
                HostPaths.privateDirectory(runtimeDir(id));
                if (r.network().mode() != NetMode.NONE) {
                    s.broker(startBroker(r));
                }
                BootImage image = images.get();
                VmSpec spec = vmSpec(r, image);
                Vm vm = restoreMachine(s, spec, state, folder.isEmpty() ? null : Path.of(folder), c.server(),
                        recordPid(s, r), () -> { });
                s.vm(vm);
                vm.loadRest();
                dev.kosa8.checkpoint.Checkpointer.startFrom(checkpointDir(s), checkpointDir(parent), c.id(), false, log);
                SandboxRecord running = s.record().withQemu(vm.process().pid(), vm.process().startInstant(),
                        r.accelerator(), r.imageId()).withState(SandboxState.RUNNING);
                s.record(running);
                store.save(running);
                watch(s, vm);
                log.accept("sandbox " + id + " forked from " + parent.id() + " at " + c.id());
                return s;
            } catch (IOException | RuntimeException e) {
                abandonBoot(s);
                s.record(s.record().failed(firstLine(String.valueOf(e.getMessage()))));
                store.save(s.record());
                if (e instanceof KosaException k) {
                    throw k;
                }
                throw new KosaException(KosaException.Kind.VM, "cannot fork " + parent.id() + " at " + c.id() + ": "
                        + e.getMessage(), "the parent and its checkpoint are untouched; remove the failed fork with "
                        + "`kosa8 rm " + id + "`", e);
            } finally {
                s.lock().unlock();
            }
        } finally {
            parent.lock().unlock();
        }
    }

    /** The fork's own workspace folder: made if missing, else it must be an empty directory. */
    private static String forkFolder(Path target) {
        try {
            if (Files.exists(target, java.nio.file.LinkOption.NOFOLLOW_LINKS)) {
                boolean empty;
                try (var entries = Files.list(target)) {
                    empty = entries.findAny().isEmpty();
                }
                if (!Files.isDirectory(target, java.nio.file.LinkOption.NOFOLLOW_LINKS) || !empty) {
                    throw new KosaException(KosaException.Kind.USAGE, "the fork's workspace " + target
                            + " exists and is not an empty folder", "name a new folder with --workspace DIR");
                }
            } else {
                Files.createDirectories(target);
            }
            return target.toRealPath().toString();
        } catch (IOException e) {
            throw new KosaException(KosaException.Kind.USAGE, "cannot make the fork's workspace " + target + ": "
                    + e.getMessage(), "name another folder with --workspace DIR", e);
        }
    }

    /**
     * The fork's root disk: the parent's disk as checkpoint {@code snapshot}
     * holds it, as an overlay on the same image. {@code -U}: the parent's
     * QEMU holds its image open, and a snapshot's clusters do not change
     * while it exists (the parent's lock keeps it from being removed).
     */
    private static void copyDisk(Path parentDisk, String snapshot, Path disk, Path log) throws IOException {
        String info = HostCommand.of("qemu-img", "info", "-U", "--output=json", parentDisk.toString())
                .run(KosaException.Kind.VM, "reading the parent's disk");
        com.fasterxml.jackson.databind.JsonNode j = new com.fasterxml.jackson.databind.ObjectMapper().readTree(info);
        String backing = j.path("full-backing-filename").asText(j.path("backing-filename").asText(""));
        List<String> argv = new ArrayList<>(List.of("qemu-img", "convert", "-U", "-f", "qcow2", "-O", "qcow2",
                "-l", "snapshot.name=" + snapshot));
        if (!backing.isEmpty()) {
            argv.addAll(List.of("-B", backing, "-F", "qcow2"));
        }
        argv.addAll(List.of(parentDisk.toString(), disk.toString()));
        HostCommand.of(argv).logTo(log).timeout(Duration.ofMinutes(30))
                .run(KosaException.Kind.VM, "copying the checkpoint's disk for the fork");
    }

    private static void copyTree(Path from, Path to) throws IOException {
        try (var all = Files.walk(from)) {
            for (Path f : all.toList()) {
                Path t = to.resolve(from.relativize(f).toString());
                if (Files.isDirectory(f)) {
                    Files.createDirectories(t);
                } else {
                    Files.copy(f, t, java.nio.file.StandardCopyOption.COPY_ATTRIBUTES);
                }
            }
        }
    }

    /**
     * A fresh QEMU for the sandbox, loaded from a saved state (a checkpoint,
     * a pause to disk): its pid goes to {@code started} at once; the folder,
     * when there is one, is served with the saved fid table.
     *
     * <p>The workspace server connects before the guest runs but reads none
     * of its requests until {@code beforeServe} (a rewind putting the folder
     * back) is done and the fid table is in: those run beside the guest's
     * first steps, which under TCG take longer than the folder, instead of
     * ahead of them. No guest process can see the folder meanwhile (every
     * access is a request the server has not read yet). Returns once the
     * guest has thawed and the folder is served; if the folder cannot be
     * put back, the new machine is killed and the failure thrown.
     */
    private Vm restoreMachine(Sandbox s, VmSpec spec, dev.kosa8.vm.SavedMachine state, Path folder,
                              dev.kosa8.workspace.WorkspaceSnapshot server,
                              java.util.function.Consumer<dev.kosa8.vm.QemuProcess> started, Runnable beforeServe) {
        return restoreMachine(s, null, spec, state, folder, server, started, beforeServe);
    }

    /** As above, into {@code standby} when it fits ({@link Vm#restore(dev.kosa8.vm.Standby, VmSpec, List,
     * dev.kosa8.vm.SavedMachine, Duration, java.util.function.Consumer, java.util.function.Consumer,
     * java.util.function.Consumer)}). */
    private Vm restoreMachine(Sandbox s, dev.kosa8.vm.Standby standby, VmSpec spec, dev.kosa8.vm.SavedMachine state,
                              Path folder, dev.kosa8.workspace.WorkspaceSnapshot server,
                              java.util.function.Consumer<dev.kosa8.vm.QemuProcess> started, Runnable beforeServe) {
        Duration timeout = spec.accelerator() == Accelerator.TCG ? Duration.ofSeconds(180) : Duration.ofSeconds(30);
        java.util.concurrent.CompletableFuture<Void> serving = new java.util.concurrent.CompletableFuture<>();
        Vm vm = Vm.restore(standby, spec, QemuCommandLine.of(spec, qemuBinary), state, timeout, started, qmp -> {
            if (folder == null) {
                beforeServe.run();
                serving.complete(null);
                return;
            }
            WorkspaceServer w = WorkspaceServer.connect(folder, spec.workspaceSocket(), spec.workspaceWindow(),
                    spec.workspaceWrites(),
                    Duration.ofSeconds(10), m -> log.accept("sandbox " + s.id() + " workspace: " + m));
            s.workspace(w);
            Thread.ofPlatform().daemon().name("kosa8-serve-" + s.id()).start(() -> {
                try {
                    beforeServe.run();
                    if (server != null) {
                        w.restore(server);
                    }
                    w.serve();
                    serving.complete(null);
                } catch (RuntimeException | Error e) {
                    serving.completeExceptionally(e);
                }
            });
        }, m -> log.accept("sandbox " + s.id() + ": " + m));
        try {
            serving.get(); // no deadline, as before: a large folder takes as long as it takes to put back
            return vm;
        } catch (java.util.concurrent.ExecutionException e) {
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

    /** Records a QEMU in the sandbox's record as soon as it runs: a daemon dying next still finds it. */
    private java.util.function.Consumer<dev.kosa8.vm.QemuProcess> recordPid(Sandbox s, SandboxRecord r) {
        return q -> {
            SandboxRecord withPid = r.withQemu(q.pid(), q.startInstant(), r.accelerator(), r.imageId());
            s.record(withPid);
            store.save(withPid);
        };
    }

    /** The committed checkpoints, oldest first, each with the bytes on disk only it holds. */
    public List<Map.Entry<dev.kosa8.checkpoint.Checkpoint, Long>> checkpoints(Sandbox s) {
        Path dir = checkpointDir(s);
        try {
            List<Map.Entry<dev.kosa8.checkpoint.Checkpoint, Long>> all = new ArrayList<>();
            var folders = new dev.kosa8.checkpoint.FolderSnapshots(dir.resolve("workspace"));
            Map<String, Long> ram = new dev.kosa8.checkpoint.ram.RamStore(dir).bytesOnlyIn();
            for (var c : new dev.kosa8.checkpoint.CheckpointStore(dir).list()) {
                all.add(Map.entry(c, ram.getOrDefault(c.id(), c.vmStateBytes())
                        + (s.record().workspace().isEmpty() ? 0 : folders.bytesOnlyIn(c.id()))));
            }
            return all;
        } catch (IOException e) {
            throw new KosaException(KosaException.Kind.HOST, "cannot read the checkpoints of sandbox " + s.id() + ": "
                    + e.getMessage(), "check " + dir, e);
        }
    }

    public dev.kosa8.checkpoint.Checkpoint removeCheckpoint(Sandbox s, String checkpoint) {
        s.lock().lock();
        try {
            dev.kosa8.checkpoint.Checkpoint c = findCheckpoint(s, checkpoint);
            Vm vm = s.vm();
            if (vm != null && s.record().state() == SandboxState.RUNNING) {
                checkpointer(s, vm).remove(c);
            } else if (s.record().state() == SandboxState.STOPPED || s.record().state() == SandboxState.FAILED) {
                // no QEMU holds the disk: qemu-img removes the disk snapshot
                dev.kosa8.checkpoint.Checkpointer.removeOffline(checkpointDir(s),
                        store.directory(s.id()).resolve("root.qcow2"), c);
            } else {
                throw new KosaException(KosaException.Kind.STATE, "sandbox " + s.id() + " is "
                        + s.record().state().name().toLowerCase(java.util.Locale.ROOT), "wait for it, then try again");
            }
            return c;
        } catch (IOException e) {
            throw new KosaException(KosaException.Kind.HOST, "cannot remove checkpoint " + checkpoint + ": "
                    + e.getMessage(), "check " + checkpointDir(s), e);
        } finally {
            s.lock().unlock();
        }
    }

    private dev.kosa8.checkpoint.Checkpoint findCheckpoint(Sandbox s, String idOrPrefix) {
        // the records alone: what each checkpoint alone holds on disk (checkpoints(s)) reads every RAM image and
        // every workspace manifest, 0.3-0.5 s with a 10,000-file workspace, and a rewind paid it before it began
        List<dev.kosa8.checkpoint.Checkpoint> all;
        try {
            all = new dev.kosa8.checkpoint.CheckpointStore(checkpointDir(s)).list();
        } catch (IOException e) {
            throw new KosaException(KosaException.Kind.HOST, "cannot read the checkpoints of sandbox " + s.id() + ": "
                    + e.getMessage(), "check " + checkpointDir(s), e);
        }
        if (all.isEmpty()) {
            throw new KosaException(KosaException.Kind.USAGE, "sandbox " + s.id() + " has no checkpoints",
                    "take one with `kosa8 checkpoint " + s.id() + "`");
        }
        if (idOrPrefix == null || idOrPrefix.isEmpty()) {
            return all.getLast();
        }
        List<dev.kosa8.checkpoint.Checkpoint> matches = all.stream().filter(c -> c.id().startsWith(idOrPrefix)).toList();
        if (matches.size() != 1) {
            throw new KosaException(KosaException.Kind.USAGE, matches.isEmpty()
                    ? "sandbox " + s.id() + " has no checkpoint '" + idOrPrefix + "'"
                    : "'" + idOrPrefix + "' matches " + matches.size() + " checkpoints",
                    "`kosa8 checkpoints " + s.id() + "` lists them");
        }
        return matches.getFirst();
    }

    private dev.kosa8.checkpoint.Checkpointer checkpointer(Sandbox s, Vm vm) {
        String ws = s.record().workspace();
        return new dev.kosa8.checkpoint.Checkpointer(vm, ws.isEmpty() ? null : s.workspace(),
                ws.isEmpty() ? null : Path.of(ws), checkpointDir(s), m -> log.accept("sandbox " + s.id() + ": " + m));
    }

    private Path checkpointDir(Sandbox s) {
        return store.directory(s.id()).resolve("checkpoints");
    }

    public String logs(Sandbox s, int lines) {
        return Tail.of(store.directory(s.id()).resolve("console.log"), lines);
    }

    public Path directory(Sandbox s) {
        return store.directory(s.id());
    }

    /** The daemon is exiting: machines keep running and a new daemon re-attaches to them. */
    public void detachAll() {
        for (Sandbox s : sandboxes.values()) {
            Vm vm = s.vm();
            if (vm != null) {
                s.vm(null);
                vm.detach();
            }
            closeServers(s);
        }
    }
}
