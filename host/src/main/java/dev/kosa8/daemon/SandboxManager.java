package dev.kosa8.daemon;

import dev.kosa8.vm.GuestArch;
import dev.kosa8.checkpoint.FolderChange;
import dev.kosa8.checkpoint.Undo;
import dev.kosa8.egress.EgressService;
import dev.kosa8.egress.NetMode;
import dev.kosa8.host.HostPaths;
import dev.kosa8.host.KosaException;
import dev.kosa8.image.ImageStore;
import dev.kosa8.image.NamedImage;
import dev.kosa8.secrets.SecretStore;
import dev.kosa8.vm.AcceleratorProbe;
import dev.kosa8.vm.Jail;
import dev.kosa8.vm.ConsoleLog;
import dev.kosa8.vm.Vm;
import dev.kosa8.vm.WorkspaceTransport;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.function.Consumer;
import java.util.function.Supplier;

/**
 * The user's sandboxes and their state transitions: create, start, stop,
 * remove. It composes the parts that do the work, and hands the API the
 * ones it asks directly — {@link #undo} (checkpoint, rewind, fork, which
 * replace a running machine), {@link #networks} (allow-lists and secrets),
 * {@link #images} (list, import, pull, build) and {@link #disk} (disk use,
 * {@code kosa8 df}, prune) — while {@link MachineLauncher} starts machines,
 * each sandbox's {@link Undo} keeps its checkpoints and {@link SandboxLayout}
 * says where every file is. It refuses an operation the sandbox's state does
 * not allow, naming the state.
 */
