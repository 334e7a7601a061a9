package dev.kosa8.checkpoint;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import com.fasterxml.jackson.datatype.jsr310.JavaTimeModule;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Optional;

/**
 * The committed checkpoints of one sandbox: {@code <sandbox>/checkpoints/<id>.json}.
 * A checkpoint exists once its file does. The file is written last, after the
 * QEMU snapshot and the workspace snapshot it names, to a temporary name and
 * renamed: a daemon or QEMU killed half-way leaves no file, so no checkpoint
 * that cannot be rewound to (only leftovers, which {@link Checkpointer}
 * removes).
 */
public final class CheckpointStore {
    static final ObjectMapper JSON = new ObjectMapper().registerModule(new JavaTimeModule())
            .disable(SerializationFeature.WRITE_DATES_AS_TIMESTAMPS);
    private final Path dir;

    public CheckpointStore(Path dir) {
        this.dir = dir;
    }

    public Path directory() {
        return dir;
    }

    /** The machine's saved RAM and devices of checkpoint {@code id} (a QEMU migration stream). */
    public Path vmState(String id) {
        return dir.resolve(id + ".vmstate");
    }

    /** Where that stream is written until it is complete. */
    Path vmStateTemp(String id) {
        return dir.resolve(id + ".vmstate.tmp");
    }

    public void commit(Checkpoint c) throws IOException {
        Files.createDirectories(dir);
        Path tmp = dir.resolve(c.id() + ".json.tmp");
        Files.write(tmp, JSON.writerWithDefaultPrettyPrinter().writeValueAsBytes(c));
        try (var ch = java.nio.channels.FileChannel.open(tmp, java.nio.file.StandardOpenOption.WRITE)) {
            ch.force(true);
        }
        Files.move(tmp, dir.resolve(c.id() + ".json"), StandardCopyOption.ATOMIC_MOVE);
    }

    /** Every committed checkpoint, oldest first. */
    public List<Checkpoint> list() throws IOException {
        if (!Files.isDirectory(dir)) {
            return List.of();
        }
        List<Checkpoint> all = new ArrayList<>();
        try (var files = Files.list(dir)) {
            for (Path f : files.filter(p -> p.getFileName().toString().endsWith(".json")).toList()) {
                all.add(JSON.readValue(f.toFile(), Checkpoint.class));
            }
        }
        all.sort(Comparator.comparing(Checkpoint::created).thenComparing(Checkpoint::id));
        return all;
    }

    /** The ids of every committed checkpoint. */
    public java.util.Set<String> ids() throws IOException {
        java.util.Set<String> ids = new java.util.HashSet<>();
        list().forEach(c -> ids.add(c.id()));
        return ids;
    }

    public Optional<Checkpoint> find(String id) throws IOException {
        if (!CheckpointIds.isValid(id)) {
            return Optional.empty();
        }
        Path f = dir.resolve(id + ".json");
        return Files.exists(f) ? Optional.of(JSON.readValue(f.toFile(), Checkpoint.class)) : Optional.empty();
    }

    /** Forgets a checkpoint: after this it no longer exists, whatever of its parts remain to be removed. */
    public void forget(String id) throws IOException {
        Files.deleteIfExists(dir.resolve(id + ".json"));
    }
}
