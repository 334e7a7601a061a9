package dev.kosa8.image;

import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import dev.kosa8.host.KosaException;
import dev.kosa8.host.RecordFile;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Optional;

/**
 * The image builds' step cache, {@code images/steps/KEY/}: one directory per
 * step, named by the hash of what decides its result (the step before, the
 * instruction with its variables substituted, the files it reads), holding
 * {@code step.json} ({@link StepRecord}) and, for a step that changed the
 * disk, its qcow2 layer ({@value #LAYER}, an overlay of the disk before it,
 * read-only once committed; the first layer of a build sandbox's session
 * rests on {@value #BOOT}, what that sandbox's boot wrote). A step is
 * committed when its {@code step.json} is written, last; a directory without
 * one is an unfinished step that {@link #sweep} removes.
 *
 * <p>Why layers and not whole disks: a step's result is its parent's disk
 * plus what it changed, and a qcow2 overlay holds exactly that, written by
 * QEMU while the step runs and made the next step's backing file by a live
 * snapshot, with no copy. An unchanged prefix of a Dockerfile is therefore
 * its chain of layers, reused as they are.
 */
public final class StepStore {
    public static final String RECORD = "step.json";
    public static final String LAYER = "layer.qcow2";
    public static final String BOOT = "boot.qcow2";
    static final String DIR = "steps";
    private static final ObjectMapper JSON = new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT)
            .disable(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES);
    private static final RecordFile<StepRecord> FILE = new RecordFile<>("kosa8-build-step", 1, "step",
            StepRecord.class, JSON, RecordFile.Unchecked.REFUSE, "rebuild with `kosa8 image build --no-cache`");

    private final Path root;

    public StepStore(Path images) {
        this.root = images.resolve(DIR);
    }

    public Path root() {
        return root;
    }

    /** The key of a step: its parent's key, what the instruction does, and the hash of what it reads. */
    public static String key(String parent, String step, String inputs) {
        try {
            MessageDigest md = MessageDigest.getInstance("SHA-256");
            for (String part : List.of("kosa8-step-1", parent, step, inputs)) {
                byte[] b = part.getBytes(StandardCharsets.UTF_8);
                md.update(String.valueOf(b.length).getBytes(StandardCharsets.US_ASCII));
                md.update((byte) ':');
                md.update(b);
            }
            return HexFormat.of().formatHex(md.digest());
        } catch (java.security.NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }

    public Path directory(String key) {
        if (!key.matches("[0-9a-f]{64}")) {
            throw new IllegalArgumentException("not a step key: " + key);
        }
        return root.resolve(key);
    }

    /** The committed step, if there is one and every file of its disk's chain is still there. */
    public Optional<StepRecord> find(String key) {
        Path file = directory(key).resolve(RECORD);
        if (!Files.isRegularFile(file)) {
            return Optional.empty();
        }
        try {
            StepRecord r = FILE.read(file);
            return Files.isRegularFile(Path.of(r.disk())) ? Optional.of(r) : Optional.empty();
        } catch (IOException e) {
            return Optional.empty(); // a damaged record is a miss: the step is made again
        }
    }

    /** Commits a step: its record is written last, atomically. */
    public void commit(StepRecord r) throws IOException {
        Path dir = directory(r.key());
        Files.createDirectories(dir);
        Path layer = dir.resolve(LAYER);
        if (Files.exists(layer)) {
            layer.toFile().setReadOnly();
        }
        Path boot = dir.resolve(BOOT);
        if (Files.exists(boot)) {
            boot.toFile().setReadOnly();
        }
        FILE.write(dir.resolve(RECORD), r);
    }

    /** Every committed step. */
    public List<StepRecord> list() {
        List<StepRecord> out = new ArrayList<>();
        if (!Files.isDirectory(root)) {
            return out;
        }
        try (DirectoryStream<Path> s = Files.newDirectoryStream(root)) {
            for (Path d : s) {
                String name = d.getFileName().toString();
                if (name.matches("[0-9a-f]{64}")) {
                    find(name).ifPresent(out::add);
                }
            }
        } catch (IOException e) {
            throw new KosaException(KosaException.Kind.IMAGE, "cannot list the build steps in " + root + ": "
                    + e.getMessage(), "check the permissions of kosa8's data folder", e);
        }
        return out;
    }

    /**
     * Removes step directories with no record (a build that died, or a step that failed): callers hold the
     * builds' lock, so none is being made. Returns how many.
     */
    public int sweep() throws IOException {
        if (!Files.isDirectory(root)) {
            return 0;
        }
        int n = 0;
        try (DirectoryStream<Path> s = Files.newDirectoryStream(root)) {
            for (Path d : s) {
                if (Files.isDirectory(d) && !Files.isRegularFile(d.resolve(RECORD))) {
                    remove(d);
                    n++;
                }
            }
        }
        return n;
    }

    /** Deletes a step's directory, its read-only layers too. */
    public void remove(Path dir) throws IOException {
        if (!Files.exists(dir)) {
            return;
        }
        try (var walk = Files.walk(dir)) {
            for (Path p : walk.sorted(java.util.Comparator.reverseOrder()).toList()) {
                p.toFile().setWritable(true);
                Files.deleteIfExists(p);
            }
        }
    }
}
