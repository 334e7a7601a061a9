package dev.kosa8.agent;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kosa8.protocol.NetLink;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class DownWindowsTest {
    /** What a stream does as it credits: its room, granted. */
    private static int grow(DownWindows w, int window) {
        int more = w.room(window);
        w.grant(more);
        return more;
    }

    @Test
    void roomIsOnlyAskedAndGrantsNothingUntilGranted() {
        DownWindows w = new DownWindows();
        int window = w.open();
        int room = w.room(window);
        assertThat(room).isEqualTo(NetLink.DOWN_WINDOW - NetLink.OPEN_WINDOW);
        assertThat(w.granted()).isEqualTo(NetLink.OPEN_WINDOW);
        assertThat(w.room(window)).isEqualTo(room);
        w.grant(room);
        assertThat(w.granted()).isEqualTo(NetLink.DOWN_WINDOW);
    }
    @Test
    void aWindowGrowsToItsMostWhileTheBudgetHasRoom() {
        DownWindows w = new DownWindows();
        int window = w.open();
        assertThat(window).isEqualTo(NetLink.OPEN_WINDOW);
        window += grow(w, window);
        assertThat(window).isEqualTo(NetLink.DOWN_WINDOW);
        assertThat(grow(w, window)).as("never past its most").isZero();
        w.close(window);
        assertThat(w.granted()).isZero();
    }

    @Test
    void whatIsGrantedOverAllStreamsStaysWithinTheBudgetWhateverOpensAndGrowsAndEveryStreamStillOpens() {
        DownWindows w = new DownWindows();
        List<Integer> windows = new ArrayList<>();
        // streams open and grow as far as they may, then the rest open up to the cap
        for (int i = 0; i < NetLink.AGENT_STREAMS; i++) {
            int window = w.open();
            window += grow(w, window);
            windows.add(window);
            assertThat(w.granted()).isLessThanOrEqualTo(NetLink.DOWN_BUDGET
                    - (long) (NetLink.AGENT_STREAMS - windows.size()) * NetLink.OPEN_WINDOW);
        }
        assertThat(w.granted()).isEqualTo(NetLink.DOWN_BUDGET);
        assertThat(windows.getFirst()).as("the first to grow grew to its most").isEqualTo(NetLink.DOWN_WINDOW);
        assertThat(windows.getLast()).as("the last kept its open window").isEqualTo(NetLink.OPEN_WINDOW);
        assertThat(grow(w, NetLink.OPEN_WINDOW)).as("nothing left to grow by").isZero();
        // a grown stream that ends gives its room to the next that grows
        w.close(windows.removeFirst());
        int window = w.open();
        assertThat(window + grow(w, window)).isEqualTo(NetLink.DOWN_WINDOW);
        assertThat(w.granted()).isEqualTo(NetLink.DOWN_BUDGET);
    }
}
