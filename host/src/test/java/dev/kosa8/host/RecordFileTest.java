package dev.kosa8.host;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class RecordFileTest {
    record Note(String name, long size) {
        Note {
            if (name == null || name.isEmpty()) {
                throw new IllegalArgumentException("a note needs a name");
            }
        }
    }

    private static final ObjectMapper JSON = new ObjectMapper();
    private static final String REMEDY = "remove it to forget the note";
    private static final RecordFile<Note> NOTES = new RecordFile<>("kosa8-note", 1, "note", Note.class, JSON,
            RecordFile.Unchecked.READ, REMEDY);
    private static final RecordFile<Note> STRICT = new RecordFile<>("kosa8-note", 1, "note", Note.class, JSON,
            RecordFile.Unchecked.REFUSE, REMEDY);

    @TempDir
    Path dir;

    @Test
    void writesTheRecordInItsEnvelopeAndReadsItBack() throws Exception {
        Path f = dir.resolve("note.json");
        NOTES.write(f, new Note("a", 42));
        JsonNode file = JSON.readTree(f.toFile());
        assertThat(file.path("format").asText()).isEqualTo("kosa8-note");
        assertThat(file.path("version").asInt()).isEqualTo(1);
        assertThat(file.path("note").path("size").asLong()).isEqualTo(42);
        assertThat(file.path("sha256").asText()).isEqualTo(sha256(JSON.writeValueAsBytes(file.path("note"))));
        List<String> fieldOrder = new ArrayList<>();
        file.fieldNames().forEachRemaining(fieldOrder::add);
        assertThat(fieldOrder).containsExactly("format", "version", "note", "sha256");
        assertThat(NOTES.read(f)).isEqualTo(new Note("a", 42));
        assertThat(Files.readString(f)).as("indented for people").contains("\n  \"format\" : \"kosa8-note\"");
    }

    @Test
    void reIndentingTheFileDoesNotChangeItsChecksum() throws Exception {
        Path f = dir.resolve("note.json");
        NOTES.write(f, new Note("a", 42));
        Files.write(f, JSON.writeValueAsBytes(JSON.readTree(f.toFile()))); // compact now
        assertThat(NOTES.read(f)).isEqualTo(new Note("a", 42));
    }

    @Test
    void aTruncatedFileIsDamagedAndTheErrorNamesItSaysWhatIsWrongAndWhatToDo() throws Exception {
        Path f = dir.resolve("note.json");
        NOTES.write(f, new Note("a", 42));
        String whole = Files.readString(f);
        Files.writeString(f, whole.substring(0, whole.length() / 2));
        assertThatThrownBy(() -> NOTES.read(f)).isInstanceOfSatisfying(RecordFile.Damaged.class, e -> {
            assertThat(e.file()).isEqualTo(f);
            assertThat(e.getMessage()).startsWith(f + " is damaged: it is not whole JSON").endsWith(REMEDY);
            assertThat(e.problem()).contains(f.toString()).doesNotContain(REMEDY);
            assertThat(e.remedy()).isEqualTo(REMEDY);
        });
        Files.writeString(f, "");
        assertThatThrownBy(() -> NOTES.read(f)).isInstanceOf(RecordFile.Damaged.class)
                .hasMessageContaining(f + " is damaged: it is empty");
        Files.writeString(f, whole + "}");
        assertThatThrownBy(() -> NOTES.read(f)).as("something after the record").isInstanceOf(RecordFile.Damaged.class)
                .hasMessageContaining(f + " is damaged: it is not whole JSON");
    }

    @Test
    void aChangedRecordFailsItsChecksum() throws Exception {
        Path f = dir.resolve("note.json");
        NOTES.write(f, new Note("a", 42));
        Files.writeString(f, Files.readString(f).replace("\"size\" : 42", "\"size\" : 43"));
        assertThatThrownBy(() -> NOTES.read(f)).isInstanceOf(RecordFile.Damaged.class)
                .hasMessageContaining(f + " is damaged: checksum mismatch").hasMessageEndingWith(REMEDY);
        ObjectNode file = (ObjectNode) JSON.readTree(f.toFile());
        file.remove("sha256");
        Files.write(f, JSON.writeValueAsBytes(file));
        assertThatThrownBy(() -> NOTES.read(f)).as("an envelope without its checksum is no old record")
                .isInstanceOf(RecordFile.Damaged.class).hasMessageContaining("its \"sha256\" is missing");
    }

    @Test
    void anotherFormatOrVersionIsRefusedNamingBoth() throws Exception {
        Path f = dir.resolve("note.json");
        new RecordFile<>("kosa8-other", 1, "note", Note.class, JSON, RecordFile.Unchecked.READ, REMEDY)
                .write(f, new Note("a", 1));
        assertThatThrownBy(() -> NOTES.read(f)).isInstanceOf(RecordFile.Damaged.class)
                .hasMessageContaining(f + " is damaged: it is not a kosa8-note file (its format is \"kosa8-other\")");
        new RecordFile<>("kosa8-note", 2, "note", Note.class, JSON, RecordFile.Unchecked.READ, REMEDY)
                .write(f, new Note("a", 1));
        assertThatThrownBy(() -> NOTES.read(f)).isInstanceOfSatisfying(RecordFile.Damaged.class, e -> {
            assertThat(e.problem()).isEqualTo(f + " is version 2 of kosa8-note, and this kosa8 reads version 1");
            assertThat(e.remedy()).startsWith("it was written by another kosa8: use that one").endsWith(REMEDY);
        });
    }

    @Test
    void aKindThatReadsOlderVersionsWritesOnlyItsOwnAndRefusesNewerOnesNamingTheRange() throws Exception {
        Path f = dir.resolve("note.json");
        RecordFile<Note> twoOrOne = new RecordFile<>("kosa8-note", 1, 2, "note", Note.class, JSON,
                RecordFile.Unchecked.READ, REMEDY);
        NOTES.write(f, new Note("old", 1));
        assertThat(twoOrOne.read(f)).isEqualTo(new Note("old", 1));
        twoOrOne.write(f, new Note("new", 2));
        assertThat(JSON.readTree(f.toFile()).path("version").asInt()).isEqualTo(2);
        assertThat(twoOrOne.read(f)).isEqualTo(new Note("new", 2));
        assertThatThrownBy(() -> NOTES.read(f)).hasMessageContaining("is version 2 of kosa8-note, and this kosa8"
                + " reads version 1");
        new RecordFile<>("kosa8-note", 3, "note", Note.class, JSON, RecordFile.Unchecked.READ, REMEDY)
                .write(f, new Note("a", 1));
        assertThatThrownBy(() -> twoOrOne.read(f)).isInstanceOfSatisfying(RecordFile.Damaged.class, e ->
                assertThat(e.problem()).isEqualTo(f + " is version 3 of kosa8-note, and this kosa8 reads versions 1"
                        + " to 2"));
        assertThatThrownBy(() -> new RecordFile<>("kosa8-note", 3, 2, "note", Note.class, JSON,
                RecordFile.Unchecked.READ, REMEDY)).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void aRecordThatDoesNotMakeAValidValueIsDamaged() throws Exception {
        Path f = dir.resolve("note.json");
        ObjectNode body = JSON.createObjectNode().put("name", "").put("size", 1);
        ObjectNode file = JSON.createObjectNode().put("format", "kosa8-note").put("version", 1);
        file.set("note", body);
        file.put("sha256", sha256(JSON.writeValueAsBytes(body)));
        Files.write(f, JSON.writeValueAsBytes(file));
        assertThatThrownBy(() -> NOTES.read(f)).isInstanceOf(RecordFile.Damaged.class)
                .hasMessageContaining(f + " is damaged: it does not hold a valid kosa8-note record")
                .hasMessageContaining("a note needs a name");
    }

    @Test
    void aRecordFromBeforeTheEnvelopeIsReadWithAWarningOrRefusedAsItsKindChooses() throws Exception {
        Path f = dir.resolve("note.json");
        Files.writeString(f, "{\"name\": \"old\", \"size\": 7}");
        List<String> warnings = new ArrayList<>();
        assertThat(NOTES.read(f, warnings::add)).isEqualTo(new Note("old", 7));
        assertThat(warnings).singleElement().asString().contains(f.toString()).contains("no checksum");
        assertThatThrownBy(() -> STRICT.read(f)).isInstanceOf(RecordFile.Damaged.class)
                .hasMessageContaining(f + " is damaged: it has no format name, version or checksum");
        Files.writeString(f, "[1, 2]");
        assertThatThrownBy(() -> NOTES.read(f)).isInstanceOf(RecordFile.Damaged.class)
                .hasMessageContaining("not a JSON object");
    }

    @Test
    void aFileFarLargerThanAnyRecordIsNotRead() throws Exception {
        Path f = dir.resolve("note.json");
        try (var ch = java.nio.channels.FileChannel.open(f, java.nio.file.StandardOpenOption.CREATE_NEW,
                java.nio.file.StandardOpenOption.WRITE)) {
            ch.write(java.nio.ByteBuffer.wrap(new byte[] {'{'}), RecordFile.MAX_BYTES); // sparse
        }
        assertThatThrownBy(() -> NOTES.read(f)).isInstanceOf(RecordFile.Damaged.class)
                .hasMessageContaining("more than any kosa8-note record");
    }

    @Test
    void theEnvelopesOwnFieldsCannotHoldTheRecord() {
        assertThatThrownBy(() -> new RecordFile<>("kosa8-note", 1, "sha256", Note.class, JSON,
                RecordFile.Unchecked.READ, REMEDY)).isInstanceOf(IllegalArgumentException.class);
    }

    static String sha256(byte[] b) throws Exception {
        return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(b));
    }
}
