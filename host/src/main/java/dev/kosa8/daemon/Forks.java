package dev.kosa8.daemon;

import dev.kosa8.checkpoint.Undo;
import dev.kosa8.egress.NetMode;
import dev.kosa8.host.CrashPoints;
import dev.kosa8.host.HostPaths;
import dev.kosa8.host.KosaException;
import dev.kosa8.secrets.GrantedSecret;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Instant;
import java.util.List;
import java.util.function.Consumer;

/**
 * Makes a new, independent, persistent sandbox from a checkpoint of
 * another: the machine as it was at that instant, with its own disk (the
 * checkpoint's disk state copied out of the parent's image), its own copy
 * of the workspace (in the folder given, or beside the parent's folder),
 * its own broker, audit log and copy of the policy, and fresh placeholders
 * for its secrets. It keeps the parent's CA: the guest has trusted that
 * certificate since its boot (it is on its disk and in its RAM), and the
 * key stays on the host either way.
 *
 * <p>Processes in the fork that were started before the checkpoint still
 * hold the parent's placeholders in their environment; they are worth
 * nothing, since the broker sets the real key by host, not by placeholder,
 * and new commands get the fork's.
 */
final class Forks {
    private final SandboxLayout layout;
    private final SandboxStore store;
    private final SandboxRegistry registry;
    private final SandboxNetworks networks;
    private final MachineLauncher launcher;
    private final TurnCheckpoints turns;
    private final Consumer<String> log;
    /** Removes a sandbox as {@code kosa8 rm -f} does: for a fork that failed half-made. */
    private final Consumer<Sandbox> discard;
    /** Held while a fork's folder is chosen and until the fork is in the registry, where the next check sees it. */
    private final Object takingFolders = new Object();
    /** The bases of view forks' folders. */
    private final FolderBases bases;

    Forks(SandboxLayout layout, SandboxStore store, SandboxRegistry registry, SandboxNetworks networks,
          MachineLauncher launcher, TurnCheckpoints turns, FolderBases bases, Consumer<Sandbox> discard,
          Consumer<String> log) {
        this.bases = bases;
        this.discard = discard;
        this.turns = turns;
        this.layout = layout;
        this.store = store;
        this.registry = registry;
        this.networks = networks;
        this.launcher = launcher;
        this.log = log;
    }

    /**
     * Forks {@code parent} at checkpoint {@code checkpoint} (an id or a unique prefix); {@code workspace} may be
     * empty; {@code createdBy} marks who made it ({@code mcp:CLIENT}), empty for as its parent is; {@code mode}
     * says how its folder is made.
     */
    Sandbox fork(Sandbox parent, String checkpoint, String workspace, String createdBy, ForkFolderChoice.Mode mode) {
        return parent.locked(() -> {
            SandboxRecord p = parent.record();
            Undo parentUndo = parent.undo();
            Undo.ForkPoint at = parentUndo.forkPoint(checkpoint);
            String id = SandboxIds.newId();
            Sandbox s;
            ForkFolder forkFolder = null;
            synchronized (takingFolders) { // from the check to the registry: no other fork takes the same folder
                String folder = "";
                if (!p.workspace().isEmpty()) {
                    boolean named = workspace != null && !workspace.isEmpty();
                    Path own = parent.folderAccess().isView(p) ? null : Path.of(p.workspace());
                    Path target = named ? Path.of(workspace).toAbsolutePath().normalize() : own == null ? null
                            : own.resolveSibling(own.getFileName() + "-" + id);
                    if (ForkFolderChoice.view(mode, named, target != null,
                            () -> parentUndo.folderClonesInto(target.getParent()),
                            () -> dev.kosa8.workspace.FolderView.unavailable(bases.scratch()),
                            why -> log.accept("fork of " + parent.id() + ": " + why))) {
                        folder = layout.folderView(id).toString();
                    } else {
                        if (target == null) {
                            throw new KosaException(KosaException.Kind.USAGE, "sandbox " + parent.id() + "'s folder"
                                    + " is a view, with no folder on the host for a copy to go beside",
                                    "name the copy's folder with --workspace DIR, or fork with --folder view");
                        }
                        OwnFolders.refuseAsNew(target.toString(), layout.paths(), networks); // as create's
                        forkFolder = ForkFolder.prepare(target, registry.all());
                        folder = forkFolder.path().toString();
                    }
                }
                try {
                    s = register(parent, at, id, folder, forkFolder, createdBy);
                } catch (RuntimeException e) {
                    takeBack(id, forkFolder); // the folder it made, empty still: the same --workspace works again
                    throw e;
                }
            }
            store.save(s.record());
            CrashPoints.reached("fork", "recorded");
            ForkFolder made = forkFolder;
            return s.locked(() -> start(parent, parentUndo, at, s, made));
        });
    }

