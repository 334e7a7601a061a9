package dev.kosa8.agent;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kosa8.protocol.Ws9p;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** How the relay splits the byte streams of its pipes and port into 9p messages. */
class P9FramesTest {
    private final Arena arena = Arena.ofConfined();
    private final MemorySegment buf = arena.allocate(256);

    @AfterEach
    void close() {
        arena.close();
    }

    /** Writes a message of {@code size} bytes at {@code off}; returns where the next one goes. */
    private long message(long off, int size, int type, int tag) {
        P9Frames.head(buf.asSlice(off), size, type, tag);
        return off + size;
    }

    @Test
    void onlyWholeMessagesAreReadyAndAPartOfTheNextWaits() {
        long end = message(0, 11, P9Frames.RREAD, 1);
        end = message(end, 20, P9Frames.RREAD, 2);
        assertThat(P9Frames.wholeMessages(buf, end, 256)).isEqualTo(31);
        assertThat(P9Frames.wholeMessages(buf, end - 1, 256)).as("the second not all in").isEqualTo(11);
        assertThat(P9Frames.wholeMessages(buf, 13, 256)).as("two bytes of the second's size").isEqualTo(11);
    }

    @Test
    void aSizeThatCannotBe9pPassesEverythingOnAsItIs() {
        long end = message(0, 11, P9Frames.RREAD, 1);
        message(end, 3, P9Frames.RREAD, 2); // below a header
        assertThat(P9Frames.wholeMessages(buf, end + 10, 256)).isEqualTo(end + 10);
        message(end, 257, P9Frames.RREAD, 2); // beyond the buffer
        assertThat(P9Frames.wholeMessages(buf, end + 10, 256)).isEqualTo(end + 10);
    }

    @Test
    void theNewMountsRversionIsFoundAfterTheOldMountsAnswers() {
        long end = message(0, 11, P9Frames.RREAD, 1);
        end = message(end, Ws9p.HEADER, P9Frames.RVERSION, 3); // an Rversion under a tag is no mount's start
        long version = end;
        end = message(end, 19, P9Frames.RVERSION, Ws9p.NOTAG);
        assertThat(P9Frames.firstRversion(buf, end)).isEqualTo(version);
        assertThat(P9Frames.firstRversion(buf, version)).as("not in yet").isEqualTo(-1);
    }

    @Test
    void noRversionIsFoundPastBytesThatAreNot9p() {
        message(0, 2, P9Frames.RREAD, 1);
        long end = message(8, 19, P9Frames.RVERSION, Ws9p.NOTAG);
        assertThat(P9Frames.firstRversion(buf, end)).isEqualTo(-1);
    }

    @Test
    void theHeaderReadsBackAsWritten() {
        message(5, 300, Ws9p.RREADW, 0xfffe);
        assertThat(P9Frames.size(buf, 5)).isEqualTo(300);
        assertThat(P9Frames.type(buf, 5)).isEqualTo(Ws9p.RREADW);
        assertThat(P9Frames.tag(buf, 5)).isEqualTo(0xfffe);
    }
}
