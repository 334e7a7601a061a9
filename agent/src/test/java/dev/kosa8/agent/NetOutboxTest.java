package dev.kosa8.agent;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kosa8.protocol.Codec;
import dev.kosa8.protocol.Message;
import java.io.ByteArrayOutputStream;
import java.io.OutputStream;
import java.util.List;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

class NetOutboxTest {
    /** The port: each flush of the outbox's writer is one write to the port, recorded whole. */
    static final class Port extends OutputStream {
        final LinkedBlockingQueue<byte[]> writes = new LinkedBlockingQueue<>();
        private final ByteArrayOutputStream pending = new ByteArrayOutputStream();

        @Override
        public synchronized void write(int b) {
            pending.write(b);
        }

        @Override
        public synchronized void write(byte[] b, int off, int len) {
            pending.write(b, off, len);
        }

        @Override
        public synchronized void flush() {
            writes.add(pending.toByteArray());
            pending.reset();
        }

        byte[] next() throws InterruptedException {
            byte[] b = writes.poll(10, TimeUnit.SECONDS);
            assertThat(b).as("a write to the port within 10 s").isNotNull();
            return b;
        }
    }

    @Test
    void aTurnsMessagesGoToThePortInOneWriteInTheirOrderAndNothingBeforeTheTurnEnds() throws Exception {
        Port port = new Port();
        NetOutbox outbox = new NetOutbox(port, () -> { });
        List<Message> turn = List.of(new Message.NetWindowReturn(3, 77), new Message.Credit(5, Message.Stream.STDIN, 1000),
                new Message.Data(5, Message.Stream.STDOUT, new byte[] {1, 2, 3}));
        turn.forEach(outbox::later);
        assertThat(port.writes.poll(200, TimeUnit.MILLISECONDS)).as("nothing written before the turn ends").isNull();
        outbox.flush();
        ByteArrayOutputStream expected = new ByteArrayOutputStream();
        for (Message m : turn) {
            expected.write(Codec.encode(m));
        }
        assertThat(port.next()).isEqualTo(expected.toByteArray());
        outbox.later(new Message.NetReset(9));
        outbox.flush();
        assertThat(port.next()).as("the next turn's, in a write of its own").isEqualTo(Codec.encode(new Message.NetReset(9)));
        outbox.flush();
        assertThat(port.writes.poll(200, TimeUnit.MILLISECONDS)).as("an empty turn writes nothing").isNull();
    }

    @Test
    void aTurnsDataCountInTheBudgetAsTheyAreQueued() {
        NetOutbox outbox = new NetOutbox(new Port(), () -> { });
        byte[] big = new byte[dev.kosa8.protocol.NetLink.CHUNK];
        for (long queued = 0; queued <= NetOutbox.BUDGET; queued += big.length) {
            outbox.later(new Message.Data(1, Message.Stream.STDOUT, big));
        }
        assertThat(outbox.overBudget()).as("over the budget before the turn is handed over").isTrue();
    }
}
