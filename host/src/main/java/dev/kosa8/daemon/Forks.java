package dev.kosa8.daemon;

import dev.kosa8.checkpoint.Undo;
import dev.kosa8.egress.NetMode;
import dev.kosa8.host.CrashPoints;
import dev.kosa8.host.HostPaths;
import dev.kosa8.host.KosaException;
import dev.kosa8.secrets.GrantedSecret;
import java.io.IOException;
import java.nio.file.FileVisitResult;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.SimpleFileVisitor;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.BasicFileAttributes;
import java.nio.file.attribute.PosixFilePermissions;
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

    Forks(SandboxLayout layout, SandboxStore store, SandboxRegistry registry, SandboxNetworks networks,
          MachineLauncher launcher, TurnCheckpoints turns, Consumer<Sandbox> discard, Consumer<String> log) {
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
     * empty; {@code createdBy} marks who made it ({@code mcp:CLIENT}), empty for as its parent is.
     */
    Sandbox fork(Sandbox parent, String checkpoint, String workspace, String createdBy) {
        return parent.locked(() -> {
            SandboxRecord p = parent.record();
            Undo parentUndo = parent.undo();
            Undo.ForkPoint at = parentUndo.forkPoint(checkpoint);
            String id = SandboxIds.newId();
            String folder = "";
            boolean made = false;
            if (!p.workspace().isEmpty()) {
                Path target = workspace == null || workspace.isEmpty()
                        ? Path.of(p.workspace()).resolveSibling(Path.of(p.workspace()).getFileName() + "-" + id)
                        : Path.of(workspace).toAbsolutePath().normalize();
                made = !Files.exists(target, LinkOption.NOFOLLOW_LINKS);
                folder = forkFolder(target);
            }
            List<GrantedSecret> granted = networks.grantNew(p.secrets().stream().map(GrantedSecret::name).toList());
            SandboxRecord r = new SandboxRecord(id, Instant.now(), false, p.cpus(), p.memoryMiB(), p.accelerator(),
                    p.imageId(), SandboxState.STARTING, 0, null, "", folder, p.network(), granted,
                    p.workspaceTransport(), p.image(), p.budget())
                    .withCreatedBy(createdBy == null || createdBy.isEmpty() ? p.createdBy() : createdBy);
            Sandbox s = new Sandbox(r, layout.undo(id, log));
            try {
                Files.createDirectories(layout.directory(id));
                Files.writeString(layout.forking(id), parent.id() + " " + at.checkpoint().id() + "\n");
                Files.writeString(layout.forkedFrom(id), parent.id() + " " + at.checkpoint().id() + "\n");
            } catch (IOException e) {
                throw new KosaException(KosaException.Kind.HOST, "cannot make the fork's directory "
                        + layout.directory(id) + ": " + e.getMessage(), "check that the disk has room", e);
            }
            registry.add(s);
            store.save(r);
            CrashPoints.reached("fork", "recorded");
            String forkFolder = folder;
            boolean folderMade = made;
            return s.locked(() -> start(parent, parentUndo, at, s, forkFolder, folderMade));
        });
    }

    private Sandbox start(Sandbox parent, Undo parentUndo, Undo.ForkPoint at, Sandbox s, String folder,
                          boolean folderMade) {
        String id = s.id();
        try {
            Files.createDirectories(layout.directory(id));
            parentUndo.copyDisk(at.checkpoint(), layout.rootDisk(parent.id()), layout.rootDisk(id), layout.qemuLog(id));
            CrashPoints.reached("fork", "disk");
            if (!folder.isEmpty()) {
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
            launcher.restoreFork(s, at.machine(), folder.isEmpty() ? null : Path.of(folder), at.checkpoint().server());
            turns.woke(s, s.vm(), at.checkpoint(), turns.log(parent.id()));
            CrashPoints.reached("fork", "restored", () -> s.vm() == null ? 0 : s.vm().process().pid());
            s.undo().startFrom(parentUndo, at.checkpoint());
            CrashPoints.reached("fork", "based", () -> s.vm() == null ? 0 : s.vm().process().pid());
            Files.deleteIfExists(layout.forking(id)); // made: from here it is a sandbox like any other
            log.accept("sandbox " + id + " forked from " + parent.id() + " at " + at.checkpoint().id());
            return s;
        } catch (IOException | RuntimeException e) {
            // A fork is made whole or not at all, as when the daemon dies making one (Recovery): nobody has used
            // it, so nothing of it is kept to be removed by hand, and the same --workspace can be tried again.
            log.accept("sandbox " + id + ": the fork failed (" + MachineLauncher.firstLine(String.valueOf(
                    e.getMessage())) + "); removing it");
            String left = discard(s, folder, folderMade);
            String why = e instanceof KosaException k ? k.getMessage() : e.getMessage();
            throw new KosaException(e instanceof KosaException k ? k.kind() : KosaException.Kind.VM, "cannot fork "
                    + parent.id() + " at " + at.checkpoint().id() + ": " + why, "the parent and its checkpoint are "
                    + "untouched" + left, e);
        }
    }

    /**
     * Removes a fork that failed half-made: its machine, record and directory ({@code discard}, as
     * {@code kosa8 rm -f}), and the folder it was writing, which held nothing before it (it had to be new or
     * empty) but the checkpoint's copy. Says what could not be removed.
     */
    private String discard(Sandbox s, String folder, boolean made) {
        String left = ", and nothing of the fork is left";
        try {
            discard.accept(s);
        } catch (RuntimeException x) {
            log.accept("sandbox " + s.id() + ": cannot remove the failed fork: " + x.getMessage());
            left = "; remove what is left of the fork with `kosa8 rm -f " + s.id() + "`";
        }
        if (!folder.isEmpty()) {
            try {
                emptyFolder(Path.of(folder), made);
            } catch (IOException x) {
                log.accept("sandbox " + s.id() + ": cannot empty the failed fork's folder " + folder + ": " + x);
                left += "; its folder " + folder + " could not be emptied (" + x.getMessage() + "): delete it by hand";
            }
        }
        return left;
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

    /** The fork's own workspace folder: made if missing, else it must be an empty directory. */
    private static String forkFolder(Path target) {
        try {
            if (Files.exists(target, LinkOption.NOFOLLOW_LINKS)) {
                boolean empty;
                try (var entries = Files.list(target)) {
                    empty = entries.findAny().isEmpty();
                }
                if (!Files.isDirectory(target, LinkOption.NOFOLLOW_LINKS) || !empty) {
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
     * Deletes what {@code folder} holds, and the folder itself when the fork made it; never following a symlink
     * (the guest may have made some), and making a directory the guest left read-only writable first.
     */
    private static final java.util.Set<java.nio.file.attribute.PosixFilePermission> OWNER_RWX =
            PosixFilePermissions.fromString("rwx------");

    static void emptyFolder(Path folder, boolean itself) throws IOException {
        if (!Files.isDirectory(folder, LinkOption.NOFOLLOW_LINKS)) {
            return;
        }
        Files.walkFileTree(folder, new SimpleFileVisitor<>() {
            @Override
            public FileVisitResult preVisitDirectory(Path dir, BasicFileAttributes attrs) throws IOException {
                var mode = Files.getPosixFilePermissions(dir, LinkOption.NOFOLLOW_LINKS);
                if (mode.addAll(OWNER_RWX)) { // the guest left it read-only: the owner may change that
                    Files.setPosixFilePermissions(dir, mode);
                }
                return FileVisitResult.CONTINUE;
            }

            @Override
            public FileVisitResult visitFile(Path file, BasicFileAttributes attrs) throws IOException {
                Files.delete(file);
                return FileVisitResult.CONTINUE;
            }

            @Override
            public FileVisitResult postVisitDirectory(Path dir, IOException failed) throws IOException {
                if (failed != null) {
                    throw failed;
                }
                if (itself || !dir.equals(folder)) {
                    Files.delete(dir);
                }
                return FileVisitResult.CONTINUE;
            }
        });
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
