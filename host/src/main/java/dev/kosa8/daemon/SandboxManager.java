package dev.kosa8.daemon;

import dev.kosa8.checkpoint.Checkpoint;
import dev.kosa8.checkpoint.Undo;
import dev.kosa8.egress.EgressService;
import dev.kosa8.egress.NetMode;
import dev.kosa8.egress.SandboxNetwork;
import dev.kosa8.host.HostPaths;
import dev.kosa8.host.KosaException;
import dev.kosa8.image.ImageStore;
import dev.kosa8.secrets.GrantedSecret;
import dev.kosa8.secrets.SecretStore;
import dev.kosa8.vm.AcceleratorProbe;
import dev.kosa8.vm.QemuCommandLine;
import dev.kosa8.vm.Tail;
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
    /** What a new sandbox should be. */
    public record CreateRequest(boolean ephemeral, int cpus, int memoryMiB, String accelerator, String workspace,
                                NetMode net, List<String> allow, List<String> secrets,
                                WorkspaceTransport workspaceTransport, List<String> hold, List<String> noHold) {
        public CreateRequest {
            hold = hold == null ? List.of() : List.copyOf(hold);
            noHold = noHold == null ? List.of() : List.copyOf(noHold);
            workspaceTransport = workspaceTransport == null ? WorkspaceTransport.AUTO : workspaceTransport;
            net = net == null ? NetMode.CLOSED : net;
            allow = allow == null ? List.of() : List.copyOf(allow);
            secrets = secrets == null ? List.of() : List.copyOf(secrets);
        }
    }

    private final HostPaths paths;
    private final SandboxLayout layout;
    private final SandboxStore store;
    private final SandboxRegistry registry = new SandboxRegistry();
    private final Templates templates;
    private final Standbys standbys;
    private final SandboxNetworks networks;
    private final MachineLauncher launcher;
    private final Forks forks;
    private final Recovery recovery;
    private final String qemuBinary;
    private final Consumer<String> log;
    private final SandboxHeld held;

    public SandboxManager(HostPaths paths, Supplier<BootImage> images, AcceleratorProbe probe, String qemuBinary,
                          EgressService egress, Supplier<SecretStore> secretStore, Consumer<String> log) {
        this.paths = paths;
        this.layout = new SandboxLayout(paths);
        this.store = new SandboxStore(layout.sandboxes());
        this.templates = new Templates(paths, qemuBinary, log);
        this.standbys = new Standbys(log);
        this.networks = new SandboxNetworks(egress, new SandboxSecrets(secretStore, log), store, registry, layout);
        MachineWatch watch = new MachineWatch(store, layout, log);
        this.launcher = new MachineLauncher(layout, store, images, probe, qemuBinary, templates, networks, watch, log);
        this.forks = new Forks(layout, store, registry, networks, launcher, log);
        this.recovery = new Recovery(layout, store, registry, launcher, networks, watch, log);
        this.qemuBinary = qemuBinary;
        this.log = log;
        this.held = new SandboxHeld(layout, registry, log);
    }

    /** Held changes: review, accept, reject. */
    SandboxHeld held() {
        return held;
    }

    /** At daemon start: loads every record and re-attaches to machines that still run ({@link Recovery}). */
    public void recover() {
        recovery.recover();
    }

    /** The allow-lists and secrets of the sandboxes. */
    public SandboxNetworks networks() {
        return networks;
    }

    public Sandbox create(CreateRequest req) {
        String id = SandboxIds.newId();
        List<GrantedSecret> granted = networks.grantNew(req.secrets());
        if (!granted.isEmpty() && req.net() == NetMode.NONE) {
            throw new KosaException(KosaException.Kind.USAGE, "--secret needs a network: the key is put into requests"
                    + " on their way out", "drop --net none, or drop --secret");
        }
        SandboxRecord r = new SandboxRecord(id, Instant.now(), req.ephemeral(), req.cpus(), req.memoryMiB(),
                req.accelerator(), "", SandboxState.STARTING, 0, null, "",
                WorkspaceFolder.check(req.workspace(), Path.of(System.getProperty("user.home"))),
                networks.network(req.net(), req.allow(), granted), granted, req.workspaceTransport());
        launcher.specs().validate(r);
        if (!r.workspace().isEmpty()) {
            HeldLayers.choose(layout, id, req.hold(), req.noHold(), r.workspace());
        }
        Sandbox s = new Sandbox(r);
        registry.add(s);
        store.save(r);
        s.locked(() -> launcher.boot(s, true));
        return s;
    }

    public List<Sandbox> list() {
        return registry.list();
    }

    /** Finds a sandbox by its id or a unique prefix of it. */
    public Sandbox get(String idOrPrefix) {
        return registry.get(idOrPrefix);
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
                    vm.quit(Duration.ofSeconds(15));
                } else {
                    vm.shutdown(Duration.ofSeconds(15));
                }
                s.update(rt -> rt.withVm(null));
            }
            s.closeServers();
            save(s, s.record().stopped());
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
            int kept = held.keepOnRemove(s.id(), discardHeld);
            try {
                store.delete(s.id());
                layout.cleanRuntime(s.id(), log);
                registry.remove(s.id());
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
            vm.qmp().execute("dump-guest-memory", Map.of("paging", false, "protocol", "file:" + file),
                    Duration.ofMinutes(10));
        } catch (RuntimeException e) {
            throw new KosaException(KosaException.Kind.VM, "cannot dump the memory of sandbox " + s.id() + ": "
                    + e.getMessage(), "check that " + file.getParent() + " is writable and has room for "
                    + s.record().memoryMiB() + " MiB", e);
        }
    }

    /** Takes a checkpoint of a running sandbox (docs/checkpoints.md). */
    public Checkpoint checkpoint(Sandbox s, String message) {
        return s.locked(() -> {
            Checkpoint c = undo(s).checkpoint(machine(s, running(s)), message);
            prepareStandby(s);
            return c;
        });
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
            prepareStandby(s);
            return done;
        });
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

    private Undo undo(Sandbox s) {
        return layout.undo(s.id(), m -> log.accept("sandbox " + s.id() + ": " + m));
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
        return Pruner.prune(new ImageStore(paths), templates, layout.allRootDisks(), dryRun);
    }

    public String logs(Sandbox s, int lines) {
        return Tail.of(layout.consoleLog(s.id()), lines);
    }

    public Path directory(Sandbox s) {
        return layout.directory(s.id());
    }

    /** The daemon is exiting: machines keep running and a new daemon re-attaches to them. */
    public void detachAll() {
        for (Sandbox s : registry.all()) {
            s.detach();
        }
    }

    private void save(Sandbox s, SandboxRecord r) {
        s.record(r);
        store.save(r);
    }
}
