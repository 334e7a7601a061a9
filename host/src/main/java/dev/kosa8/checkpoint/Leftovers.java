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
 * snapshot, a copy of the held layer, RAM pages no record names, or only a
 * failed record names).
 * Swept before each checkpoint, while the sandbox's lock keeps any other
 * from starting and no commit is under way ({@link Commits}): a record
 * still pending then is one whose commit was cut short, and is marked failed.
 */
final class Leftovers {
    private final QmpClient qmp;
    private final CheckpointStore store;
    private final FolderSnapshots folders;
    private final FolderSnapshots held;
    private final RamStore ram;
    private final Consumer<String> log;

    Leftovers(QmpClient qmp, CheckpointStore store, FolderSnapshots folders, FolderSnapshots held, RamStore ram,
              Consumer<String> log) {
        this.qmp = qmp;
        this.store = store;
        this.folders = folders;
        this.held = held;
        this.ram = ram;
        this.log = log;
    }

    /** Removes every leftover; a failure is logged, never thrown: the checkpoint that follows does not need it. */
    void sweep() {
        try {
            for (Checkpoint c : store.list()) {
                if (c.state() == Checkpoint.State.PENDING) {
                    log.accept("checkpoint " + c.id() + " was never committed; marked failed");
                    store.save(c.failed(Undo.CUT_SHORT));
                }
            }
            Set<String> committed = store.keeping();
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
                        if (dot > 0 && (name.substring(dot).startsWith(".vmstate")
                                || name.substring(dot).startsWith(".memory"))
                                && !committed.contains(name.substring(0, dot))) {
                            log.accept("removing the machine state of an unfinished checkpoint " + name);
                            // QEMU sends nothing now (the callers sweep only then): a writer a dead daemon
                            // started before QEMU connected would listen for ever, holding the file
                            int ended = dev.kosa8.vm.MachineState.endWritersOf(f);
                            if (ended > 0) {
                                log.accept("ended " + ended + " state writer(s) left listening for " + name);
                            }
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
            for (String id : held.ids()) {
                if (!committed.contains(id)) {
                    // copied in the pause, at the instant: a commit cut short by the daemon's death left it
                    log.accept("removing the held layer's copy of an unfinished checkpoint " + id);
                    held.delete(id);
                }
            }
            ram.retainOnly(RamBase.kept(store));
        } catch (IOException | RuntimeException e) {
            log.accept("cannot sweep unfinished checkpoints: " + e.getMessage());
        }
    }
}
