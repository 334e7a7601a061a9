package dev.kosa8.daemon;

import dev.kosa8.checkpoint.TreeRemoval;
import dev.kosa8.checkpoint.Undo;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.function.Consumer;
import java.util.stream.Stream;

/**
 * The bases of forks' folder views: one copy of a checkpoint's folder, made
 * from the parent's snapshot store the first time a view fork starts from
 * that checkpoint, shared read-only by every view fork of it, and removed
 * with the last of them ({@link #dropUnused}). It lives apart from the parent
 * ({@code <data>/folder-bases/PARENT-CHECKPOINT/tree}), so removing the
 * parent or its checkpoint leaves the forks whole. Nothing writes a base
 * after it is made: each view writes its own layer.
 *
 * <p>Claiming a base for a new fork ({@link #claim}) and removing the bases
 * no fork names ({@link #dropUnused}) exclude each other, so a base is never
 * removed between a fork naming it and using it. This lock is taken last,
 * under a sandbox's, and takes none.
 */
final class FolderBases {
    private final Path root;
    private final Path sandboxes;
    private final Consumer<String> log;

    FolderBases(SandboxLayout layout, Consumer<String> log) {
        this.sandboxes = layout.sandboxes();
        this.root = sandboxes.resolveSibling("folder-bases");
        this.log = log;
    }

    /** Where views may probe whether they can be made. */
    Path scratch() {
        return root;
    }

    /** Where the base of {@code parentId}'s checkpoint {@code checkpointId} is, made or not. */
    Path treeOf(String parentId, String checkpointId) {
        return root.resolve(parentId + "-" + checkpointId).resolve("tree");
    }

    /**
     * Makes {@code fork}'s folder a view of the base of {@code parentId}'s checkpoint {@code at}: names the base
     * in the view, makes the base from the parent's snapshot store if it is not there whole (a base whose making
     * was cut short is made again), and gives the view's own layer the base's root mode and time, which the guest
     * sees as the folder's. The caller holds the parent's lock.
     *
     * @return the base's tree
     */
    synchronized Path claim(SandboxFolder fork, Undo parentUndo, String parentId, Undo.ForkPoint at)
            throws IOException {
        Path tree = treeOf(parentId, at.checkpoint().id());
        fork.makeView(tree);
        ensure(parentUndo, at, tree);
        fork.takeRootOf(tree);
        return tree;
    }

    private void ensure(Undo parentUndo, Undo.ForkPoint at, Path tree) throws IOException {
        Path dir = tree.getParent();
        if (Files.exists(dir.resolve("made"))) {
            return;
        }
        if (Files.exists(dir)) {
            TreeRemoval.empty(dir, true);
        }
        Files.createDirectories(tree);
        var copied = parentUndo.copyFolder(at.checkpoint(), tree);
        Files.writeString(dir.resolve("made"), copied.filesWritten() + " entries\n");
        log.accept("folder base " + dir.getFileName() + " made: " + copied.filesWritten() + " entries in "
                + copied.took().toMillis() + " ms");
    }

    /** Removes every base no sandbox's view names in its {@code folder-view/base} file; said, never thrown. */
    synchronized void dropUnused() {
        if (!Files.isDirectory(root)) {
            return;
        }
        Set<Path> used = new HashSet<>();
        try (Stream<Path> all = Files.list(sandboxes)) {
            for (Path s : all.toList()) {
                Path named = s.resolve("folder-view").resolve("base");
                if (Files.isRegularFile(named)) {
                    used.add(Path.of(Files.readString(named).strip()).getParent());
                }
            }
        } catch (IOException e) {
            log.accept("cannot tell which folder bases are in use (" + e.getMessage() + "); none removed");
            return;
        }
        List<Path> all;
        try (Stream<Path> bases = Files.list(root)) {
            all = bases.toList();
        } catch (IOException e) {
            log.accept("cannot list the folder bases: " + e.getMessage());
            return;
        }
        for (Path b : all) {
            if (used.contains(b) || b.getFileName().toString().startsWith("view-probe-")) {
                continue;
            }
            try { // each on its own: one that cannot be removed leaves the others removed
                TreeRemoval.empty(b, true);
                log.accept("folder base " + b.getFileName() + " removed: no fork uses it");
            } catch (IOException | RuntimeException e) {
                log.accept("cannot remove the unused folder base " + b + ": " + e.getMessage());
            }
        }
    }
}
