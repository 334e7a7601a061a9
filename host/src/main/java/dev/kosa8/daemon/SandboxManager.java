package dev.kosa8.daemon;

import dev.kosa8.checkpoint.Checkpoint;
import dev.kosa8.checkpoint.CheckpointLimits;
import dev.kosa8.checkpoint.FolderChange;
import dev.kosa8.checkpoint.Undo;
import dev.kosa8.egress.EgressService;
import dev.kosa8.egress.NetMode;
import dev.kosa8.egress.SandboxNetwork;
import dev.kosa8.host.CrashPoints;
import dev.kosa8.host.HostPaths;
import dev.kosa8.host.KosaException;
import dev.kosa8.image.ImageStore;
import dev.kosa8.image.NamedImage;
import dev.kosa8.secrets.GrantedSecret;
import dev.kosa8.secrets.SecretStore;
import dev.kosa8.vm.AcceleratorProbe;
import dev.kosa8.vm.Jail;
import dev.kosa8.vm.QemuCommandLine;
import dev.kosa8.vm.ConsoleLog;
import dev.kosa8.vm.Vm;
import dev.kosa8.vm.WorkspaceTransport;
import dev.kosa8.workspace.WorkspaceFolder;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.function.Consumer;
import java.util.function.Supplier;

/**
 * The user's sandboxes and their state transitions: create, start, stop,
 * remove, and the undo operations that replace a running machine
 * (checkpoint, rewind, fork). It composes the parts that do the work — the
 * {@link MachineLauncher} starts machines, {@link Undo} keeps checkpoints,
 * {@link SandboxNetworks} applies allow-lists and secrets, {@link
 * SandboxLayout} says where every file is — and refuses an operation the
 * sandbox's state does not allow, naming the state.
 */
public final class SandboxManager {
    /**
     * What a new sandbox should be.
     *
     * @param trustHostCas whether its guest trusts the host's locally added CAs; null: as the user's network
     *                     settings say
     * @param image        the image's name or id ({@code kosa8/debian} by default)
     */
    public record CreateRequest(boolean ephemeral, int cpus, int memoryMiB, String accelerator, String workspace,
                                NetMode net, List<String> allow, List<String> secrets,
                                WorkspaceTransport workspaceTransport, Boolean trustHostCas, String image,
                                List<String> hold, List<String> noHold, Budget.Change budget) {
        public CreateRequest {
            image = image == null || image.isEmpty() ? dev.kosa8.image.NamedImage.DEFAULT : image;
            budget = budget == null ? Budget.Change.NONE : budget;
            hold = hold == null ? List.of() : List.copyOf(hold);
            noHold = noHold == null ? List.of() : List.copyOf(noHold);
            workspaceTransport = workspaceTransport == null ? WorkspaceTransport.AUTO : workspaceTransport;
            net = net == null ? NetMode.CLOSED : net;
            allow = allow == null ? List.of() : List.copyOf(allow);
            secrets = secrets == null ? List.of() : List.copyOf(secrets);
        }
    }

    private final HostPaths paths;
    private final Settings settings;
    private final SandboxLayout layout;
    private final SandboxStore store;
    private final SandboxRegistry registry = new SandboxRegistry();
    private final Templates templates;
    private final Standbys standbys;
    private final SandboxNetworks networks;
    private final MachineLauncher launcher;
    private final Forks forks;
    private final BootImages bootImages;
    private final ImageBuilds builds;
    private final Recovery recovery;
    private final String qemuBinary;
    private final Consumer<String> log;
    private final SandboxHeld held;
    private final TurnCheckpoints turns;

    /** How long a request waits for its sandbox's re-attachment at daemon start (a QEMU reattach is 20 s at most). */
    private static final Duration REATTACH_WAIT = Duration.ofMinutes(2);

