package dev.kosa8.checkpoint;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import com.fasterxml.jackson.datatype.jsr310.JavaTimeModule;
import dev.kosa8.host.RecordFile;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Consumer;

/**
 * The checkpoints of one sandbox: {@code <sandbox>/checkpoints/<id>.json}.
 * A checkpoint's file is written when its instant is fixed, saying it is
 * pending, and written again, committed, once everything it names (the QEMU
 * snapshot, the RAM, the workspace snapshot) is on disk; each time to a
 * temporary name and renamed. A daemon or QEMU killed half-way leaves a
 * pending record, which the next daemon marks failed ({@link Undo#recover}),
 * never a checkpoint that looks usable and is not; what it named is swept
 * ({@link Leftovers}).
 *
 * <p>Each file is a {@link RecordFile}: format {@code kosa8-checkpoint},
 * version 2 (version 1, which had no state, is read as committed: there were
 * no pending checkpoints then), the record under {@code checkpoint}, and its
 * SHA-256. A damaged
 * file spoils only its own checkpoint: {@link #list} leaves it out and says
 * so in the log, {@link #find} refuses it naming the file, and {@link #ids}
 * still counts it, so that nothing it names (its disk snapshot, RAM,
 * workspace snapshot) is swept away as the leftover of an unfinished one
 * while the file is there to be looked at or put right.
 *
 * <p>Files written by a kosa8 from before the checksum (the record alone, at
 * the top level) are read as they are, with a warning in the log once per
 * file: they are the users' existing checkpoints, and refusing them would
 * throw away work that is most likely whole; damage to them cannot be told,
 * as it could not before. Every checkpoint taken from now on has the
 * checksum.
 */
public final class CheckpointStore {
    static final ObjectMapper JSON = new ObjectMapper().registerModule(new JavaTimeModule())
            .disable(SerializationFeature.WRITE_DATES_AS_TIMESTAMPS);
    static final RecordFile<Checkpoint> RECORD = new RecordFile<>("kosa8-checkpoint", 1, 2, "checkpoint",
            Checkpoint.class, JSON, RecordFile.Unchecked.READ,
            "that checkpoint cannot be used (the others can); remove the file to forget it");
    /** The unchecked files already warned about, so the log says it once, not at every listing. */
    private static final Set<Path> WARNED = ConcurrentHashMap.newKeySet();
    private static final String SUFFIX = ".json";
    private final Path dir;
    private final Consumer<String> log;

    /** A store whose problems (a damaged or unchecked record) go to standard error: the daemon's log. */
    public CheckpointStore(Path dir) {
        this(dir, line -> System.err.println("kosa8: " + line));
    }

    /** @param log told about records left out of a listing, and about records read without a checksum */
    public CheckpointStore(Path dir, Consumer<String> log) {
        this.dir = dir;
        this.log = log;
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

    /**
     * The guest's RAM at checkpoint {@code id}, for a machine whose RAM is a file
     * ({@code vm.CheckpointMode.FILE_RAM}): a copy of that file; its devices are in {@link #vmState}.
     */
    public Path memory(String id) {
        return dir.resolve(id + ".memory");
    }

    /** Where that copy is made until the checkpoint commits. */
    Path memoryTemp(String id) {
        return dir.resolve(id + ".memory.tmp");
    }

    private Path record(String id) {
        return dir.resolve(id + SUFFIX);
    }

    /** Writes checkpoint {@code c}'s record, in whatever state it is, replacing the one before. */
    public void save(Checkpoint c) throws IOException {
        Files.createDirectories(dir);
        RECORD.write(record(c.id()), c);
    }

    /**
     * Every checkpoint whose record can be read (pending, committed and
     * failed), oldest first. A damaged record is left out, and the log says
     * which file and why.
     */
    public List<Checkpoint> list() throws IOException {
        List<Checkpoint> all = new ArrayList<>();
        for (String id : recordIds()) {
            try {
                all.add(read(id));
            } catch (RecordFile.Damaged e) {
                log.accept("checkpoint " + id + " left out: " + e.getMessage());
            } catch (java.nio.file.NoSuchFileException e) {
                // removed since the directory was listed
            }
        }
        all.sort(Comparator.comparing(Checkpoint::created).thenComparing(Checkpoint::id));
        return all;
    }

    /**
     * The ids of every checkpoint record, damaged ones included: what they
     * name is kept until the record is removed.
     */
    public Set<String> ids() throws IOException {
        return new java.util.HashSet<>(recordIds());
    }

    /**
     * The checkpoints whose parts are to be kept: every record but a failed
     * one (which names nothing), damaged ones included, as in {@link #ids}.
     */
    public Set<String> keeping() throws IOException {
        Set<String> keep = ids();
        for (Checkpoint c : list()) {
            if (c.state() == Checkpoint.State.FAILED) {
                keep.remove(c.id());
            }
        }
        return keep;
    }

    /**
     * Checkpoint {@code id}, or empty when there is none.
     *
     * @throws RecordFile.Damaged when its record is damaged: the message names the file
     */
    public Optional<Checkpoint> find(String id) throws IOException {
        if (!CheckpointIds.isValid(id) || !Files.exists(record(id))) {
            return Optional.empty();
        }
        return Optional.of(read(id));
    }

    /** Forgets a checkpoint: after this it no longer exists, whatever of its parts remain to be removed. */
    public void forget(String id) throws IOException {
        Files.deleteIfExists(record(id));
    }

    /** The ids of the record files here, by their names (unread). */
    private List<String> recordIds() throws IOException {
        if (!Files.isDirectory(dir)) {
            return List.of();
        }
        List<String> ids = new ArrayList<>();
        try (var files = Files.list(dir)) {
            for (Path f : files.toList()) {
                String name = f.getFileName().toString();
                if (!name.endsWith(SUFFIX)) {
                    continue;
                }
                String id = name.substring(0, name.length() - SUFFIX.length());
                if (CheckpointIds.isValid(id)) {
                    ids.add(id);
                } else if (!name.startsWith(".")) {
                    log.accept(f + " is not a checkpoint record (its name is no checkpoint id); left out");
                }
            }
        }
        return ids;
    }

    private Checkpoint read(String id) throws IOException {
        Path file = record(id);
        Checkpoint c = RECORD.read(file, warning -> {
            if (WARNED.add(file.toAbsolutePath())) {
                log.accept(warning);
            }
        });
        if (!c.id().equals(id)) {
            throw RECORD.damaged(file, "it holds checkpoint " + c.id() + ", not " + id);
        }
        return c;
    }
}
