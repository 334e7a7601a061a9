package dev.kosa8.checkpoint;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.kosa8.host.KosaException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Undo's records alone (no machine): finding, listing and refusing checkpoints. */
class UndoTest {
    private static final String FIRST = "c20261130T081512-a3f9";
    private static final String SECOND = "c20261130T081600-0b1c";

    @TempDir
    Path sandbox;
    private final List<String> log = new ArrayList<>();

    private Undo withTwo() throws Exception {
        CheckpointStore store = new CheckpointStore(sandbox.resolve("checkpoints"), log::add);
        store.save(CheckpointStoreTest.checkpoint(FIRST, "2026-11-30T08:15:12Z"));
        store.save(CheckpointStoreTest.checkpoint(SECOND, "2026-11-30T08:16:00Z"));
        return new Undo(sandbox, "s1234567890a", log::add);
    }

    @Test
    void findsTheLatestAByUniquePrefixAndAnExactId() throws Exception {
        Undo undo = withTwo();
        assertThat(undo.find("").id()).isEqualTo(SECOND);
        assertThat(undo.find(null).id()).isEqualTo(SECOND);
        assertThat(undo.find("c20261130T0815").id()).isEqualTo(FIRST);
        assertThat(undo.find(FIRST).id()).isEqualTo(FIRST);
    }

    @Test
    void anAmbiguousOrMissingCheckpointIsAUsageErrorThatSaysWhatToRun() throws Exception {
        Undo undo = withTwo();
        assertThatThrownBy(() -> undo.find("c2026")).isInstanceOf(KosaException.class)
                .hasMessage("'c2026' matches 2 checkpoints")
                .extracting(e -> ((KosaException) e).suggestion()).isEqualTo("`kosa8 checkpoints s1234567890a` lists them");
        assertThatThrownBy(() -> undo.find("c1999")).hasMessage("sandbox s1234567890a has no checkpoint 'c1999'");
    }

    @Test
    void aSandboxWithoutCheckpointsSaysHowToTakeOne() {
        Undo undo = new Undo(sandbox, "s1234567890a", log::add);
        assertThatThrownBy(() -> undo.find("")).hasMessage("sandbox s1234567890a has no checkpoints")
                .extracting(e -> ((KosaException) e).suggestion())
                .isEqualTo("take one with `kosa8 checkpoint s1234567890a`");
        assertThat(undo.list(true)).isEmpty();
    }

    private static Checkpoint pending(String id, String at) {
        Checkpoint c = CheckpointStoreTest.checkpoint(id, at);
        return new Checkpoint(c.id(), c.created(), c.message(), c.pauseMillis(), 0, c.workspaceEntries(),
                c.workspaceBytesCopied(), c.server(), c.stepMillis(), 0, Checkpoint.State.PENDING, null);
    }

    @Test
    void theLatestIsTheLatestThatDidNotFailAndAFailedOneIsRefusedSayingWhy() throws Exception {
        Undo undo = withTwo();
        CheckpointStore store = new CheckpointStore(sandbox.resolve("checkpoints"), log::add);
        store.save(pending(SECOND, "2026-11-30T08:16:00Z").failed("No space left on device"));
        assertThat(undo.find("").id()).isEqualTo(FIRST);
        assertThat(undo.find(SECOND).state()).isEqualTo(Checkpoint.State.FAILED);
        assertThat(undo.awaitCommit(FIRST).id()).isEqualTo(FIRST);
        assertThatThrownBy(() -> undo.awaitCommit(SECOND)).isInstanceOf(KosaException.class)
                .hasMessage("checkpoint " + SECOND + " of sandbox s1234567890a failed: No space left on device; it"
                        + " cannot be used")
                .extracting(e -> ((KosaException) e).suggestion()).asString()
                .contains("free space").contains("`kosa8 checkpoint rm s1234567890a " + SECOND + "` removes it");
        assertThatThrownBy(() -> undo.forkPoint(SECOND)).hasMessageContaining("No space left on device");
        assertThat(undo.list(false)).extracting(l -> l.checkpoint().state())
                .containsExactly(Checkpoint.State.COMMITTED, Checkpoint.State.FAILED);
    }

    @Test
    void aCheckpointLeftPendingByADeadDaemonIsMarkedFailedAtStartAndNeverUsed() throws Exception {
        Undo undo = withTwo();
        CheckpointStore store = new CheckpointStore(sandbox.resolve("checkpoints"), log::add);
        store.save(pending(SECOND, "2026-11-30T08:16:00Z"));
        // before the daemon's recovery ran: pending, with no commit under way in this daemon
        assertThat(undo.find("").id()).isEqualTo(SECOND);
        assertThatThrownBy(() -> undo.awaitCommit(SECOND)).hasMessageContaining("its commit was cut short");
        assertThat(undo.recover()).containsExactly(SECOND);
        Checkpoint failed = store.find(SECOND).orElseThrow();
        assertThat(failed.state()).isEqualTo(Checkpoint.State.FAILED);
        assertThat(failed.failure()).contains("the daemon stopped");
        assertThat(undo.recover()).as("once").isEmpty();
        assertThat(undo.find("").id()).isEqualTo(FIRST);
    }

    @Test
    void aDamagedRecordAskedForByItsIdNamesItsFileAndLeavesTheOthersUsable() throws Exception {
        Undo undo = withTwo();
        Path damaged = sandbox.resolve("checkpoints").resolve(FIRST + ".json");
        Files.writeString(damaged, Files.readString(damaged).substring(0, 40));
        assertThatThrownBy(() -> undo.find(FIRST)).isInstanceOf(KosaException.class)
                .hasMessageContaining("checkpoint " + FIRST + " of sandbox s1234567890a cannot be used")
                .hasMessageContaining(damaged.toString());
        assertThat(undo.find("").id()).isEqualTo(SECOND);
        assertThat(undo.list(false)).extracting(l -> l.checkpoint().id()).containsExactly(SECOND);
    }
}