    /**
     * @param settings the host's settings ({@link Settings}: the jail, the console's limit, the budgets)
     * @param jail     the jail every QEMU runs in, as {@link dev.kosa8.vm.JailProbe} found it under the settings
     */
    public SandboxManager(HostPaths paths, Settings settings, Jail jail, Supplier<BootImage> images,
                          AcceleratorProbe probe, String qemuBinary, EgressService egress,
                          Supplier<SecretStore> secretStore, Consumer<String> log) {
        this.paths = paths;
        this.settings = settings;
        this.layout = new SandboxLayout(paths);
        this.store = new SandboxStore(layout.sandboxes());
        MachineSpecs specs = new MachineSpecs(layout, jail, settings.budget());
        this.templates = new Templates(paths, qemuBinary, specs::confine, log);
        this.standbys = new Standbys(log);
        this.networks = new SandboxNetworks(egress, new SandboxSecrets(secretStore, log), store, registry, layout,
                log);
        MachineWatch watch = new MachineWatch(store, layout, log);
        this.turns = new TurnCheckpoints(this, layout, TurnBounds.fromTestSetting(System.getenv("KOSA8_TEST_TURN_BOUNDS")),
                log);
        this.bootImages = new BootImages(images, new ImageStore(paths), new dev.kosa8.image.NamedImages(paths.images()));
        this.launcher = new MachineLauncher(layout, specs, store, bootImages, probe, qemuBinary, templates,
                networks, watch, turns, log);
        this.builds = new ImageBuilds(this, log);
        this.forks = new Forks(layout, store, registry, networks, launcher, turns, log);
        this.recovery = new Recovery(layout, store, registry, launcher, networks, watch, turns, log);
        this.qemuBinary = qemuBinary;
        this.log = log;
        this.held = new SandboxHeld(layout, registry, log);
    }

    /** Held changes: review, accept, reject. */
    SandboxHeld held() {
        return held;
    }

    /** The commands and file transfers one sandbox may have under way at once ({@link Settings#streams}). */
    int streamsPerSandbox() {
        return settings.streams();
    }

    /** At daemon start, before it listens: loads every record ({@link Recovery#load}). */
    public void loadRecords() {
        recovery.load();
    }

    /**
     * At daemon start, once it listens: re-attaches to the machines that still
     * run ({@link Recovery#reattach}); their requests wait until then.
     */
    public void reattachMachines() {
        recovery.reattach();
    }

    /** The allow-lists and secrets of the sandboxes. */
    public SandboxNetworks networks() {
        return networks;
    }

    public Sandbox create(CreateRequest req) {
        return create(req, null);
    }

    /** The images sandboxes boot, by name. */
    BootImages bootImages() {
        return bootImages;
    }

    /**
     * The images sandboxes can be made from: kosa8's own (the current system image) first, then those built or
     * imported, newest first. Each: name, id, size, base, created, config.
     */
    List<Map<String, Object>> images() {
        List<Map<String, Object>> out = new java.util.ArrayList<>();
        new ImageStore(paths).current().ifPresent(i -> out.add(imageView(NamedImage.DEFAULT, i.id(), i.sizeBytes(),
                "debian bookworm (mmdebstrap)", created(i), dev.kosa8.image.ImageConfig.NONE, i.rootfs().toString())));
        for (NamedImage i : new dev.kosa8.image.NamedImages(paths.images()).list()) {
            out.add(imageView(i.name(), i.id(), i.sizeBytes(), i.base(), i.created(), i.config(), i.disk()));
        }
        return out;
    }

    /** One image's view, by name or id. */
    Map<String, Object> image(String name) {
        if (BootImages.isDefault(name)) {
            return images().stream().filter(v -> v.get("name").equals(NamedImage.DEFAULT)).findFirst()
                    .orElseThrow(() -> new KosaException(KosaException.Kind.IMAGE, "kosa8's own image is not built",
                            "build it with `kosa8 image build`"));
        }
        NamedImage i = bootImages.named(name).orElseThrow();
        Map<String, Object> v = imageView(i.name(), i.id(), i.sizeBytes(), i.base(), i.created(), i.config(),
                i.disk());
        v.put("systemImage", i.systemImage());
        v.put("step", i.step());
        return v;
    }

    /**
     * Forgets an image's name; its layers stay until a prune finds nothing resting on them (sandboxes made from
     * it keep working). kosa8's own image cannot be removed this way.
     */
    String removeImage(String name) {
        if (BootImages.isDefault(name)) {
            throw new KosaException(KosaException.Kind.USAGE, NamedImage.DEFAULT + " is kosa8's own image",
                    "`kosa8 image prune` removes old builds of it");
        }
        NamedImage i = bootImages.named(name).orElseThrow();
        try {
            new dev.kosa8.image.NamedImages(paths.images()).remove(i.name());
        } catch (IOException e) {
            throw new KosaException(KosaException.Kind.HOST, "cannot remove image " + name + ": " + e.getMessage(),
                    "check the permissions of kosa8's data folder", e);
        }
        return i.name();
    }

