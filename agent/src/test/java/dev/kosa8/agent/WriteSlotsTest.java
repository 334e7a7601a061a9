package dev.kosa8.agent;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/** The write window's slots as the relay lends them: one per Twrite's tag, back when that tag is answered. */
class WriteSlotsTest {
    private final WriteSlots slots = new WriteSlots(-1, 3);

    @Test
    void eachTagGetsAFreeSlotUntilNoneIsLeft() {
        assertThat(slots.take(10)).isZero();
        assertThat(slots.take(11)).isEqualTo(1);
        assertThat(slots.take(12)).isEqualTo(2);
        assertThat(slots.take(13)).as("all lent: the Twrite goes through the port").isEqualTo(-1);
        assertThat(slots.lentOut()).isEqualTo(3);
    }

    @Test
    void aSlotIsFreeAgainOnceItsTagIsAnsweredAndOnlyThen() {
        slots.take(10);
        slots.take(11);
        slots.answered(99); // an answer to a request that had no slot
        assertThat(slots.lentOut()).isEqualTo(2);
        slots.answered(10);
        assertThat(slots.lentOut()).isEqualTo(1);
        assertThat(slots.take(12)).as("slot 0 again").isZero();
        slots.answered(10); // a second answer under the same tag frees nothing
        assertThat(slots.lentOut()).isEqualTo(2);
    }

    @Test
    void aTagHoldingASlotGetsNoSecondOne() {
        assertThat(slots.take(7)).isZero();
        assertThat(slots.take(7)).isEqualTo(-1);
        assertThat(slots.lentOut()).isEqualTo(1);
    }

    @Test
    void aNewMountFreesEverySlot() {
        slots.take(1);
        slots.take(2);
        slots.take(0xffff);
        slots.reset();
        assertThat(slots.lentOut()).isZero();
        assertThat(slots.take(2)).isZero();
        slots.answered(1);
        assertThat(slots.lentOut()).as("an old mount's answer frees nothing of the new one's").isEqualTo(1);
    }
}
