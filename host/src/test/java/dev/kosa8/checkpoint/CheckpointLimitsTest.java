package dev.kosa8.checkpoint;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.kosa8.host.KosaException;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * {@link CheckpointLimits}: one more checkpoint within the count and the bytes; at a limit, the oldest thinnable
 * (a turn checkpoint) to remove first, else a refusal naming the oldest.
 */
class CheckpointLimitsTest {
    static final String C1 = "c20261204T100000-0a1b";
    static final String C2 = "c20261204T100500-2c3d";
    static final String C3 = "c20261204T101000-4e5f";
    static Checkpoint checkpoint(String id) {
        return new Checkpoint(id, Instant.parse("2026-12-04T10:00:00Z"), "", 100, 1 << 20, 0, 0, null, Map.of(), 0);
    }

    @Test
    void aCheckpointWithinTheLimitsIsAdmittedAndNothingRemoved() {
        CheckpointLimits limits = CheckpointLimits.refusing(3, 1L << 30);
        assertThat(limits.admit("abc123abc123", List.of(checkpoint(C1), checkpoint(C2)), 100L << 20)).isEmpty();
        assertThat(CheckpointLimits.NONE.admit("abc123abc123", List.of(checkpoint(C1)), Long.MAX_VALUE)).isEmpty();
    }

    @Test
    void oneCheckpointTooManyIsRefusedNamingTheOldestToRemove() {
        CheckpointLimits limits = CheckpointLimits.refusing(2, 0);
        assertThatThrownBy(() -> limits.admit("abc123abc123", List.of(checkpoint(C1), checkpoint(C2)), 0))
                .isInstanceOfSatisfying(KosaException.class, e -> {
                    assertThat(e.kind()).isEqualTo(KosaException.Kind.LIMIT);
                    assertThat(e.exitCode()).isEqualTo(8);
                    assertThat(e.getMessage()).contains("has 2 checkpoints, the most it keeps (--max-checkpoints 2)");
                    assertThat(e.suggestion()).contains("kosa8 checkpoint rm abc123abc123 " + C1);
                });
    }

    @Test
    void checkpointsHoldingTheirByteLimitAdmitNoMore() {
        CheckpointLimits limits = CheckpointLimits.refusing(64, 1L << 30);
        assertThatThrownBy(() -> limits.admit("abc123abc123", List.of(checkpoint(C1)), 1L << 30))
                .isInstanceOf(KosaException.class).hasMessageContaining("hold 1024 MiB")
                .hasMessageContaining("--checkpoint-bytes 1024 MiB");
    }
    @Test
    void atTheCountTheOldestTurnCheckpointIsToGoNeverOneTheUserTook() {
        CheckpointLimits limits = new CheckpointLimits(3, 0, Set.of(C2, C3)); // C1 the user's
        List<Checkpoint> three = List.of(checkpoint(C1), checkpoint(C2), checkpoint(C3));
        assertThat(limits.admit("abc123abc123", three, 0)).map(Checkpoint::id).contains(C2);
        assertThat(limits.admit("abc123abc123", List.of(checkpoint(C1), checkpoint(C3)), 0)).isEmpty();
        // only the user's left to go: refused, as if nothing were thinnable
        CheckpointLimits one = new CheckpointLimits(1, 0, Set.of(C2));
        assertThatThrownBy(() -> one.admit("abc123abc123", List.of(checkpoint(C1)), 0))
                .isInstanceOf(KosaException.class).hasMessageContaining("--max-checkpoints 1");
    }

    @Test
    void atTheBytesTheOldestTurnCheckpointIsToGoUntilTheyFit() {
        CheckpointLimits limits = new CheckpointLimits(64, 1L << 30, Set.of(C1, C3));
        assertThat(limits.admit("abc123abc123", List.of(checkpoint(C1), checkpoint(C2), checkpoint(C3)), 1L << 30))
                .map(Checkpoint::id).contains(C1);
        assertThat(limits.admit("abc123abc123", List.of(checkpoint(C2), checkpoint(C3)), 1L << 30))
                .map(Checkpoint::id).contains(C3);
        assertThatThrownBy(() -> limits.admit("abc123abc123", List.of(checkpoint(C2)), 1L << 30))
                .isInstanceOf(KosaException.class).hasMessageContaining("--checkpoint-bytes 1024 MiB");
        assertThat(limits.admit("abc123abc123", List.of(checkpoint(C2)), (1L << 30) - 1)).isEmpty();
    }
}