    private static String created(dev.kosa8.image.Image i) {
        try {
            return Files.getLastModifiedTime(i.directory()).toInstant().toString();
        } catch (IOException e) {
            return "";
        }
    }

    private static Map<String, Object> imageView(String name, String id, long size, String base, String created,
                                                 dev.kosa8.image.ImageConfig config, String disk) {
        Map<String, Object> v = new java.util.LinkedHashMap<>();
        v.put("name", name);
        v.put("id", id);
        v.put("sizeBytes", size);
        v.put("base", base);
        v.put("created", created);
        v.put("config", config);
        v.put("disk", disk);
        return v;
    }

    /**
     * Imports an OCI or {@code docker save} archive as a named image ({@link dev.kosa8.image.oci.ImageImport}),
     * booted by the current system image's kernel and initramfs. One at a time with builds and prunes.
     *
     * @param archive an absolute path: a tar file or an OCI layout folder
     * @param tag     the name to list it under; empty: the archive's own
     */
    Map<String, Object> importImage(String archive, String tag) {
        if (archive.isEmpty() || !Path.of(archive).isAbsolute()) {
            throw new KosaException(KosaException.Kind.USAGE, "the archive must be an absolute path", "");
        }
        return importArchive(Path.of(archive), tag, null);
    }

    /**
     * Pulls an image from a registry ({@link dev.kosa8.image.oci.RegistryPull}) and imports it as {@link
     * #importImage} does; the archive it is pulled into is deleted whatever happens.
     *
     * @param tag the name to list it under; empty: its repository and tag
     */
    Map<String, Object> pullImage(String reference, String tag) {
        return importArchive(null, tag.isEmpty() ? dev.kosa8.image.oci.RegistryPull.defaultName(reference) : tag,
                reference);
    }

    private Map<String, Object> importArchive(Path given, String tag, String pull) {
        String system = new ImageStore(paths).currentId().orElseThrow(() -> new KosaException(
                KosaException.Kind.IMAGE, "kosa8's own image is not built, and it boots imported ones",
                "build it with `kosa8 image build`"));
        if (!builds.lock().tryLock()) {
            throw new KosaException(KosaException.Kind.STATE, "an image build or prune is running",
                    "import once it is done");
        }
        try {
            Path logs = Files.createDirectories(paths.images().resolve("logs"));
            Path logFile = logs.resolve("import-" + Instant.now().toString().replace(":", "") + ".log");
            Path archive = given;
            if (pull != null) {
                Path work = Files.createDirectories(paths.images().resolve("import"));
                archive = work.resolve(".pull-" + SandboxIds.newId() + ".tar");
                dev.kosa8.image.oci.RegistryPull.toArchive(pull, archive, paths.cache().resolve("registry"), null,
                        log);
            }
            dev.kosa8.image.oci.ImageImport.Result r;
            try {
                r = dev.kosa8.image.oci.ImageImport.run(archive, tag, paths.images(), system,
                        dev.kosa8.image.oci.ImportLimits.DEFAULT, logFile);
            } finally {
                if (pull != null) {
                    Files.deleteIfExists(archive);
                }
            }
            log.accept((pull != null ? "pulled " + pull : "imported " + archive) + " as " + r.image().name() + " (" + r.image().id() + "): "
                    + r.layers() + " layers, " + r.unpackedBytes() + " bytes unpacked in " + r.took().toMillis()
                    + " ms");
            Map<String, Object> v = image(r.image().name());
            v.put("layers", r.layers());
            v.put("unpackedBytes", r.unpackedBytes());
            v.put("millis", r.took().toMillis());
            return v;
        } catch (IOException e) {
            throw new KosaException(KosaException.Kind.IMAGE, "cannot import " + (pull != null ? pull : given)
                    + ": " + e.getMessage(),
                    "check that the file is readable and that kosa8's data folder has room", e);
        } finally {
            builds.lock().unlock();
        }
    }

    /** Image builds from Dockerfiles. */
    ImageBuilds builds() {
        return builds;
    }

