package dev.kosa8.checkpoint;

import dev.kosa8.checkpoint.ram.RamStore;
import dev.kosa8.host.AtomicFile;
import dev.kosa8.vm.SavedMachine;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * Which RAM a sandbox's next checkpoint compares with, so that it stores
 * only the pages changed since: {@code head} names the checkpoint the
 * running machine last came from (taken or rewound to); {@code base} the
 * RAM image it was restored from before any checkpoint of its own (a
 * template's, or for a fork the parent's checkpoint), linked in by
 * {@link #startFrom}. Both live in the sandbox's checkpoint directory.
 */
final class RamBase {
    private final CheckpointStore store;
    private final RamStore ram;

    RamBase(CheckpointStore store, RamStore ram) {
        this.store = store;
        this.ram = ram;
    }

    private static Path head(Path checkpointDir) {
        return checkpointDir.resolve("head");
    }

    /** Names the RAM image linked in from elsewhere ({@link #startFrom}) while no checkpoint has been taken since. */
    private static Path adopted(Path checkpointDir) {
        return checkpointDir.resolve("base");
    }

    /** The machine now comes from checkpoint {@code id}: the next checkpoint compares with it. */
    void head(String id) throws IOException {
        AtomicFile.writeHint(head(store.directory()), id.getBytes(StandardCharsets.US_ASCII));
    }

    /** The adopted base is no longer needed once a checkpoint was taken or rewound to. */
    void dropAdopted() throws IOException {
        Files.deleteIfExists(adopted(store.directory()));
    }

    /** The checkpoint whose pages the next one compares with: the head, the adopted base, else the newest. */
    String base() throws IOException {
        for (Path named : List.of(head(store.directory()), adopted(store.directory()))) {
            if (Files.isRegularFile(named)) {
                String id = Files.readString(named).strip();
                if (ram.has(id)) {
                    return id;
                }
            }
        }
        String newest = null;
        for (Checkpoint c : store.list()) {
            if (c.state() == Checkpoint.State.COMMITTED && ram.has(c.id())) {
                newest = c.id();
            }
        }
        return newest;
    }

    /**
     * The RAM images to keep: every checkpoint's but a failed one's, and the
     * adopted base until a checkpoint is taken or rewound to. A head naming a
     * removed checkpoint keeps nothing: removing a checkpoint frees its pages.
     */
    static Set<String> kept(CheckpointStore store) throws IOException {
        Set<String> keep = new HashSet<>(store.keeping());
        Path base = adopted(store.directory());
        if (Files.isRegularFile(base)) {
            keep.add(Files.readString(base).strip());
        }
        return keep;
    }

    /**
     * Makes RAM image {@code ramId} of {@code otherCheckpointDir} the base of
     * the first checkpoint in {@code checkpointDir}: it and the packs it uses
     * are linked in ({@link RamStore#adopt}) and named in {@code base}.
     *
     * @param template whether the other is a template, whose list of pages to send first is then shared
     *                 ({@link RamStore#adopt(RamStore, String, boolean)})
     */
    static void startFrom(Path checkpointDir, Path otherCheckpointDir, String ramId, boolean template)
            throws IOException {
        if (new RamStore(checkpointDir).adopt(new RamStore(otherCheckpointDir), ramId, template)) {
            AtomicFile.writeHint(adopted(checkpointDir), ramId.getBytes(StandardCharsets.US_ASCII));
        }
    }

    /**
     * Checkpoint {@code c}'s RAM and devices as QEMU loads them: put together
     * from its pages ({@link RamStore}), or its whole stream where that was
     * kept.
     */
    static SavedMachine savedMachine(Path checkpointDir, Checkpoint c) throws IOException {
        CheckpointStore checkpoints = new CheckpointStore(checkpointDir);
        if (Files.isRegularFile(checkpoints.memory(c.id()))) {
            if (!Files.isRegularFile(checkpoints.vmState(c.id()))) {
                throw new IOException("the device state of checkpoint " + c.id() + " is missing");
            }
            return new dev.kosa8.vm.FileRamMachine(checkpoints.vmState(c.id()), checkpoints.memory(c.id()));
        }
        RamStore ram = new RamStore(checkpointDir);
        if (ram.has(c.id())) {
            return ram.open(c.id());
        }
        Path whole = new CheckpointStore(checkpointDir).vmState(c.id());
        if (!Files.isRegularFile(whole)) {
            throw new IOException("the machine state of checkpoint " + c.id() + " is missing"
                    + " (checkpoints taken by kosa8 before 2026-11-30 kept it in the disk image; take a new one)");
        }
        return SavedMachine.file(whole);
    }
}
