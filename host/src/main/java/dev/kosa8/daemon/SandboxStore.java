package dev.kosa8.daemon;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import com.fasterxml.jackson.datatype.jsr310.JavaTimeModule;
import dev.kosa8.host.RecordFile;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;

/**
 * Sandbox records on disk, one {@code sandbox.json} per sandbox directory.
 * Each file carries a format name, a version and a SHA-256 of its content
 * ({@link RecordFile}); it is written to a temporary name, synced and
 * renamed ({@link dev.kosa8.host.AtomicFile}), so a crash leaves the old
 * record or the new one, never half of one. See docs/files.md.
 */
public final class SandboxStore {
    static final String FORMAT = "kosa8-sandbox";
    static final int VERSION = 1;
    static final ObjectMapper JSON = new ObjectMapper().registerModule(new JavaTimeModule())
            .disable(SerializationFeature.WRITE_DATES_AS_TIMESTAMPS);
    /**
     * Sandbox records have had the envelope from the start: a file without
     * one is not a sandbox record, and is refused.
     */
    private static final RecordFile<SandboxRecord> RECORD = new RecordFile<>(FORMAT, VERSION, "sandbox",
            SandboxRecord.class, JSON, RecordFile.Unchecked.REFUSE,
            "kosa8 leaves that sandbox out; remove the directory the file is in to be rid of it");

    private final Path root;

    public SandboxStore(Path root) {
        this.root = root;
    }

    public Path directory(String id) {
        if (!SandboxIds.isValid(id)) {
            throw new IllegalArgumentException("bad sandbox id: " + id);
        }
        return root.resolve(id);
    }

    public void save(SandboxRecord r) {
        Path dir = directory(r.id());
        try {
            Files.createDirectories(dir);
            RECORD.write(dir.resolve("sandbox.json"), r);
        } catch (IOException e) {
            throw new java.io.UncheckedIOException("cannot save sandbox " + r.id(), e);
        }
    }

    /** Reads every valid record; directories without one (or with a damaged one) are reported and skipped. */
    public List<SandboxRecord> loadAll(java.util.function.Consumer<String> problems) {
        List<SandboxRecord> out = new ArrayList<>();
        if (!Files.isDirectory(root)) {
            return out;
        }
        try (Stream<Path> dirs = Files.list(root)) {
            for (Path dir : dirs.filter(Files::isDirectory).toList()) {
                Path f = dir.resolve("sandbox.json");
                if (!Files.exists(f)) {
                    continue;
                }
                try {
                    out.add(read(f));
                } catch (RecordFile.Damaged e) {
                    problems.accept(e.getMessage()); // names the file
                } catch (IOException | RuntimeException e) {
                    problems.accept("skipping " + f + ": " + e.getMessage());
                }
            }
        } catch (IOException e) {
            problems.accept("cannot list " + root + ": " + e.getMessage());
        }
        return out;
    }

    static SandboxRecord read(Path f) throws IOException {
        return RECORD.read(f);
    }

    public void delete(String id) throws IOException {
        Path dir = directory(id);
        if (!Files.exists(dir)) {
            return;
        }
        // not Files.walk: a fork's view keeps what its guest made, modes included, and a directory the guest made
        // mode 000 would stop a walk (and a removal that fails leaves a record a restarted daemon trips on)
        dev.kosa8.checkpoint.TreeRemoval.empty(dir, true);
    }

    static String utf8(byte[] b) {
        return new String(b, StandardCharsets.UTF_8);
    }
}
