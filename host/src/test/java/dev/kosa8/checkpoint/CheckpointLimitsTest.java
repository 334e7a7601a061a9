package dev.kosa8.checkpoint;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.kosa8.host.KosaException;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** {@link CheckpointLimits}: one more checkpoint within the count and the bytes, else a refusal naming the oldest. */
class CheckpointLimitsTest {
    static final String C1 = "c20261204T100000-0a1b";
    static final String C2 = "c20261204T100500-2c3d";
    static Checkpoint checkpoint(String id) {
        return new Checkpoint(id, Instant.parse("2026-12-04T10:00:00Z"), "", 100, 1 << 20, 0, 0, null, Map.of(), 0);
    }

    @Test
    void aCheckpointWithinTheLimitsIsAdmittedAndNothingRemoved() {
        CheckpointLimits limits = new CheckpointLimits(3, 1L << 30, CheckpointLimits.AtLimit.REFUSE);
        assertThat(limits.admit("abc123abc123", List.of(checkpoint(C1), checkpoint(C2)), 100L << 20)).isEmpty();
        assertThat(CheckpointLimits.NONE.admit("abc123abc123", List.of(checkpoint(C1)), Long.MAX_VALUE)).isEmpty();
    }

    @Test
    void oneCheckpointTooManyIsRefusedNamingTheOldestToRemove() {
        CheckpointLimits limits = new CheckpointLimits(2, 0, CheckpointLimits.AtLimit.REFUSE);
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
        CheckpointLimits limits = new CheckpointLimits(64, 1L << 30, CheckpointLimits.AtLimit.REFUSE);
        assertThatThrownBy(() -> limits.admit("abc123abc123", List.of(checkpoint(C1)), 1L << 30))
                .isInstanceOf(KosaException.class).hasMessageContaining("hold 1024 MiB")
                .hasMessageContaining("--checkpoint-bytes 1024 MiB");
    }
}
