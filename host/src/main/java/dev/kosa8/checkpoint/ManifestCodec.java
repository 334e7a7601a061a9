package dev.kosa8.checkpoint;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.core.json.JsonWriteFeature;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;

/**
 * A manifest as JSON, written and read with Jackson's streaming API (no data
 * binding: a path is text or base64 depending on its bytes, which a record
 * mapping would hide). One object per entry, fields left out where they do
 * not apply:
 *
 * <pre>{@code
 * {"format":"kosa8-workspace-snapshot","version":1,"id":"c1","capturedAt":"2025-01-01T10:00:00.123456789Z",
 *  "entries":[{"path":"","kind":"dir","mode":493,"mtime":1735725600,"mtimeNs":5},
 *             {"path":"a.txt","kind":"file","mode":420,"mtime":..,"mtimeNs":..,"size":3,"sha256":"..",
 *              "dev":..,"ino":..,"ctime":..,"ctimeNs":..},
 *             {"pathBase64":"/w==","kind":"symlink","mode":511,"mtime":..,"mtimeNs":..,"target":"a.txt"}],
 *  "sha256":"<SHA-256 of every byte of the file before ,"sha256">"}
 * }</pre>
 *
 * The file is pure ASCII (non-ASCII text is escaped), so the bytes on disk
 * are exactly what was hashed: the header (whose capture time decides which
 * identities are trusted) and the entries, everything up to the checksum. A
 * damaged manifest is refused, never half used. JSON rather than a binary format because it measured fast enough: about
 * 30 ms to write or read 10,000 entries (see docs/checkpoints.md).
 */
final class ManifestCodec {
    static final String FORMAT = "kosa8-workspace-snapshot";
    static final int VERSION = 1;
    private static final JsonFactory JSON = JsonFactory.builder().enable(JsonWriteFeature.ESCAPE_NON_ASCII).build();

    private ManifestCodec() {
    }

    static byte[] write(Manifest m) throws IOException {
        ByteArrayOutputStream entries = new ByteArrayOutputStream(64 + 200 * m.entries().size());
        try (JsonGenerator g = JSON.createGenerator(entries)) {
            g.writeStartArray();
            for (Entry e : m.entries()) {
                writeEntry(g, e);
            }
            g.writeEndArray();
        }
        byte[] array = entries.toByteArray();
        ByteArrayOutputStream out = new ByteArrayOutputStream(array.length + 256);
        try (JsonGenerator g = JSON.createGenerator(out)) {
            g.writeStartObject();
            g.writeStringField("format", FORMAT);
            g.writeNumberField("version", VERSION);
            g.writeStringField("id", m.id());
            g.writeStringField("capturedAt", m.capturedAt().toString());
            g.writeFieldName("entries");
            g.writeRawValue(new String(array, StandardCharsets.US_ASCII));
            g.flush();
            byte[] covered = out.toByteArray();
            g.writeStringField("sha256", sha256(covered, 0, covered.length));
            g.writeEndObject();
        }
        return out.toByteArray();
    }

    private static void writeEntry(JsonGenerator g, Entry e) throws IOException {
        g.writeStartObject();
        bytesField(g, "path", e.path());
        g.writeStringField("kind", e.kind().json);
        g.writeNumberField("mode", e.mode());
        g.writeNumberField("mtime", e.mtimeSec());
        g.writeNumberField("mtimeNs", e.mtimeNsec());
        if (e.kind() == Kind.FILE) {
            Identity id = e.identity();
            g.writeNumberField("size", e.size());
            g.writeStringField("sha256", e.sha256());
            g.writeNumberField("dev", id.dev());
            g.writeNumberField("ino", id.ino());
            g.writeNumberField("ctime", id.ctimeSec());
            g.writeNumberField("ctimeNs", id.ctimeNsec());
        }
        if (e.target() != null) {
            bytesField(g, "target", e.target());
        }
        g.writeEndObject();
    }

    /** A byte string as text when it is valid UTF-8, else as base64 under {@code <name>Base64}. */
    private static void bytesField(JsonGenerator g, String name, String bytes) throws IOException {
        String text = ByteNames.toTextOrNull(bytes);
        if (text != null) {
            g.writeStringField(name, text);
        } else {
            g.writeStringField(name + "Base64", ByteNames.toBase64(bytes));
        }
    }

