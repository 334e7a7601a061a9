package dev.kosa8.checkpoint;

import dev.kosa8.checkpoint.ram.RamStore;
import dev.kosa8.vm.QmpClient;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Set;
import java.util.function.Consumer;

/**
 * The parts of checkpoints that were never committed: a daemon or QEMU that
 * died half-way left them (a disk snapshot, a machine state, a workspace
 * snapshot, RAM pages no record names). Swept before each checkpoint, while
 * the sandbox's lock keeps any other from being under way.
 */
final class Leftovers {
    private final QmpClient qmp;
    private final CheckpointStore store;
    private final FolderSnapshots folders;
    private final RamStore ram;
    private final Consumer<String> log;

    Leftovers(QmpClient qmp, CheckpointStore store, FolderSnapshots folders, RamStore ram, Consumer<String> log) {
        this.qmp = qmp;
        this.store = store;
        this.folders = folders;
        this.ram = ram;
        this.log = log;
    }

    /** Removes every leftover; a failure is logged, never thrown: the checkpoint that follows does not need it. */
    void sweep() {
        try {
            Set<String> committed = store.ids();
            for (String tag : DiskSnapshots.tags(qmp)) {
                if (CheckpointIds.isValid(tag) && !committed.contains(tag)) {
                    log.accept("removing the disk snapshot of an unfinished checkpoint " + tag);
                    DiskSnapshots.delete(qmp, tag);
                }
            }
            if (Files.isDirectory(store.directory())) {
                try (var files = Files.list(store.directory())) {
                    for (Path f : files.toList()) {
                        String name = f.getFileName().toString();
                        int dot = name.indexOf('.');
                        if (dot > 0 && name.substring(dot).startsWith(".vmstate")
                                && !committed.contains(name.substring(0, dot))) {
                            log.accept("removing the machine state of an unfinished checkpoint " + name);
                            Files.deleteIfExists(f);
                        }
                    }
                }
            }
            for (String id : folders.ids()) {
                if (!committed.contains(id) && !id.equals(FolderSnapshots.START)) {
                    log.accept("removing the workspace snapshot of an unfinished checkpoint " + id);
                    folders.delete(id);
                }
            }
            ram.retainOnly(RamBase.kept(store));
        } catch (IOException | RuntimeException e) {
            log.accept("cannot sweep unfinished checkpoints: " + e.getMessage());
        }
    }
}
