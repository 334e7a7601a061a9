package dev.kosa8.daemon;

import dev.kosa8.checkpoint.Undo;
import dev.kosa8.host.FileTrees;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashSet;
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
     * Makes {@code tree} ({@link #treeOf}) from the parent's snapshot store if it is not there whole (a base
     * whose making was cut short is made again). The caller holds the parent's lock, and has named the base in
     * the fork's view first, so that {@link #dropUnused} meanwhile keeps it.
     */
    void ensure(Undo parentUndo, Undo.ForkPoint at, Path tree) throws IOException {
        Path dir = tree.getParent();
        if (Files.exists(dir.resolve("made"))) {
            return;
        }
        if (Files.exists(dir)) {
            FileTrees.delete(dir);
        }
        Files.createDirectories(tree);
        var copied = parentUndo.copyFolder(at.checkpoint(), tree);
        Files.writeString(dir.resolve("made"), copied.filesWritten() + " entries\n");
        log.accept("folder base " + dir.getFileName() + " made: " + copied.filesWritten() + " entries in "
                + copied.took().toMillis() + " ms");
    }

    /** Removes every base no sandbox's view names in its {@code folder-view/base} file; said, never thrown. */
    void dropUnused() {
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
        try (Stream<Path> bases = Files.list(root)) {
            for (Path b : bases.toList()) {
                if (!used.contains(b) && !b.getFileName().toString().startsWith("view-probe-")) {
                    FileTrees.delete(b);
                    log.accept("folder base " + b.getFileName() + " removed: no fork uses it");
                }
            }
        } catch (IOException e) {
            log.accept("cannot remove an unused folder base: " + e.getMessage());
        }
    }
}