    /**
     * Reads a manifest; an IOException for anything damaged, unknown or inconsistent. The checksum must come
     * last, right after the entries, and covers every byte before it.
     */
    static Manifest read(byte[] file) throws IOException {
        try (JsonParser p = JSON.createParser(file)) {
            expect(p.nextToken(), JsonToken.START_OBJECT);
            String format = null, id = null, sha = null, actualSha = null;
            Integer version = null;
            Instant capturedAt = null;
            List<Entry> entries = null;
            while (p.nextToken() == JsonToken.FIELD_NAME) {
                String field = p.currentName();
                JsonToken value = p.nextToken();
                if (entries != null && !field.equals("sha256")) {
                    throw new IOException("malformed manifest: " + field + " after the entries");
                }
                switch (field) {
                    case "format" -> format = text(p);
                    case "version" -> version = p.getIntValue();
                    case "id" -> id = text(p);
                    case "capturedAt" -> capturedAt = Instant.parse(text(p));
                    case "entries" -> {
                        expect(value, JsonToken.START_ARRAY);
                        List<Entry> read = new ArrayList<>();
                        while (p.nextToken() == JsonToken.START_OBJECT) {
                            read.add(readEntry(p));
                        }
                        expect(p.currentToken(), JsonToken.END_ARRAY);
                        int end = (int) p.currentTokenLocation().getByteOffset() + 1;
                        actualSha = sha256(file, 0, end);
                        entries = read;
                    }
                    case "sha256" -> sha = text(p);
                    default -> p.skipChildren();
                }
            }
            expect(p.currentToken(), JsonToken.END_OBJECT);
            if (p.nextToken() != null) {
                throw new IOException("malformed manifest: more after its end");
            }
            if (!FORMAT.equals(format) || version == null || version != VERSION) {
                throw new IOException("not a version " + VERSION + " " + FORMAT + " file");
            }
            if (entries == null || sha == null || !sha.equals(actualSha)) {
                throw new IOException("checksum mismatch: the manifest is damaged");
            }
            if (id == null || capturedAt == null) {
                throw new IOException("manifest without id or time");
            }
            return new Manifest(id, capturedAt, entries);
        } catch (IllegalArgumentException | java.time.DateTimeException e) {
            throw new IOException("malformed manifest: " + e.getMessage(), e);
        } catch (com.fasterxml.jackson.core.JacksonException e) {
            throw new IOException("malformed manifest: " + e.getOriginalMessage(), e);
        }
    }

    private static Entry readEntry(JsonParser p) throws IOException {
        String path = null, kind = null, sha = null, target = null;
        long mtime = 0, size = 0, dev = 0, ino = 0, ctime = 0;
        int mode = 0, mtimeNs = 0, ctimeNs = 0;
        while (p.nextToken() == JsonToken.FIELD_NAME) {
            String field = p.currentName();
            p.nextToken();
            switch (field) {
                case "path" -> path = ByteNames.fromText(text(p));
                case "pathBase64" -> path = ByteNames.fromBase64(text(p));
                case "kind" -> kind = text(p);
                case "mode" -> mode = p.getIntValue();
                case "mtime" -> mtime = p.getLongValue();
                case "mtimeNs" -> mtimeNs = p.getIntValue();
                case "size" -> size = p.getLongValue();
                case "sha256" -> sha = text(p);
                case "dev" -> dev = p.getLongValue();
                case "ino" -> ino = p.getLongValue();
                case "ctime" -> ctime = p.getLongValue();
                case "ctimeNs" -> ctimeNs = p.getIntValue();
                case "target" -> target = ByteNames.fromText(text(p));
                case "targetBase64" -> target = ByteNames.fromBase64(text(p));
                default -> p.skipChildren();
            }
        }
        if (path == null || kind == null) {
            throw new IOException("manifest entry without path or kind");
        }
        Kind k = Kind.ofJson(kind);
        Identity identity = k == Kind.FILE ? new Identity(dev, ino, size, mtime, mtimeNs, ctime, ctimeNs) : null;
        return new Entry(path, k, mode, mtime, mtimeNs, size, sha, target, identity);
    }

    private static String text(JsonParser p) throws IOException {
        if (p.currentToken() != JsonToken.VALUE_STRING) {
            throw new IOException("malformed manifest: " + p.currentName() + " is not a string");
        }
        return p.getText();
    }

    private static void expect(JsonToken actual, JsonToken expected) throws IOException {
        if (actual != expected) {
            throw new IOException("malformed manifest: expected " + expected + ", found " + actual);
        }
    }

    static String sha256(byte[] b, int offset, int length) {
        try {
            MessageDigest sha = MessageDigest.getInstance("SHA-256");
            sha.update(b, offset, length);
            return HexFormat.of().formatHex(sha.digest());
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("every JDK has SHA-256", e);
        }
    }
}
