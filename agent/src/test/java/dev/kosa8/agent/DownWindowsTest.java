package dev.kosa8.agent;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kosa8.protocol.NetLink;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class DownWindowsTest {
    @Test
    void aWindowGrowsToItsMostWhileTheBudgetHasRoom() {
        DownWindows w = new DownWindows();
        int window = w.open();
        assertThat(window).isEqualTo(NetLink.OPEN_WINDOW);
        window += w.grow(window);
        assertThat(window).isEqualTo(NetLink.DOWN_WINDOW);
        assertThat(w.grow(window)).as("never past its most").isZero();
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
            window += w.grow(window);
            windows.add(window);
            assertThat(w.granted()).isLessThanOrEqualTo(NetLink.DOWN_BUDGET
                    - (long) (NetLink.AGENT_STREAMS - windows.size()) * NetLink.OPEN_WINDOW);
        }
        assertThat(w.granted()).isEqualTo(NetLink.DOWN_BUDGET);
        assertThat(windows.getFirst()).as("the first to grow grew to its most").isEqualTo(NetLink.DOWN_WINDOW);
        assertThat(windows.getLast()).as("the last kept its open window").isEqualTo(NetLink.OPEN_WINDOW);
        assertThat(w.grow(NetLink.OPEN_WINDOW)).as("nothing left to grow by").isZero();
        // a grown stream that ends gives its room to the next that grows
        w.close(windows.removeFirst());
        int window = w.open();
        assertThat(window + w.grow(window)).isEqualTo(NetLink.DOWN_WINDOW);
        assertThat(w.granted()).isEqualTo(NetLink.DOWN_BUDGET);
    }
}