    /**
     * Makes a sandbox; with {@code pinned}, one that boots that image's root disk (a build sandbox, on a step's
     * disk) with no template, whatever its record's image says.
     */
    Sandbox create(CreateRequest req, BootImage pinned) {
        String id = SandboxIds.newId();
        SandboxImage image = new SandboxImage(req.image(), bootImages.config(req.image()));
        List<GrantedSecret> granted = networks.grantNew(req.secrets());
        if (!granted.isEmpty() && req.net() == NetMode.NONE) {
            throw new KosaException(KosaException.Kind.USAGE, "--secret needs a network: the key is put into requests"
                    + " on their way out", "drop --net none, or drop --secret");
        }
        SandboxRecord r = new SandboxRecord(id, Instant.now(), req.ephemeral(), req.cpus(), req.memoryMiB(),
                req.accelerator(), "", SandboxState.STARTING, 0, null, "",
                WorkspaceFolder.check(req.workspace(), Path.of(System.getProperty("user.home"))),
                networks.network(req.net(), req.allow(), granted, req.trustHostCas()), granted, req.workspaceTransport(),
                image, req.budget().applyTo(settings.budget()));
        launcher.specs().validate(r);
        DiskBudget.admitSandbox(r.memoryMiB(), r.budget(),
                launcher.newDiskSize(pinned != null ? pinned : bootImages.of(r)));
        if (!r.workspace().isEmpty()) {
            HeldLayers.choose(layout, id, req.hold(), req.noHold(), r.workspace());
        }
        Sandbox s = new Sandbox(r, layout.undo(id, log));
        if (pinned != null) {
            bootImages.pin(id, pinned);
            // a build sandbox: its steps' layers are made here while QEMU runs, so QEMU's jail shows the folder
            try {
                Files.createDirectories(layout.directory(id).resolve(dev.kosa8.vm.Jail.BUILD_LAYERS));
            } catch (java.io.IOException e) {
                throw new KosaException(KosaException.Kind.HOST, "cannot make the build sandbox's folder for its"
                        + " layers: " + e.getMessage(), "check the space and permissions of " + layout.directory(id));
            }
        }
        registry.add(s);
        store.save(r);
        if (!r.workspace().isEmpty() && !r.ephemeral()) {
            // before the guest can write to it: what `kosa8 diff` compares with by default
            Baseline.capture(s.undo(), Path.of(r.workspace()), id, log);
        }
        s.locked(() -> launcher.boot(s, true));
        return s;
    }

    /**
     * How the sandbox's folder differs now from checkpoint {@code checkpoint}, or from the folder as the sandbox
     * started when that is empty (docs/workspace.md, "What changed").
     */
    public List<FolderChange> diff(Sandbox s, String checkpoint) {
        if (s.record().workspace().isEmpty()) {
            throw new KosaException(KosaException.Kind.USAGE, "sandbox " + s.id() + " shares no folder",
                    "kosa8 diff compares a sandbox's folder; this one was made with --workspace none");
        }
        return s.locked(() -> s.undo().diff(Path.of(s.record().workspace()), checkpoint));
    }

    public List<Sandbox> list() {
        return registry.list();
    }

    /** Finds a sandbox by its id or a unique prefix of it. */
    public Sandbox get(String idOrPrefix) {
        Sandbox s = registry.get(idOrPrefix);
        s.awaitAttached(REATTACH_WAIT);
        return s;
    }

