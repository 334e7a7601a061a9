package dev.kosa8.checkpoint;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.kosa8.host.RecordFile;
import dev.kosa8.workspace.WorkspaceSnapshot;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class CheckpointStoreTest {
    private static final String FIRST = "c20261130T081512-3fa2";
    private static final String SECOND = "c20261130T081600-0b1c";
    private static final String THIRD = "c20261130T081700-77e0";

    @TempDir
    Path dir;
    private final List<String> log = new ArrayList<>();

    private CheckpointStore store() {
        return new CheckpointStore(dir, log::add);
    }

    static Checkpoint checkpoint(String id, String at) {
        // a path of bytes, one char each, as the 9p server keeps them: "caf\xc3\xa9"
        WorkspaceSnapshot server = new WorkspaceSnapshot(WorkspaceSnapshot.FORMAT, 65536,
                List.of(new WorkspaceSnapshot.FidState(1, "/caf\u00c3\u00a9", false, (byte) 0x80, 0)), true, true);
        return new Checkpoint(id, Instant.parse(at), "before " + id, 12, 4096, 3, 100, server,
                Map.of("freeze", 3L), 40);
    }

    private Path file(String id) {
        return dir.resolve(id + ".json");
    }

    private CheckpointStore withThree() throws Exception {
        CheckpointStore store = store();
        store.save(checkpoint(FIRST, "2026-11-30T08:15:12Z"));
        store.save(checkpoint(SECOND, "2026-11-30T08:16:00Z"));
        store.save(checkpoint(THIRD, "2026-11-30T08:17:00Z"));
        return store;
    }

    @Test
    void commitsAndListsCheckpointsWithTheirChecksum() throws Exception {
        CheckpointStore store = withThree();
        assertThat(store.list()).containsExactly(checkpoint(FIRST, "2026-11-30T08:15:12Z"),
                checkpoint(SECOND, "2026-11-30T08:16:00Z"), checkpoint(THIRD, "2026-11-30T08:17:00Z"));
        assertThat(store.find(SECOND)).contains(checkpoint(SECOND, "2026-11-30T08:16:00Z"));
        var json = CheckpointStore.JSON.readTree(file(FIRST).toFile());
        assertThat(json.path("format").asText()).isEqualTo("kosa8-checkpoint");
        assertThat(json.path("version").asInt()).isEqualTo(2);
        assertThat(json.path("checkpoint").path("state").asText()).isEqualTo("committed");
        assertThat(json.path("sha256").asText()).hasSize(64);
        assertThat(json.path("checkpoint").path("id").asText()).isEqualTo(FIRST);
        try (var files = Files.list(dir)) {
            assertThat(files.map(f -> f.getFileName().toString()))
                    .containsExactlyInAnyOrder(FIRST + ".json", SECOND + ".json", THIRD + ".json");
        }
        assertThat(log).isEmpty();
    }

    @Test
    void aTruncatedRecordIsLeftOutOfTheListNamingTheFileAndRefusedWhenUsed() throws Exception {
        CheckpointStore store = withThree();
        String whole = Files.readString(file(SECOND));
        Files.writeString(file(SECOND), whole.substring(0, whole.length() - 30));
        assertThat(store.list()).extracting(Checkpoint::id).containsExactly(FIRST, THIRD);
        assertThat(log).singleElement().asString().contains(file(SECOND).toString()).contains("is damaged")
                .contains("not whole JSON").contains("remove the file to forget it");
        assertThatThrownBy(() -> store.find(SECOND)).isInstanceOf(RecordFile.Damaged.class)
                .hasMessageContaining(file(SECOND) + " is damaged: it is not whole JSON")
                .hasMessageContaining("that checkpoint cannot be used (the others can)");
        assertThat(store.find(THIRD)).isPresent();
    }

    @Test
    void aRecordWithABadChecksumIsLeftOutAndRefused() throws Exception {
        CheckpointStore store = withThree();
        Files.writeString(file(FIRST), Files.readString(file(FIRST)).replace("\"pauseMillis\" : 12",
                "\"pauseMillis\" : 13"));
        assertThat(store.list()).extracting(Checkpoint::id).containsExactly(SECOND, THIRD);
        assertThat(log).singleElement().asString().contains(file(FIRST).toString()).contains("checksum mismatch");
        assertThatThrownBy(() -> store.find(FIRST)).isInstanceOf(RecordFile.Damaged.class)
                .hasMessageContaining(file(FIRST) + " is damaged: checksum mismatch");
    }

    @Test
    void aRecordOfAnotherFormatOrVersionIsLeftOutAndRefused() throws Exception {
        CheckpointStore store = withThree();
        ObjectNode other = (ObjectNode) CheckpointStore.JSON.readTree(file(FIRST).toFile());
        other.put("format", "kosa8-sandbox");
        Files.write(file(FIRST), CheckpointStore.JSON.writeValueAsBytes(other));
        ObjectNode newer = (ObjectNode) CheckpointStore.JSON.readTree(file(THIRD).toFile());
        newer.put("version", 3);
        Files.write(file(THIRD), CheckpointStore.JSON.writeValueAsBytes(newer));

        assertThat(store.list()).extracting(Checkpoint::id).containsExactly(SECOND);
        assertThat(log).hasSize(2).anySatisfy(l -> assertThat(l).contains(file(FIRST).toString())
                .contains("not a kosa8-checkpoint file")).anySatisfy(l -> assertThat(l).contains(file(THIRD)
                .toString()).contains("version 3").contains("written by another kosa8"));
        assertThatThrownBy(() -> store.find(FIRST)).isInstanceOf(RecordFile.Damaged.class)
                .hasMessageContaining(file(FIRST).toString()).hasMessageContaining("its format is \"kosa8-sandbox\"");
        assertThatThrownBy(() -> store.find(THIRD)).isInstanceOf(RecordFile.Damaged.class)
                .hasMessageContaining(file(THIRD) + " is version 3 of kosa8-checkpoint, and this kosa8 reads"
                        + " versions 1 to 2");
    }

    @Test
    void aDamagedRecordStillCountsAsCommittedSoWhatItNamesIsNotSweptAway() throws Exception {
        CheckpointStore store = withThree();
        Files.writeString(file(SECOND), "{\"format\": \"kosa8-checkpoint\", \"vers");
        assertThat(store.ids()).containsExactlyInAnyOrder(FIRST, SECOND, THIRD);
        assertThat(log).as("ids() reads no record").isEmpty();
        store.forget(SECOND);
        assertThat(store.ids()).containsExactlyInAnyOrder(FIRST, THIRD);
        assertThat(store.list()).extracting(Checkpoint::id).containsExactly(FIRST, THIRD);
    }

    @Test
    void aRecordThatNamesAnotherCheckpointIsDamaged() throws Exception {
        CheckpointStore store = withThree();
        Files.copy(file(FIRST), file(SECOND), java.nio.file.StandardCopyOption.REPLACE_EXISTING);
        assertThat(store.list()).extracting(Checkpoint::id).containsExactly(FIRST, THIRD);
        assertThatThrownBy(() -> store.find(SECOND)).isInstanceOf(RecordFile.Damaged.class)
                .hasMessageContaining(file(SECOND) + " is damaged: it holds checkpoint " + FIRST + ", not " + SECOND);
    }

    @Test
    void aVersionOneRecordIsACommittedCheckpoint() throws Exception {
        CheckpointStore store = withThree();
        // as kosa8 wrote checkpoint records until pending ones came: version 1, no state
        ObjectNode record = (ObjectNode) CheckpointStore.JSON.valueToTree(checkpoint(SECOND, "2026-11-30T08:16:00Z"));
        record.remove("state");
        record.remove("failure");
        new RecordFile<>("kosa8-checkpoint", 1, "checkpoint", ObjectNode.class, CheckpointStore.JSON,
                RecordFile.Unchecked.READ, "").write(file(SECOND), record);
        assertThat(CheckpointStore.JSON.readTree(file(SECOND).toFile()).path("version").asInt()).isEqualTo(1);
        assertThat(store.find(SECOND)).contains(checkpoint(SECOND, "2026-11-30T08:16:00Z"));
        assertThat(store.find(SECOND).orElseThrow().state()).isEqualTo(Checkpoint.State.COMMITTED);
        assertThat(log).isEmpty();
    }

    @Test
    void pendingAndFailedCheckpointsAreListedWithTheirStateAndAFailedOneKeepsNothing() throws Exception {
        CheckpointStore store = withThree();
        Checkpoint pending = new Checkpoint(SECOND, Instant.parse("2026-11-30T08:16:00Z"), "m", 12, 0, 3, 100, null,
                Map.of("freeze", 3L), 0, Checkpoint.State.PENDING, null);
        store.save(pending);
        assertThat(store.find(SECOND)).contains(pending);
        Checkpoint failed = pending.failed("No space left on device");
        store.save(failed);
        assertThat(store.find(SECOND).orElseThrow()).satisfies(c -> {
            assertThat(c.state()).isEqualTo(Checkpoint.State.FAILED);
            assertThat(c.failure()).isEqualTo("No space left on device");
        });
        assertThat(CheckpointStore.JSON.readTree(file(SECOND).toFile()).path("checkpoint").path("state").asText())
                .isEqualTo("failed");
        assertThat(store.list()).extracting(Checkpoint::id).containsExactly(FIRST, SECOND, THIRD);
        assertThat(store.ids()).containsExactlyInAnyOrder(FIRST, SECOND, THIRD);
        assertThat(store.keeping()).as("what a failed one named is not kept").containsExactlyInAnyOrder(FIRST, THIRD);
        Files.writeString(file(THIRD), "{\"format\": \"kosa8-checkpoint\", \"vers");
        assertThat(store.keeping()).as("a damaged one's parts are").containsExactlyInAnyOrder(FIRST, THIRD);
    }

    @Test
    void aRecordWrittenBeforeTheChecksumIsReadWithOneWarning() throws Exception {
        CheckpointStore store = withThree();
        Checkpoint old = checkpoint("c20261101T000000-0000", "2026-11-01T00:00:00Z");
        Path f = file(old.id());
        // as kosa8 wrote checkpoint records until 2026-12: the record alone
        Files.write(f, CheckpointStore.JSON.writerWithDefaultPrettyPrinter().writeValueAsBytes(old));

        assertThat(store.list()).first().isEqualTo(old);
        assertThat(store.list()).hasSize(4);
        assertThat(store.find(old.id())).contains(old);
        assertThat(log).as("said once, not at every listing").singleElement().asString().contains(f.toString())
                .contains("no checksum");
    }

    @Test
    void filesThatAreNoCheckpointRecordsAreNotTakenForOne() throws Exception {
        CheckpointStore store = withThree();
        Files.writeString(dir.resolve(".tmp-" + FIRST + ".json-0123456789abcdef"), "{\"format\":");
        Files.writeString(dir.resolve(FIRST + ".json.tmp"), "{\"format\":");
        Files.writeString(dir.resolve("notes.json"), "{}");
        assertThat(store.list()).extracting(Checkpoint::id).containsExactly(FIRST, SECOND, THIRD);
        assertThat(store.ids()).containsExactlyInAnyOrder(FIRST, SECOND, THIRD);
        assertThat(store.find("notes")).isEmpty();
        assertThat(log).anySatisfy(l -> assertThat(l).contains(dir.resolve("notes.json").toString())
                .contains("not a checkpoint record"));
    }

    @Test
    void aSuspensionRecordIsCheckedAndOneFromBeforeTheChecksumStillResumes() throws Exception {
        Suspension s = new Suspension(dir);
        s.prepare();
        Files.writeString(s.stateTemp(), "the machine");
        Suspension.Record r = new Suspension.Record(Instant.parse("2026-11-30T08:15:12Z"),
                checkpoint(FIRST, "2026-11-30T08:15:12Z").server());
        s.commit(r);
        assertThat(s.exists()).isTrue();
        assertThat(s.read()).isEqualTo(r);
        Path record = dir.resolve("suspended/suspended.json");
        assertThat(CheckpointStore.JSON.readTree(record.toFile()).path("format").asText()).isEqualTo("kosa8-suspension");
        try (var files = Files.list(record.getParent())) {
            assertThat(files.map(f -> f.getFileName().toString()))
                    .containsExactlyInAnyOrder("machine.vmstate", "suspended.json");
        }

        Files.writeString(record, Files.readString(record).replace("65536", "65537"));
        assertThatThrownBy(s::read).isInstanceOf(RecordFile.Damaged.class)
                .hasMessageContaining(record + " is damaged: checksum mismatch")
                .hasMessageContaining("the sandbox boots afresh from its disk");

        Files.write(record, CheckpointStore.JSON.writeValueAsBytes(r)); // as kosa8 wrote it until 2026-12
        assertThat(s.read()).isEqualTo(r);
    }
}
