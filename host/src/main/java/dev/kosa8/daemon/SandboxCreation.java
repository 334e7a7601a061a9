package dev.kosa8.daemon;

import dev.kosa8.egress.NetMode;
import dev.kosa8.host.HostPaths;
import dev.kosa8.host.KosaException;
import dev.kosa8.secrets.GrantedSecret;
import dev.kosa8.workspace.WorkspaceFolder;
import java.nio.file.Path;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Consumer;

/**
 * {@code kosa8 create} and {@code run}: a new sandbox from a {@link SandboxManager.CreateRequest}, apart from the
 * façade so that the order of its steps can be read in one place. The checks that make nothing come first (a
 * secret's network, the machine's size, the folder, the disk budget); the published ports bind last of the checks
 * and first of what is made, so that a port in use fails the create with nothing left behind; then the held
 * layers, the record, the sandbox's directory and its boot.
 */
final class SandboxCreation {
    private final HostPaths paths;
    private final Budget budget;
    private final SandboxLayout layout;
    private final SandboxStore store;
    private final SandboxRegistry registry;
    private final SandboxNetworks networks;
    private final MachineLauncher launcher;
    private final BootImages bootImages;
    private final PublishedPorts ports;
    private final Consumer<String> log;

    /** @param budget the host's budgets ({@link Settings#budget}), which a request's own change applies to */
    SandboxCreation(HostPaths paths, Budget budget, SandboxLayout layout, SandboxStore store,
                    SandboxRegistry registry, SandboxNetworks networks, MachineLauncher launcher,
                    BootImages bootImages, PublishedPorts ports, Consumer<String> log) {
        this.paths = paths;
        this.budget = budget;
        this.layout = layout;
        this.store = store;
        this.registry = registry;
        this.networks = networks;
        this.launcher = launcher;
        this.bootImages = bootImages;
        this.ports = ports;
        this.log = log;
    }

    /**
     * Makes a sandbox; with {@code pinned}, one that boots that image's root disk (a build sandbox, on a step's
     * disk) with no template, whatever its record's image says.
     */
    Sandbox create(SandboxManager.CreateRequest req, BootImage pinned) {
        String id = SandboxIds.newId();
        SandboxRecord unbound = admitted(id, req, pinned);
        // last of the checks, first of what is made: a host port in use fails the create with nothing left behind
        AtomicReference<Sandbox> made = new AtomicReference<>();
        SandboxRecord r = unbound.withPorts(ports.bind(id, made::get, req.ports()));
        Sandbox s;
        try {
            if (!r.workspace().isEmpty()) {
                HeldLayers.choose(layout, id, req.hold(), req.noHold(), r.workspace());
            }
            s = new Sandbox(r, layout.undo(id, log), layout.folderView(id));
        } catch (RuntimeException e) {
            ports.close(id);
            throw e;
        }
        made.set(s);
        if (pinned != null) {
            bootImages.pin(id, pinned);
            layout.makeBuildLayers(id); // a build sandbox: before its QEMU starts, so that its jail shows them
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

    /** The new sandbox's record, with no ports yet, once every check that makes nothing has passed. */
    private SandboxRecord admitted(String id, SandboxManager.CreateRequest req, BootImage pinned) {
        req.arch().requireRunnableHere();
        if (req.arch().foreign() && !BootImages.isDefault(req.image())) {
            throw new KosaException(KosaException.Kind.USAGE, "an " + req.arch().debianName() + " sandbox boots "
                    + "kosa8's own " + req.arch().debianName() + " image; images built or imported by name are this "
                    + "host's architecture's", "drop --image, or drop --arch");
        }
        if (req.arch().foreign() && !req.accelerator().equals("auto") && !req.accelerator().equals("tcg")) {
            throw new KosaException(KosaException.Kind.USAGE, "an " + req.arch().debianName() + " guest runs here "
                    + "only under TCG, software emulation, not " + req.accelerator(), "drop --accel");
        }
        SandboxImage image = new SandboxImage(req.image(), bootImages.config(req.image()), req.arch());
        List<GrantedSecret> granted = networks.grantNew(req.secrets());
        if (!granted.isEmpty() && req.net() == NetMode.NONE) {
            throw new KosaException(KosaException.Kind.USAGE, "--secret needs a network: the key is put into requests"
                    + " on their way out", "drop --net none, or drop --secret");
        }
        SandboxRecord unbound = new SandboxRecord(id, Instant.now(), req.ephemeral(), req.cpus(), req.memoryMiB(),
                req.accelerator(), "", SandboxState.STARTING, 0, null, "",
                WorkspaceFolder.check(req.workspace(), Path.of(System.getProperty("user.home"))),
                networks.network(req.net(), req.allow(), granted, req.trustHostCas()), granted, req.workspaceTransport(),
                image, req.budget().applyTo(budget)).withCreatedBy(req.createdBy());
        launcher.specs().validate(unbound);
        OwnFolders.refuseAsNew(unbound.workspace(), paths, networks);
        DiskBudget.admitSandbox(unbound.memoryMiB(), unbound.budget(),
                launcher.newDiskSize(pinned != null ? pinned : bootImages.of(unbound)));
        return unbound;
    }
}
