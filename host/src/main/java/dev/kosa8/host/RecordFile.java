package dev.kosa8.host;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.function.Consumer;

/**
 * A small JSON record kept in a file of its own, in an envelope that says
 * what it is and proves it whole:
 * <pre>
 * {
 *   "format" : "kosa8-checkpoint",
 *   "version" : 1,
 *   "checkpoint" : { the record },
 *   "sha256" : "…"
 * }
 * </pre>
 * {@code sha256} is the SHA-256, in hex, of the record's compact JSON (the
 * field's value written again without spaces, so re-indenting the file does
 * not change it). Written through {@link AtomicFile}; read back, the format
 * name, the version and the checksum are all checked before the record is
 * believed, and any problem is a {@link Damaged} that names the file, says
 * what is wrong and what to do.
 *
 * <p>Files written before a kind of record had this envelope (no format
 * name, no checksum) are read as they are, or refused, as each kind chooses
 * ({@link Unchecked}); see docs/files.md.
 *
 * @param <T> the record's type
 */
public final class RecordFile<T> {
    /** More than any record kosa8 writes; a bigger file is not one of them. */
    static final long MAX_BYTES = 64L << 20;
    private static final ObjectMapper COMPACT = new ObjectMapper();

    /** What reading does with a file written before its kind of record had the envelope. */
    public enum Unchecked {
        /** A damaged file: there were never such files, or they cannot be trusted. */
        REFUSE,
        /** The record as it is, with a warning: files users already have keep working. */
        READ
    }

    /** A record file that cannot be read: its message names the file, what is wrong, and what to do. */
    public static final class Damaged extends IOException {
        private final transient Path file;
        private final String problem;
        private final String remedy;

        Damaged(Path file, String problem, String remedy, Throwable cause) {
            super(problem + "; " + remedy, cause);
            this.file = file;
            this.problem = problem;
            this.remedy = remedy;
        }

        public Path file() {
            return file;
        }

        /** What is wrong, naming the file. */
        public String problem() {
            return problem;
        }

        /** What to do about it. */
        public String remedy() {
            return remedy;
        }
    }

    private final String format;
    private final int version;
    private final int oldest;
    private final String field;
    private final Class<T> type;
    private final ObjectMapper json;
    private final Unchecked unchecked;
    private final String remedy;

    /**
     * @param format    the format's name, {@code kosa8-…}
     * @param version   the version this kosa8 writes and reads
     * @param field     the envelope's field that holds the record
     * @param type      the record's class
     * @param json      how the record maps to JSON
     * @param unchecked what reading does with a file written before the envelope
     * @param remedy    what to do about a damaged file of this kind, said to the user ("remove it to …")
     */
    public RecordFile(String format, int version, String field, Class<T> type, ObjectMapper json, Unchecked unchecked,
                      String remedy) {
        this(format, version, version, field, type, json, unchecked, remedy);
    }

    /**
     * As above, for a kind of record whose later versions only added to it:
     * files of versions {@code oldest} to {@code version} are read (into the
     * one type, whose compact constructor fills in what an older version
     * lacks); only {@code version} is written.
     */
    public RecordFile(String format, int oldest, int version, String field, Class<T> type, ObjectMapper json,
                      Unchecked unchecked, String remedy) {
        if (field.equals("format") || field.equals("version") || field.equals("sha256")) {
            throw new IllegalArgumentException("the record cannot be in the envelope's own field " + field);
        }
        if (oldest < 1 || oldest > version) {
            throw new IllegalArgumentException("versions " + oldest + " to " + version + " of " + format);
        }
        this.format = format;
        this.version = version;
        this.oldest = oldest;
        this.field = field;
        this.type = type;
        this.json = json;
        this.unchecked = unchecked;
        this.remedy = remedy;
    }

    public String format() {
        return format;
    }

    public int version() {
        return version;
    }

    /** Replaces {@code file} with {@code record} in its envelope ({@link AtomicFile}). */
    public void write(Path file, T record) throws IOException {
        AtomicFile.write(file, encode(record));
    }