    /** The fork's record and directory, with its {@code forking} marker, and the fork in the registry. */
    private Sandbox register(Sandbox parent, Undo.ForkPoint at, String id, String folder, ForkFolder forkFolder,
                             String createdBy) {
        SandboxRecord p = parent.record();
        List<GrantedSecret> granted = networks.grantNew(p.secrets().stream().map(GrantedSecret::name).toList());
        SandboxRecord r = new SandboxRecord(id, Instant.now(), false, p.cpus(), p.memoryMiB(), p.accelerator(),
                p.imageId(), SandboxState.STARTING, 0, null, "", folder, p.network(), granted,
                p.workspaceTransport(), p.image(), p.budget())
                .withCreatedBy(createdBy == null || createdBy.isEmpty() ? p.createdBy() : createdBy);
        Sandbox s = new Sandbox(r, layout.undo(id, log), layout.folderView(id));
        try {
            Files.createDirectories(layout.directory(id));
            // the second line: what the folder was, for a daemon that dies before the fork is made (Recovery)
            Files.writeString(layout.forking(id), parent.id() + " " + at.checkpoint().id() + "\n"
                    + (forkFolder == null ? "" : forkFolder.marker() + "\n"));
            Files.writeString(layout.forkedFrom(id), parent.id() + " " + at.checkpoint().id() + "\n");
        } catch (IOException e) {
            throw new KosaException(KosaException.Kind.HOST, "cannot make the fork's directory "
                    + layout.directory(id) + ": " + e.getMessage(), "check that the disk has room", e);
        }
        registry.add(s);
        return s;
    }

    /** A fork that could not even be registered gives back the folder it took; said, never thrown. */
    private void takeBack(String id, ForkFolder folder) {
        if (folder == null) {
            return;
        }
        try {
            folder.takeBack();
        } catch (IOException e) {
            log.accept("fork " + id + ": cannot take back its folder " + folder.path() + ": " + e.getMessage());
        }
    }

    private Sandbox start(Sandbox parent, Undo parentUndo, Undo.ForkPoint at, Sandbox s, ForkFolder forkFolder) {
        String id = s.id();
        String folder = forkFolder == null ? "" : forkFolder.path().toString();
        try {
            Files.createDirectories(layout.directory(id));
            parentUndo.copyDisk(at.checkpoint(), layout.rootDisk(parent.id()), layout.rootDisk(id), layout.qemuLog(id));
            CrashPoints.reached("fork", "disk");
            if (s.folderAccess().isView(s.record())) {
                Path base = bases.claim(s.folderAccess(), parentUndo, parent.id(), at);
                log.accept("sandbox " + id + ": its folder is a copy-on-write view of " + base.getParent()
                        + "; what it changes goes to " + layout.folderView(id).resolve("upper"));
                CrashPoints.reached("fork", "folder");
                startFolder(parentUndo, at, s, s.folder());
            } else if (!folder.isEmpty()) {
                var copied = parentUndo.copyFolder(at.checkpoint(), Path.of(folder));
                log.accept("sandbox " + id + ": folder " + folder + " written: " + copied.filesWritten()
                        + " entries, " + copied.filesCloned() + " files cloned from the snapshot store, in "
                        + copied.took().toMillis() + " ms");
                CrashPoints.reached("fork", "folder");
                startFolder(parentUndo, at, s, Path.of(folder)); // its diff and adopt: against the instant
            }
            if (Files.isDirectory(layout.ca(parent.id()))) {
                copyTree(layout.ca(parent.id()), layout.ca(id));
            }
            dev.kosa8.processes.SandboxEnvironment.copy(layout.directory(parent.id()), layout.directory(id));
            HostPaths.privateDirectory(layout.runtime(id));
            if (s.record().network().mode() != NetMode.NONE) {
                var broker = networks.startBroker(s.record());
                s.update(rt -> rt.withBroker(broker));
            }
            launcher.restoreFork(s, at.machine(), s.folder(), at.checkpoint().server());
            turns.woke(s, s.vm(), at.checkpoint(), turns.log(parent.id()));
            CrashPoints.reached("fork", "restored", () -> s.vm() == null ? 0 : s.vm().process().pid());
            s.undo().startFrom(parentUndo, at.checkpoint());
            CrashPoints.reached("fork", "based", () -> s.vm() == null ? 0 : s.vm().process().pid());
            machineAnswers(s);
            Files.deleteIfExists(layout.forking(id)); // made: from here it is a sandbox like any other
            log.accept("sandbox " + id + " forked from " + parent.id() + " at " + at.checkpoint().id());
            return s;
        } catch (IOException | RuntimeException e) {
            // A fork is made whole or not at all, as when the daemon dies making one (Recovery): nobody has used
            // it, so nothing of it is kept to be removed by hand, and the same --workspace can be tried again.
            log.accept("sandbox " + id + ": the fork failed (" + MachineLauncher.firstLine(String.valueOf(
                    e.getMessage())) + "); removing it");
            String left = discard(s, forkFolder);
            String why = e instanceof KosaException k ? k.getMessage() : e.getMessage();
            throw new KosaException(e instanceof KosaException k ? k.kind() : KosaException.Kind.VM, "cannot fork "
                    + parent.id() + " at " + at.checkpoint().id() + ": " + why, "the parent and its checkpoint are "
                    + "untouched" + left, e);
        }
    }