    /** The running machine of a sandbox, or a STATE error naming the sandbox's state. */
    public Vm running(Sandbox s) {
        Vm vm = s.vm();
        if (vm == null || s.record().state() != SandboxState.RUNNING) {
            SandboxRecord r = s.record();
            String why = r.state() == SandboxState.FAILED && !r.failure().isEmpty() ? " (" + r.failure() + ")" : "";
            throw new KosaException(KosaException.Kind.STATE, "sandbox " + s.id() + " is not running: it is "
                    + state(r) + why, r.state() == SandboxState.STOPPED ? "start it with `kosa8 start " + s.id() + "`"
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

    private static String state(SandboxRecord r) {
        return r.state().name().toLowerCase(Locale.ROOT);
    }

    /**
     * Stops a sandbox. A running persistent one is paused to disk: its
     * machine saved as it runs ({@link Undo#suspend}), for {@link #start} to
     * resume exactly there. With {@code shutdown}, or when the machine cannot
     * be saved, the guest is shut down instead and the next start boots
     * afresh from the disk.
     */
    public void stop(Sandbox s, boolean shutdown) {
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
            save(s, s.record().stopped());
            CrashPoints.reached("stop", "recorded");
            layout.cleanRuntime(s.id(), log);
        });
    }

    /** Pauses the machine to disk; false, said in the log, when it cannot be saved. */
    private boolean suspend(Sandbox s, Vm vm) {
        try {
            Map<String, Long> steps = undo(s).suspend(machine(s, vm));
            log.accept("sandbox " + s.id() + " paused to disk " + steps);
            return true;
        } catch (KosaException e) {
            log.accept("sandbox " + s.id() + ": " + e.getMessage() + "; shutting it down instead");
            return false;
        }
    }

    public void start(Sandbox s) {
        s.locked(() -> {
            SandboxState st = s.record().state();
            if (st == SandboxState.RUNNING) {
                return;
            }
            if (st != SandboxState.STOPPED && st != SandboxState.FAILED) {
                throw new KosaException(KosaException.Kind.STATE, "sandbox " + s.id() + " is " + state(s.record()),
                        "wait for it, or remove it with `kosa8 rm -f`");
            }
            launcher.boot(s, false);
        });
    }

    public void remove(Sandbox s, boolean force) {
        remove(s, force, false);
    }

    /**
     * Removes a sandbox; its held changes are kept to be reviewed by its id ({@link SandboxHeld}), or
     * dropped with {@code discardHeld}.
     *
     * @return how many held changes were kept
     */
    public int remove(Sandbox s, boolean force, boolean discardHeld) {
        return s.locked(() -> {
            SandboxState st = s.record().state();
            if ((st == SandboxState.RUNNING || st == SandboxState.STARTING) && !force) {
                throw new KosaException(KosaException.Kind.STATE, "sandbox " + s.id() + " is running",
                        "stop it first with `kosa8 stop " + s.id() + "`, or use `kosa8 rm -f " + s.id() + "`");
            }
            s.update(rt -> rt.stopping(true));
            save(s, s.record().withState(SandboxState.REMOVING));
            s.closeRuntime();
            // a checkpoint still committing stops with its machine and takes its parts back before the files go
            if (!s.undo().cancel(Duration.ofSeconds(30))) {
                log.accept("sandbox " + s.id() + ": the commit of checkpoint " + s.undo().committing().orElse("?")
                        + " did not stop within 30 s; removing the sandbox's files anyway");
            }
            int kept = held.keepOnRemove(s.id(), discardHeld);
            try {
                store.delete(s.id());
                layout.cleanRuntime(s.id(), log);
                registry.remove(s.id());
                turns.forget(s.id());
                bootImages.unpin(s.id());
            } catch (IOException e) {
                throw new KosaException(KosaException.Kind.HOST, "cannot delete the files of sandbox " + s.id() + ": "
                        + e.getMessage(), "delete " + layout.directory(s.id()) + " by hand", e);
            }
            return kept;
        });
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
            MemoryDump.dump(vm, file, Duration.ofMinutes(10));
        } catch (IOException | RuntimeException e) {
            throw new KosaException(KosaException.Kind.VM, "cannot dump the memory of sandbox " + s.id() + ": "
                    + e.getMessage(), "check that " + file.getParent() + " is writable and has room for "
                    + s.record().memoryMiB() + " MiB", e);
        }
    }

    /** Takes a checkpoint of a running sandbox and returns it pending ({@link #checkpoint(Sandbox, String, boolean)}). */
    public Checkpoint checkpoint(Sandbox s, String message) {
        return checkpoint(s, message, false);
    }