    /** The file's bytes for {@code record}: the envelope, indented as people read it. */
    public byte[] encode(T record) throws IOException {
        JsonNode body = json.valueToTree(record);
        ObjectNode envelope = json.createObjectNode().put("format", format).put("version", version);
        envelope.set(field, body);
        envelope.put("sha256", sha256(body));
        return json.writerWithDefaultPrettyPrinter().writeValueAsBytes(envelope);
    }

    /** Reads the record in {@code file}; one without the envelope is read without a word, where that is allowed. */
    public T read(Path file) throws IOException {
        return read(file, warning -> { });
    }

    /**
     * Reads the record in {@code file}.
     *
     * @param warnings told when the file has no envelope and is read as it is ({@link Unchecked#READ})
     * @throws Damaged when it is not a whole, checked record of this format and version
     * @throws IOException when it cannot be read at all (missing, unreadable)
     */
    public T read(Path file, Consumer<String> warnings) throws IOException {
        long size = Files.size(file);
        if (size > MAX_BYTES) {
            throw damaged(file, "it is " + size + " bytes, more than any " + format + " record", null);
        }
        byte[] bytes = Files.readAllBytes(file);
        JsonNode root;
        try {
            root = json.reader().with(DeserializationFeature.FAIL_ON_TRAILING_TOKENS).readTree(bytes);
        } catch (JsonProcessingException e) {
            throw damaged(file, "it is not whole JSON (cut short, or changed): " + e.getOriginalMessage(), e);
        }
        if (root == null || !root.isObject()) {
            throw damaged(file, "it is " + (root == null || root.isMissingNode() ? "empty" : "not a JSON object"),
                    null);
        }
        if (!root.has("sha256") && !root.has(field) && !root.path("format").isTextual()) {
            return unchecked(file, root, warnings);
        }
        String named = root.path("format").asText();
        if (!format.equals(named)) {
            throw damaged(file, "it is not a " + format + " file (its format is \"" + named + "\")", null);
        }
        JsonNode v = root.path("version");
        if (!v.isInt() || v.intValue() < oldest || v.intValue() > version) {
            throw new Damaged(file, file + " is version " + v + " of " + format + ", and this kosa8 reads "
                    + (oldest == version ? "version " + version : "versions " + oldest + " to " + version),
                    "it was written by another kosa8: use that one; or " + remedy, null);
        }
        JsonNode body = root.get(field);
        if (body == null || !body.isObject()) {
            throw damaged(file, "its \"" + field + "\" is missing", null);
        }
        if (!root.path("sha256").isTextual()) {
            throw damaged(file, "its \"sha256\" is missing", null);
        }
        if (!sha256(body).equals(root.path("sha256").asText())) {
            throw damaged(file, "checksum mismatch: its content is not what was written (changed, or cut short,"
                    + " since)", null);
        }
        return value(file, body);
    }

    private T unchecked(Path file, JsonNode root, Consumer<String> warnings) throws IOException {
        if (unchecked == Unchecked.REFUSE) {
            throw damaged(file, "it has no format name, version or checksum: it is not a " + format + " file", null);
        }
        T value = value(file, root);
        warnings.accept(file + " has no checksum (written by an earlier kosa8): read as it is, though damage to it"
                + " cannot be told");
        return value;
    }

    private T value(Path file, JsonNode body) throws Damaged {
        try {
            return json.treeToValue(body, type);
        } catch (JsonProcessingException | IllegalArgumentException e) {
            String why = e instanceof JsonProcessingException j ? j.getOriginalMessage() : e.getMessage();
            throw damaged(file, "it does not hold a valid " + format + " record: " + why, e);
        }
    }

    /**
     * A damaged file of this kind, for a problem its owner finds in a record
     * that reads well (one that names another record, say): {@code what} is wrong.
     */
    public Damaged damaged(Path file, String what) {
        return damaged(file, what, null);
    }

    private Damaged damaged(Path file, String what, Throwable cause) {
        return new Damaged(file, file + " is damaged: " + what, remedy, cause);
    }

    private static String sha256(JsonNode body) throws IOException {
        try {
            byte[] compact = COMPACT.writeValueAsBytes(body);
            return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(compact));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("every Java has SHA-256", e);
        }
    }
}