    /**
     * A fork is handed out only with its machine answering: one whose QEMU died while it was being made (the
     * steps after the restore do not talk to QEMU, so they would not notice) fails, and is removed, rather than
     * being reported made and then found dead. A QMP round trip, since a killed QEMU can answer none.
     */
    private static void machineAnswers(Sandbox s) {
        var vm = s.vm();
        if (vm == null || !vm.isAlive()) {
            throw new IllegalStateException("the fork's QEMU exited while the fork was being made");
        }
        try {
            vm.qmp().execute("query-status", java.util.Map.of(), java.time.Duration.ofSeconds(30));
        } catch (RuntimeException e) {
            throw new IllegalStateException("the fork's QEMU stopped answering while the fork was being made: "
                    + e.getMessage(), e);
        }
    }

    /**
     * Removes a fork that failed half-made: its machine, record and directory ({@code discard}, as
     * {@code kosa8 rm -f}), then the folder it was writing, which held nothing before it (it had to be new or
     * empty) but the checkpoint's copy ({@link ForkFolder#takeBack}); only once the fork's machine is gone, so
     * no guest writes there meanwhile. Says what could not be removed. Under {@link #takingFolders}: from the
     * fork leaving the registry until its folder is taken back, no other fork may take that folder as empty.
     */
    private String discard(Sandbox s, ForkFolder folder) {
        synchronized (takingFolders) {
            return discardHoldingFolders(s, folder);
        }
    }

    private String discardHoldingFolders(Sandbox s, ForkFolder folder) {
        try {
            discard.accept(s);
        } catch (RuntimeException x) {
            log.accept("sandbox " + s.id() + ": cannot remove the failed fork: " + x.getMessage());
            return "; remove what is left of the fork with `kosa8 rm -f " + s.id() + "`"
                    + (folder == null ? "" : ", then its folder " + folder.path());
        }
        if (folder != null) {
            try {
                folder.takeBack();
            } catch (IOException x) {
                log.accept("sandbox " + s.id() + ": cannot empty the failed fork's folder " + folder.path() + ": " + x);
                return ", and the fork is removed, but its folder " + folder.path() + " could not be emptied ("
                        + x.getMessage() + "): delete it by hand";
            }
        }
        return ", and nothing of the fork is left";
    }

    /**
     * The fork's folder as it starts, for {@code kosa8 diff} and {@code kosa8 adopt}: the parent's checkpoint
     * snapshot, its content shared with the parent's store; failing that, the folder read afresh.
     */
    private void startFolder(Undo parentUndo, Undo.ForkPoint at, Sandbox s, Path folder) {
        try {
            s.undo().startFromParentFolder(parentUndo, at.checkpoint());
        } catch (IOException | RuntimeException e) {
            log.accept("sandbox " + s.id() + ": cannot share its parent's snapshot of the folder (" + e.getMessage()
                    + "); reading the folder instead");
            Baseline.capture(s.undo(), folder, s.id(), log);
        }
    }

    private static void copyTree(Path from, Path to) throws IOException {
        try (var all = Files.walk(from)) {
            for (Path f : all.toList()) {
                Path t = to.resolve(from.relativize(f).toString());
                if (Files.isDirectory(f)) {
                    Files.createDirectories(t);
                } else {
                    Files.copy(f, t, StandardCopyOption.COPY_ATTRIBUTES);
                }
            }
        }
    }
}
