package dev.kosa8.daemon;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kosa8.daemon.HeapTrim.Look;
import org.junit.jupiter.api.Test;

/** {@link HeapTrim}'s decision, on the old generation's figures (the part a full collection sizes). */
class HeapTrimTest {
    private static final long MIB = 1 << 20;
    private static final long NONE = -1;

    @Test
    void aQuietDaemonWithAGrownOldGenerationIsTrimmed() {
        // a soak's daemon with every sandbox gone: 100 MiB of old generation committed, 18 in use, no collection
        // for a minute
        Look l = new Look(40, 100 * MIB, 18 * MIB);
        assertThat(HeapTrim.worthIt(l, l, NONE)).isTrue();
    }

    @Test
    void aDaemonThatCollectedInThePeriodIsBusyAndLeftAlone() {
        assertThat(HeapTrim.worthIt(new Look(40, 100 * MIB, 18 * MIB), new Look(41, 100 * MIB, 18 * MIB), NONE))
                .isFalse();
    }

    @Test
    void whatAFullCollectionLeavesIsNotTrimmedAgain() {
        // after a full collection the serial collector keeps at most 70 % of the old generation free
        // (MaxHeapFreeRatio): 2.33 times its use, under the two and a half
        for (long used : new long[] {4, 17, 27, 60, 200, 1000}) {
            long committed = (long) Math.ceil(used / 0.3) * MIB;
            Look after = new Look(7, committed, used * MIB);
            assertThat(HeapTrim.worthIt(after, after, NONE)).as(used + " MiB in use").isFalse();
        }
    }

    @Test
    void noSecondTrimWithoutACollectionBetween() {
        // a heap that cannot shrink (a foreground daemon in the CLI's JVM, its floor 256 MiB of old generation):
        // asked once, then not again until something has collected since
        Look floor = new Look(12, 256 * MIB, 18 * MIB);
        assertThat(HeapTrim.worthIt(floor, floor, NONE)).isTrue();
        assertThat(HeapTrim.worthIt(floor, floor, 12)).isFalse();
        Look later = new Look(13, 256 * MIB, 18 * MIB);
        assertThat(HeapTrim.worthIt(later, later, 12)).isTrue();
    }

    @Test
    void lessThanTheSlackFreeIsNotWorthACollection() {
        assertThat(HeapTrim.worthIt(new Look(3, 60 * MIB, 2 * MIB), new Look(3, 60 * MIB, 2 * MIB), NONE)).isFalse();
        assertThat(HeapTrim.worthIt(new Look(3, 70 * MIB, 2 * MIB), new Look(3, 70 * MIB, 2 * MIB), NONE)).isTrue();
    }

    @Test
    void aLargeOldGenerationMostlyInUseIsNotTrimmed() {
        // 300 MiB free, but less than two and a half times the 200 in use: a collection would give little back
        assertThat(HeapTrim.worthIt(new Look(3, 500 * MIB, 200 * MIB), new Look(3, 500 * MIB, 200 * MIB), NONE))
                .isFalse();
        assertThat(HeapTrim.worthIt(new Look(3, 720 * MIB, 200 * MIB), new Look(3, 720 * MIB, 200 * MIB), NONE))
                .isTrue();
    }

    @Test
    void theLookReadsThisJvm() {
        Look l = Look.now();
        assertThat(l.committed()).isGreaterThanOrEqualTo(l.used()).isPositive();
        assertThat(l.collections()).isNotNegative();
    }
}