    /**
     * Takes a checkpoint of a running sandbox (docs/checkpoints.md) within its disk budget and checkpoint
     * limits: returns it pending once its instant is fixed, or with {@code wait} once it is committed. The
     * commit needs no lock: the sandbox serves meanwhile. Its RAM is kept room for by the admission; what its
     * folder copy took is checked at the instant.
     */
    public Checkpoint checkpoint(Sandbox s, String message, boolean wait) {
        Checkpoint c = s.locked(() -> {
            Vm vm = running(s);
            Budget b = launcher.specs().budget(s.record());
            Undo undo = undo(s);
            DiskBudget.admitCheckpoint(s.id(), s.record().memoryMiB(), b, DiskUsage.of(layout, s.id(), undo));
            Checkpoint taken = undo.checkpoint(machine(s, vm), message, new CheckpointLimits(b.checkpointCount(),
                    b.checkpointBytes(), CheckpointLimits.AtLimit.REFUSE));
            DiskUsage after = DiskUsage.of(layout, s.id(), undo);
            if (!DiskBudget.fits(after, b, s.record().memoryMiB())) {
                undo.remove(taken.id(), machine(s, vm), null);
                throw new KosaException(KosaException.Kind.LIMIT, "checkpoint " + taken.id() + " took sandbox "
                        + s.id() + " past its disk budget of " + DiskBudget.gib(b.diskBytes()) + " (it kept "
                        + DiskBudget.gib(after.total()) + "), and was removed again",
                        "remove older checkpoints with `kosa8 checkpoint rm " + s.id() + " ID`, or make the workspace"
                                + " or its held changes (`kosa8 review " + s.id() + "`) smaller, then try again");
            }
            prepareStandby(s);
            return taken;
        });
        return wait ? undo(s).awaitCommit(c.id()) : c;
    }

    /** A checkpoint by its id or a unique prefix; with {@code wait}, once committed (a failed one is an error). */
    public Checkpoint findCheckpoint(Sandbox s, String idOrPrefix, boolean wait) {
        return wait ? undo(s).awaitCommit(idOrPrefix) : undo(s).find(idOrPrefix);
    }

    /** What {@code s} keeps on disk and what it may keep ({@code kosa8 inspect}, {@code kosa8 df}). */
    public Map<String, Object> diskUse(Sandbox s) {
        DiskUsage u = DiskUsage.of(layout, s.id(), undo(s));
        Budget b = launcher.specs().budget(s.record());
        Map<String, Object> m = new java.util.LinkedHashMap<>();
        m.put("disk", u.disk());
        m.put("diskVirtual", u.diskVirtual());
        m.put("checkpoints", u.checkpoints());
        m.put("checkpointCount", undo(s).count());
        m.put("held", u.held());
        m.put("logs", u.logs());
        m.put("other", u.other());
        m.put("total", u.total());
        m.put("budget", b);
        return m;
    }


    /** Rewinds a running sandbox in place to a checkpoint (an id or a unique prefix; empty: the latest). */
    public Undo.Rewound rewind(Sandbox s, String checkpoint) {
        return s.locked(() -> {
            Vm vm = running(s);
            Undo.Rewound done;
            try {
                done = undo(s).rewind(machine(s, vm), checkpoint,
                        (state, server, beforeServe) -> launcher.relaunch(s, state, server, beforeServe));
            } catch (KosaException e) {
                if (s.vm() == vm && !vm.isAlive()) {
                    // the old machine is gone and no new one runs: the sandbox is stopped, its disk at the checkpoint
                    s.update(rt -> rt.withVm(null));
                    s.closeServers();
                    save(s, s.record().failed(MachineLauncher.firstLine(e.getMessage())));
                    layout.cleanRuntime(s.id(), log);
                }
                throw e;
            }
            log.accept("sandbox " + s.id() + " rewound to " + done.checkpoint().id() + " " + done.stepMillis());
            turns.woke(s, s.vm(), done.checkpoint(), turns.log(s.id()));
            prepareStandby(s);
            return done;
        });
    }

    /**
     * Rewinds a running sandbox in place to just before turn {@code turn} (docs/agents.md): to the checkpoint the
     * guest asked for then. The tool call that turn was about does not run: its hook is told the sandbox was put back.
     */
    public Undo.Rewound rewindToTurn(Sandbox s, int turn) {
        return rewind(s, turns.checkpointOf(s, turn, checkpointBytes(s).keySet()));
    }

    /** Which of {@code s}'s checkpoints are turns, and which turn each is. */
    public Map<String, Integer> turnsOf(Sandbox s) {
        Map<String, Integer> out = new java.util.HashMap<>();
        turns.byCheckpoint(s, checkpointBytes(s).keySet()).forEach((id, t) -> out.put(id, t.turn()));
        return out;
    }

    /** Each checkpoint's bytes as its record gives them: machine state and folder files it stored. */
    Map<String, Long> checkpointBytes(Sandbox s) {
        Map<String, Long> out = new java.util.HashMap<>();
        undo(s).records().forEach(c -> out.put(c.id(), c.vmStateBytes() + c.workspaceBytesCopied()));
        return out;
    }

