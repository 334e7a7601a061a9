package dev.kosa8.daemon;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.fasterxml.jackson.datatype.jsr310.JavaTimeModule;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.stream.Stream;

/**
 * Sandbox records on disk, one {@code sandbox.json} per sandbox directory.
 * Each file carries a format name, a version and a SHA-256 of its content; it
 * is written to a temporary name, synced and renamed, so a crash leaves the
 * old record or the new one, never half of one. See docs/files.md.
 */
public final class SandboxStore {
    static final String FORMAT = "kosa8-sandbox";
    static final int VERSION = 1;
    static final ObjectMapper JSON = new ObjectMapper().registerModule(new JavaTimeModule())
            .disable(SerializationFeature.WRITE_DATES_AS_TIMESTAMPS);

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
            JsonNode body = JSON.valueToTree(r);
            ObjectNode file = JSON.createObjectNode().put("format", FORMAT).put("version", VERSION);
            file.set("sandbox", body);
            file.put("sha256", sha256(JSON.writeValueAsBytes(body)));
            Path tmp = dir.resolve("sandbox.json.tmp");
            byte[] bytes = JSON.writerWithDefaultPrettyPrinter().writeValueAsBytes(file);
            try (var ch = java.nio.channels.FileChannel.open(tmp, java.nio.file.StandardOpenOption.CREATE,
                    java.nio.file.StandardOpenOption.WRITE, java.nio.file.StandardOpenOption.TRUNCATE_EXISTING)) {
                ch.write(java.nio.ByteBuffer.wrap(bytes));
                ch.force(true);
            }
            Files.move(tmp, dir.resolve("sandbox.json"), StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
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
        JsonNode file = JSON.readTree(f.toFile());
        if (!FORMAT.equals(file.path("format").asText()) || file.path("version").asInt() != VERSION) {
            throw new IOException("not a version " + VERSION + " " + FORMAT + " file");
        }
        JsonNode body = file.path("sandbox");
        if (!sha256(JSON.writeValueAsBytes(body)).equals(file.path("sha256").asText())) {
            throw new IOException("checksum mismatch");
        }
        return JSON.treeToValue(body, SandboxRecord.class);
    }

    public void delete(String id) throws IOException {
        Path dir = directory(id);
        if (!Files.exists(dir)) {
            return;
        }
        try (Stream<Path> walk = Files.walk(dir)) {
            for (Path p : walk.sorted(java.util.Comparator.reverseOrder()).toList()) {
                Files.deleteIfExists(p);
            }
        }
    }

    private static String sha256(byte[] b) {
        try {
            return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(b));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }

    static String utf8(byte[] b) {
        return new String(b, StandardCharsets.UTF_8);
    }
}
