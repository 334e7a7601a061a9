package dev.kosa8.agent;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.kosa8.protocol.Message;
import dev.kosa8.protocol.NetLink;
import dev.kosa8.protocol.ProtocolException;
import org.junit.jupiter.api.Test;

class NetStreamTest {
    @Test
    void aCreditGrowsTheWindowAndTakesItsGrowthFromTheBudget() {
        DownWindows windows = new DownWindows();
        NetStream s = new NetStream(3, null, null, windows.open());
        int step = s.creditStep();
        assertThat(s.credited(step - 1, windows)).as("less than a step is not credited alone").isNull();
        Message.Credit c = s.credited(1, windows);
        assertThat(c.bytes()).isEqualTo(step + (NetLink.DOWN_WINDOW - NetLink.OPEN_WINDOW));
        assertThat(s.downWindow).isEqualTo(NetLink.DOWN_WINDOW);
        assertThat(windows.granted()).isEqualTo(NetLink.DOWN_WINDOW);
    }

    @Test
    void aCreditThatCannotBeMadeTakesNothingFromTheBudget() {
        DownWindows windows = new DownWindows();
        // a channel no Credit may carry: the credit's constructor refuses it, after the window's room was asked
        NetStream s = new NetStream(-1, null, null, windows.open());
        long before = windows.granted();
        int step = s.creditStep();
        assertThatThrownBy(() -> s.credited(step, windows)).isInstanceOf(ProtocolException.class);
        assertThat(windows.granted()).as("the room asked for is not granted").isEqualTo(before);
        assertThat(s.downWindow).isEqualTo(NetLink.OPEN_WINDOW);
        assertThat(s.creditDue).as("what was written is still due").isEqualTo(step);
    }
}
