package dev.kosa8.daemon;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kosa8.daemon.HeapTrim.Look;
import org.junit.jupiter.api.Test;

class HeapTrimTest {
    private static final long MIB = 1 << 20;

    @Test
    void aQuietDaemonWithAGrownHeapIsTrimmed() {
        // the soak's daemon with every sandbox gone: 16 MiB in use of 378 committed, no collection for a minute
        assertThat(HeapTrim.worthIt(new Look(40, 378 * MIB, 16 * MIB), new Look(40, 378 * MIB, 16 * MIB))).isTrue();
    }

    @Test
    void aDaemonThatCollectedInThePeriodIsBusyAndLeftAlone() {
        assertThat(HeapTrim.worthIt(new Look(40, 378 * MIB, 16 * MIB), new Look(41, 378 * MIB, 16 * MIB))).isFalse();
    }

    @Test
    void whatAFullCollectionLeavesIsNotTrimmedAgain() {
        // after a collection the serial collector keeps at most 70 % free (MaxHeapFreeRatio): 2.33 times the use
        for (long used : new long[] {4, 16, 27, 60, 200, 1000}) {
            long committed = Math.max(16, (long) Math.ceil(used / 0.3)) * MIB;
            Look after = new Look(7, committed, used * MIB);
            assertThat(HeapTrim.worthIt(after, after)).as(used + " MiB in use").isFalse();
        }
    }

    @Test
    void lessThanTheSlackFreeIsNotWorthACollection() {
        assertThat(HeapTrim.worthIt(new Look(3, 60 * MIB, 2 * MIB), new Look(3, 60 * MIB, 2 * MIB))).isFalse();
        assertThat(HeapTrim.worthIt(new Look(3, 70 * MIB, 2 * MIB), new Look(3, 70 * MIB, 2 * MIB))).isTrue();
    }

    @Test
    void aLargeHeapMostlyInUseIsNotTrimmed() {
        // 300 MiB free, but less than three times the 200 in use: a collection would give little back
        assertThat(HeapTrim.worthIt(new Look(3, 500 * MIB, 200 * MIB), new Look(3, 500 * MIB, 200 * MIB))).isFalse();
    }

    @Test
    void theLookReadsThisJvm() {
        Look l = Look.now();
        assertThat(l.committed()).isGreaterThanOrEqualTo(l.used()).isPositive();
        assertThat(l.collections()).isNotNegative();
    }
}
