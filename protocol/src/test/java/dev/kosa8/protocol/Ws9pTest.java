package dev.kosa8.protocol;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** kosa8's 9p messages as {@link Ws9p} documents them, byte for byte. */
class Ws9pTest {
    @Test
    void eachMessageHasTheSizeItsLayoutSays() {
        assertThat(Ws9p.TQUIET_SIZE).isEqualTo(7);
        assertThat(Ws9p.RQUIET_SIZE).isEqualTo(7);
        assertThat(Ws9p.TCLUNKQ_SIZE).as("a Tclunk's size: only its type changes").isEqualTo(11);
        assertThat(Ws9p.TWINDOW_SIZE).isEqualTo(7);
        assertThat(Ws9p.RREADW_SIZE).isEqualTo(19);
        assertThat(Ws9p.TRETURN_SIZE).isEqualTo(15);
        assertThat(Ws9p.TWRITE_HEADER).as("size[4] type[1] tag[2] fid[4] offset[8] count[4]").isEqualTo(23);
        assertThat(Ws9p.TWRITEW_SIZE).isEqualTo(27);
    }

    @Test
    void eachFieldEndsWhereTheNextStartsAndTheLastAtTheEnd() {
        assertThat(List.of(Ws9p.RREADW_COUNT, Ws9p.RREADW_SLOT, Ws9p.RREADW_SERIAL, Ws9p.RREADW_SIZE))
                .containsExactly(Ws9p.HEADER, Ws9p.HEADER + 4, Ws9p.HEADER + 8, Ws9p.HEADER + 12);
        assertThat(List.of(Ws9p.TRETURN_SLOT, Ws9p.TRETURN_SERIAL, Ws9p.TRETURN_SIZE))
                .containsExactly(Ws9p.HEADER, Ws9p.HEADER + 4, Ws9p.HEADER + 8);
        assertThat(List.of(Ws9p.TWRITEW_COUNT, Ws9p.TWRITEW_SLOT, Ws9p.TWRITEW_SIZE))
                .containsExactly(19, 23, 27);
    }

    @Test
    void theTypesAreDistinctAndOutside9p2000LsRange() {
        List<Integer> types = List.of(Ws9p.TCLUNKQ, Ws9p.TQUIET, Ws9p.RQUIET, Ws9p.TWINDOW, Ws9p.RREADW,
                Ws9p.TRETURN, Ws9p.TWRITEW);
        assertThat(Set.copyOf(types)).hasSameSizeAs(types);
        assertThat(types).as("9P2000.L's types end at Rwstat, 127; a type is one byte")
                .allSatisfy(t -> assertThat(t).isBetween(128, 255));
    }

    @Test
    void aSlotHoldsTheDataOfTheLargestMessageLinuxSends() {
        assertThat(Ws9p.MSIZE - Ws9p.SLOT_SIZE).as("Linux's P9_IOHDRSZ").isEqualTo(24);
    }

    @Test
    void theSerialsFitVirtioBlksTwentyCharacters() {
        assertThat(Ws9p.READ_WINDOW_SERIAL).hasSizeLessThanOrEqualTo(20).isNotEqualTo(Ws9p.WRITE_WINDOW_SERIAL);
        assertThat(Ws9p.WRITE_WINDOW_SERIAL).hasSizeLessThanOrEqualTo(20);
    }
}