    /** A new persistent sandbox from a checkpoint of {@code parent} ({@link Forks}). */
    public Sandbox fork(Sandbox parent, String checkpoint, String workspace) {
        return forks.fork(parent, checkpoint, workspace);
    }

    /** The committed checkpoints, oldest first, each with the bytes on disk only it holds. */
    public List<Undo.Listed> checkpoints(Sandbox s) {
        return undo(s).list(!s.record().workspace().isEmpty());
    }

    public Checkpoint removeCheckpoint(Sandbox s, String checkpoint) {
        return s.locked(() -> {
            SandboxState st = s.record().state();
            Vm vm = s.vm();
            if (vm != null && st == SandboxState.RUNNING) {
                return undo(s).remove(checkpoint, machine(s, vm), null);
            }
            if (st == SandboxState.STOPPED || st == SandboxState.FAILED) {
                // no QEMU holds the disk: qemu-img removes the disk snapshot
                return undo(s).remove(checkpoint, null, layout.rootDisk(s.id()));
            }
            undo(s).find(checkpoint); // a checkpoint that is not there is said first, as before
            throw new KosaException(KosaException.Kind.STATE, "sandbox " + s.id() + " is " + state(s.record()),
                    "wait for it, then try again");
        });
    }

    private static Undo undo(Sandbox s) {
        return s.undo();
    }

    /** The running machine as undo sees it: with its folder's server when it shares one. */
    private static Undo.Machine machine(Sandbox s, Vm vm) {
        String ws = s.record().workspace();
        return new Undo.Machine(vm, ws.isEmpty() ? null : s.workspace(), ws.isEmpty() ? null : Path.of(ws));
    }

    /** After a checkpoint or a rewind: a standby QEMU for the next rewind, in the background. */
    private void prepareStandby(Sandbox s) {
        standbys.prepare(s, launcher::nextSpec, spec -> QemuCommandLine.of(spec, qemuBinary));
    }

    /**
     * Removes the images and templates nothing needs any more ({@link
     * Pruner}); with {@code dryRun}, only says what they are. Every sandbox
     * folder on disk counts, whatever its record says.
     */
    public List<Pruner.Item> prune(boolean dryRun) {
        if (!builds.lock().tryLock()) {
            throw new KosaException(KosaException.Kind.STATE, "an image build is running", "prune once it is done");
        }
        try {
            return Pruner.prune(new ImageStore(paths), templates, layout.allRootDisks(),
                    new dev.kosa8.image.NamedImages(paths.images()).list(),
                    new dev.kosa8.image.StepStore(paths.images()), builds.layers(), dryRun);
        } finally {
            builds.lock().unlock();
        }
    }

    /** {@code kosa8 df}: what kosa8 keeps on disk and what can be had back ({@link DiskReport}). */
    public Map<String, Object> df() {
        return DiskReport.of(this, layout, new ImageStore(paths), templates);
    }

    public String logs(Sandbox s, int lines) {
        return ConsoleLog.tail(layout.consoleLog(s.id()), lines);
    }

    public Path directory(Sandbox s) {
        return layout.directory(s.id());
    }

    /** A sandbox's root disk (its own overlay). */
    Path rootDisk(Sandbox s) {
        return layout.rootDisk(s.id());
    }

    HostPaths paths() {
        return paths;
    }

    /**
     * The daemon is exiting: machines keep running and a new daemon
     * re-attaches to them. Checkpoints still committing are waited for, up to
     * a minute in all; one that has not ended by then is marked failed by the
     * next daemon.
     */
    public void detachAll() {
        long deadline = System.nanoTime() + Duration.ofMinutes(1).toNanos();
        for (Sandbox s : registry.all()) {
            Duration left = Duration.ofNanos(Math.max(0, deadline - System.nanoTime()));
            if (!s.undo().awaitCommits(left)) {
                log.accept("sandbox " + s.id() + ": exiting before checkpoint " + s.undo().committing().orElse("?")
                        + " was committed; the next daemon marks it failed");
            }
        }
        for (Sandbox s : registry.all()) {
            s.detach();
        }
    }

    private void save(Sandbox s, SandboxRecord r) {
        s.record(r);
        store.save(r);
    }
}
