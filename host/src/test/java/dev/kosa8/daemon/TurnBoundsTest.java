package dev.kosa8.daemon;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;
import net.jqwik.api.constraints.Size;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The bounds on what a guest's asks for turn checkpoints may cost (docs/agents.md, "Bounds"). */
class TurnBoundsTest {
    private static final Instant T0 = Instant.parse("2026-12-04T20:00:00Z");

    private static List<Turn> turns(List<Integer> gapsSeconds, long bytesEach) {
        List<Turn> out = new ArrayList<>();
        Instant at = T0;
        int n = 1;
        for (int gap : gapsSeconds) {
            at = at.plusSeconds(gap);
            out.add(new Turn(n, "c" + n, "Bash", n, at, bytesEach));
            n++;
        }
        return out;
    }

    @Property(tries = 500)
    void whatStaysIsWithinTheBoundsAndTheNewestAlwaysStay(
            @ForAll @Size(min = 1, max = 80) List<@IntRange(min = 0, max = 3600) Integer> gaps,
            @ForAll @IntRange(min = 1, max = 30) int maxKept, @ForAll @IntRange(min = 1, max = 100) int bytesEach,
            @ForAll @IntRange(min = 1, max = 3000) int maxBytes) {
        TurnBounds b = new TurnBounds(5, Duration.ofSeconds(10), maxKept, maxBytes);
        List<Turn> all = turns(gaps, bytesEach);
        List<Turn> gone = b.thin(all);
        List<Turn> kept = new ArrayList<>(all);
        kept.removeAll(gone);
        assertThat(all).containsAll(gone);
        assertThat(new HashSet<>(gone)).hasSameSizeAs(gone);
        // within the count and the bytes, unless only one is left (the newest is never thinned)
        assertThat(kept.size() <= maxKept && kept.stream().mapToLong(Turn::bytes).sum() <= maxBytes
                || kept.size() == 1).isTrue();
        assertThat(kept).contains(all.getLast());
        // nothing thinned that did not have to be: putting back any one breaks a bound
        if (!gone.isEmpty()) {
            assertThat(kept.size() + 1 > maxKept || (kept.size() + 1L) * bytesEach > maxBytes).isTrue();
        }
        int newest = Math.min(TurnBounds.KEEP_NEWEST, kept.size());
        assertThat(kept.subList(kept.size() - newest, kept.size()))
                .isEqualTo(all.subList(all.size() - newest, all.size()));
    }

    @Test
    void historyGrowsSparserWithAgeNotCutOff() {
        // 12 turns, every 10 s, then 3 more: of the old ones, thinning keeps a spread, the oldest included
        List<Integer> gaps = new ArrayList<>(java.util.Collections.nCopies(15, 10));
        TurnBounds b = new TurnBounds(5, Duration.ofSeconds(10), 10, Long.MAX_VALUE);
        List<Turn> kept = new ArrayList<>(turns(gaps, 1));
        kept.removeAll(b.thin(kept));
        assertThat(kept).hasSize(10);
        assertThat(kept.getFirst().turn()).isEqualTo(1);
        assertThat(kept.getLast().turn()).isEqualTo(15);
    }

    @Test
    void theRateAllowsABurstThenOnePerRefill() {
        TurnBounds b = new TurnBounds(3, Duration.ofSeconds(10), 50, 1L << 30);
        TurnRate rate = new TurnRate(b, 0);
        long s = 1_000_000_000L;
        assertThat(rate.take(0)).isZero();
        assertThat(rate.take(0)).isZero();
        assertThat(rate.take(0)).isZero();
        assertThat(rate.take(0)).isEqualTo(10_000);
        assertThat(rate.take(4 * s)).isEqualTo(6_000);
        assertThat(rate.take(10 * s)).isZero();
        assertThat(rate.take(10 * s)).isPositive();
        // a long pause refills the burst, never more
        assertThat(rate.take(1000 * s)).isZero();
        assertThat(rate.take(1000 * s)).isZero();
        assertThat(rate.take(1000 * s)).isZero();
        assertThat(rate.take(1000 * s)).isPositive();
    }

    @Test
    void theTestSettingOverridesOnlyWhatItNames() {
        assertThat(TurnBounds.fromTestSetting(null)).isEqualTo(TurnBounds.DEFAULT);
        TurnBounds b = TurnBounds.fromTestSetting("burst=3, kept=2");
        assertThat(b).isEqualTo(new TurnBounds(3, TurnBounds.DEFAULT.refill(), 2, TurnBounds.DEFAULT.maxBytes()));
        assertThatThrownBy(() -> TurnBounds.fromTestSetting("speed=1")).hasMessageContaining("unknown key");
        assertThatThrownBy(() -> TurnBounds.fromTestSetting("kept=0")).hasMessageContaining("positive");
    }

    @Test
    void theLogNumbersTurnsOnceAndForgetsRemovedCheckpoints(@TempDir Path dir) {
        TurnLog log = new TurnLog(dir);
        assertThat(log.next()).isEqualTo(1);
        log.add(new Turn(1, "c1", "Bash", 7, T0, 10));
        log.add(new Turn(2, "c2", "Edit a.c", 8, T0.plusSeconds(1), 10));
        log.remove("c1");
        assertThat(log.next()).isEqualTo(3);
        assertThat(new TurnLog(dir).byTurn(2)).get().extracting(Turn::checkpoint, Turn::ask, Turn::created)
                .containsExactly("c2", 8L, T0.plusSeconds(1));
        assertThat(log.byTurn(1)).isEmpty();
        // a checkpoint the user removed leaves its turn unlisted
        assertThat(log.turns(Set.of("c9"))).isEmpty();
    }
}