public final class SandboxManager {
    /**
     * What a new sandbox should be.
     *
     * @param trustHostCas whether its guest trusts the host's locally added CAs; null: as the user's network
     *                     settings say
     * @param image        the image's name or id ({@code kosa8/debian} by default)
     * @param createdBy    who asks for it when not the user at a terminal ({@code mcp:CLIENT}); empty otherwise;
     *                     at most {@link #MAX_CREATED_BY} printable characters
     */
    public record CreateRequest(boolean ephemeral, int cpus, int memoryMiB, String accelerator, String workspace,
                                NetMode net, List<String> allow, List<String> secrets,
                                WorkspaceTransport workspaceTransport, Boolean trustHostCas, String image,
                                List<String> hold, List<String> noHold, Budget.Change budget,
                                List<dev.kosa8.ports.PortMapping> ports, String createdBy, GuestArch arch) {
        /** The longest {@code createdBy} kept: a label for `kosa8 ls`, not a log. */
        public static final int MAX_CREATED_BY = 64;

        public CreateRequest(boolean ephemeral, int cpus, int memoryMiB, String accelerator, String workspace,
                             NetMode net, List<String> allow, List<String> secrets,
                             WorkspaceTransport workspaceTransport, Boolean trustHostCas, String image,
                             List<String> hold, List<String> noHold, Budget.Change budget,
                             List<dev.kosa8.ports.PortMapping> ports) {
            this(ephemeral, cpus, memoryMiB, accelerator, workspace, net, allow, secrets, workspaceTransport,
                    trustHostCas, image, hold, noHold, budget, ports, "");
        }

        /** A sandbox of this host's architecture. */
        public CreateRequest(boolean ephemeral, int cpus, int memoryMiB, String accelerator, String workspace,
                             NetMode net, List<String> allow, List<String> secrets,
                             WorkspaceTransport workspaceTransport, Boolean trustHostCas, String image,
                             List<String> hold, List<String> noHold, Budget.Change budget,
                             List<dev.kosa8.ports.PortMapping> ports, String createdBy) {
            this(ephemeral, cpus, memoryMiB, accelerator, workspace, net, allow, secrets, workspaceTransport,
                    trustHostCas, image, hold, noHold, budget, ports, createdBy, null);
        }

        /** This request for a guest of {@code a} (null: this host's architecture). */
        public CreateRequest withArch(GuestArch a) {
            return new CreateRequest(ephemeral, cpus, memoryMiB, accelerator, workspace, net, allow, secrets,
                    workspaceTransport, trustHostCas, image, hold, noHold, budget, ports, createdBy, a);
        }

        /** {@code createdBy} as given (null: empty) when it is a short printable label; a 400 otherwise. */
        public static String checkCreatedBy(String createdBy) {
            String by = createdBy == null ? "" : createdBy;
            if (by.length() > MAX_CREATED_BY || !by.chars().allMatch(c -> c >= 0x20 && c < 0x7f)) {
                throw new KosaException(KosaException.Kind.USAGE, "createdBy must be at most " + MAX_CREATED_BY
                        + " printable ASCII characters", "name the client briefly, like mcp:claude-code");
            }
            return by;
        }

        public CreateRequest {
            createdBy = checkCreatedBy(createdBy);
            arch = arch == null ? GuestArch.host() : arch;
            ports = ports == null ? List.of() : List.copyOf(ports);
            image = image == null || image.isEmpty() ? NamedImage.DEFAULT : image;
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
    /** How this daemon's machines save RAM at a checkpoint ({@code GET /v1/version} says, for doctor). */
    private final dev.kosa8.vm.CheckpointMode checkpointMode;
    private final SandboxLayout layout;
    private final SandboxStore store;
    private final SandboxRegistry registry = new SandboxRegistry();
    private final SandboxNetworks networks;
    private final MachineLauncher launcher;
    private final BootImages bootImages;
    private final SandboxImages images;
    private final Recovery recovery;
    private final Consumer<String> log;
    private final SandboxHeld held;
    private final Adoptions adoptions;
    private final TurnCheckpoints turns;
    private final SandboxUndo undo;
    private final SandboxDisk disk;
    /** The bases of forks' folder views. */
    private final FolderBases bases;
    private final SandboxProcesses processes;
    private final PublishedPorts ports;
    private final SandboxFiles files = new SandboxFiles(new dev.kosa8.files.GuestFiles(
            dev.kosa8.files.FileLimits.DEFAULT));
    private final SandboxStops stops;
    private final SandboxCreation creation;

    /** How long a request waits for its sandbox's re-attachment at daemon start (a QEMU reattach is 20 s at most). */
    private static final Duration REATTACH_WAIT = Duration.ofMinutes(2);

    /** How this daemon's new machines save RAM at a checkpoint. */
    public dev.kosa8.vm.CheckpointMode checkpointMode() {
        return checkpointMode;
    }

    /**
     * @param settings the host's settings ({@link Settings}: the jail, the console's limit, the budgets)
     * @param jail     the jail every QEMU runs in, as {@link dev.kosa8.vm.JailProbe} found it under the settings
     */
    public SandboxManager(HostPaths paths, Settings settings, Jail jail, Supplier<BootImage> systemImages,
                          AcceleratorProbe probe, String qemuBinary, EgressService egress,
                          Supplier<SecretStore> secretStore, dev.kosa8.vm.CheckpointMode checkpointMode,
                          Consumer<String> log) {
        this.paths = paths;
        this.settings = settings;
        this.layout = new SandboxLayout(paths);
        this.store = new SandboxStore(layout.sandboxes());
        this.checkpointMode = checkpointMode;
        MachineSpecs specs = new MachineSpecs(layout, jail, settings.budget(), checkpointMode);
        Templates templates = new Templates(paths, qemuBinary, specs::confine, egress, log);
        this.networks = new SandboxNetworks(egress, new SandboxSecrets(secretStore, log), store, registry, layout,
                log);
        MachineWatch watch = new MachineWatch(store, layout, log);
        this.turns = new TurnCheckpoints(this, layout, TurnBounds.fromTestSetting(System.getenv("KOSA8_TEST_TURN_BOUNDS")),
                log);
        this.bootImages = new BootImages(systemImages, arch -> DaemonMain.bootImage(paths, arch), new ImageStore(paths),
                new dev.kosa8.image.NamedImages(paths.images()));
        this.launcher = new MachineLauncher(layout, specs, store, bootImages, probe, qemuBinary, templates,
                networks, watch, turns, log);
        ImageBuilds builds = new ImageBuilds(this, log);
        this.images = new SandboxImages(paths, bootImages, builds, log);
        this.disk = new SandboxDisk(paths, layout, registry, specs, templates, builds);
        this.bases = new FolderBases(layout, log);
        this.undo = new SandboxUndo(layout, store, launcher, new Standbys(log),
                new Forks(layout, store, registry, networks, launcher, turns, bases, s -> remove(s, true, true), log),
                turns,
                qemuBinary, log);
        this.recovery = new Recovery(layout, store, registry, launcher, networks, watch, turns, log);
        this.log = log;
        this.held = new SandboxHeld(layout, registry, log);
        this.adoptions = new Adoptions(layout, registry, log);
        this.stops = new SandboxStops(layout, store, log);
        this.ports = new PublishedPorts(store, dev.kosa8.ports.PortLimits.DEFAULT, log);
        this.creation = new SandboxCreation(paths, settings.budget(), layout, store, registry, networks, launcher,
                bootImages, ports, log);
        this.processes = new SandboxProcesses(new dev.kosa8.processes.Processes(settings.processes()), layout,
                networks);
    }

    /** The processes the daemon keeps for sandboxes, and each sandbox's own environment. */
    SandboxProcesses processes() {
        return processes;
    }

    /** Guest files: stat, list, mkdir, remove, rename, read, write, watch ({@link SandboxFiles}). */
    public SandboxFiles files() {
        return files;
    }

    /** Published ports ({@link PublishedPorts}). */
    PublishedPorts ports() {
        return ports;
    }

    /** Held changes: review, accept, reject. */
    SandboxHeld held() {
        return held;
    }

    /** {@code kosa8 adopt}: a fork's changes into another sandbox's folder. */
    Adoptions adoptions() {
        return adoptions;
    }

    /** The commands and file transfers one sandbox may have under way at once ({@link Settings#streams}). */
    int streamsPerSandbox() {
        return settings.streams();
    }

    /** At daemon start, before it listens: loads every record ({@link Recovery#load}). */
    public void loadRecords() {
        recovery.load();
        bases.dropUnused(); // a base whose last fork a daemon that died was removing, or was making

        for (Sandbox s : registry.all()) {
            ports.restore(s);
        }
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

    /** The images sandboxes boot, by name. */
    BootImages bootImages() {
        return bootImages;
    }

    /** The images sandboxes are made from: list, show, remove, import, pull, build ({@link SandboxImages}). */
    SandboxImages images() {
        return images;
    }

    /** Makes a sandbox: its checks first, then its ports, record, directory and boot ({@link SandboxCreation}). */
    public Sandbox create(CreateRequest req) {
        return create(req, null);
    }

    /** As {@link #create(CreateRequest)}; with {@code pinned}, a build sandbox booting that image's root disk. */
    Sandbox create(CreateRequest req, BootImage pinned) {
        return creation.create(req, pinned);
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
        return s.locked(() -> s.withFolder(f -> s.undo().diff(f, checkpoint)));
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

    /** Stops a sandbox: paused to disk, or shut down ({@link SandboxStops#stop}). */
    public void stop(Sandbox s, boolean shutdown) {
        stops.stop(s, shutdown);
    }

    public void start(Sandbox s) {
        s.locked(() -> {
            SandboxState st = s.record().state();
            if (st == SandboxState.RUNNING) {
                return;
            }
            if (st != SandboxState.STOPPED && st != SandboxState.FAILED) {
                throw new KosaException(KosaException.Kind.STATE, "sandbox " + s.id() + " is "
                        + s.record().state().label(), "wait for it, or remove it with `kosa8 rm -f`");
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
            StrayQemus.end(s.id(), layout.machineDirs(s.id()), 0, log);
            ports.close(s.id());
            // a checkpoint still committing stops with its machine and takes its parts back before the files go
            if (!s.undo().cancel(Duration.ofSeconds(30))) {
                log.accept("sandbox " + s.id() + ": the commit of checkpoint " + s.undo().committing().orElse("?")
                        + " did not stop within 30 s; removing the sandbox's files anyway");
            }
            // a view's held changes were for its own folder, which goes with it
            int kept = held.keepOnRemove(s.id(), discardHeld || s.folderAccess().isView(s.record()));
            try {
                store.delete(s.id());
                layout.cleanRuntime(s.id(), log);
                registry.remove(s.id());
                turns.forget(s.id());
                processes.forget(s);
                files.forget(s);
                networks.forgetLogins(s.id());
                bootImages.unpin(s.id());
                if (s.folderAccess().isView(s.record())) {
                    bases.dropUnused(); // its base, if it was the last view of it
                }
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
        Vm vm = s.running();
        try {
            MemoryDump.dump(vm, file, Duration.ofMinutes(10));
        } catch (IOException | RuntimeException e) {
            throw new KosaException(KosaException.Kind.VM, "cannot dump the memory of sandbox " + s.id() + ": "
                    + e.getMessage(), "check that " + file.getParent() + " is writable and has room for "
                    + s.record().memoryMiB() + " MiB", e);
        }
    }

    /** Checkpoints, rewinds and forks ({@link SandboxUndo}). */
    SandboxUndo undo() {
        return undo;
    }

    /** Disk use, {@code kosa8 df} and prune ({@link SandboxDisk}). */
    SandboxDisk disk() {
        return disk;
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
        ports.closeAll();
        for (Sandbox s : registry.all()) {
            s.detach();
        }
        processes.all().close();
        files.files().close();
    }

    private void save(Sandbox s, SandboxRecord r) {
        s.record(r);
        store.save(r);
    }
}
