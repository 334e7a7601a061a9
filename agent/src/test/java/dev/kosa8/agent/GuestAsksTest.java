package dev.kosa8.agent;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kosa8.protocol.Message;
import java.io.ByteArrayInputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;

class GuestAsksTest {
    /** A host that records what it is sent. */
    private static final class Host implements Outbox {
        final List<Message> sent = new ArrayList<>();

        @Override
        public synchronized boolean send(Message m) {
            sent.add(m);
            return true;
        }

        @Override
        public void done(int channel) {
        }
    }

    @Test
    void anAskWaitsForTheHostsAnswerToItsOwnId() {
        GuestAsks asks = new GuestAsks();
        Host host = new Host();
        asks.connected(host);
        CompletableFuture<Message.Answer> a = asks.ask("Bash");
        CompletableFuture<Message.Answer> b = asks.ask("Edit a.c");
        Message.Ask first = (Message.Ask) host.sent.get(0);
        Message.Ask second = (Message.Ask) host.sent.get(1);
        assertThat(first.label()).isEqualTo("Bash");
        assertThat(first.id()).isNotEqualTo(second.id());
        asks.answered(new Message.Answer(second.id(), Message.Outcome.TAKEN, "turn 2 c1"));
        assertThat(b).isCompletedWithValueMatching(x -> x.outcome() == Message.Outcome.TAKEN);
        assertThat(a).isNotDone();
        asks.answered(new Message.Answer(9999, Message.Outcome.REWOUND, "no such ask"));
        assertThat(a).isNotDone();
    }

    @Test
    void aRestoredMachinesAsksAreAnsweredRewoundForItsOwnAndForgottenForTheRest() {
        GuestAsks asks = new GuestAsks();
        Host old = new Host();
        asks.connected(old);
        CompletableFuture<Message.Answer> turn = asks.ask("Write hello.txt");
        CompletableFuture<Message.Answer> other = asks.ask("Bash");
        asks.disconnected(old);
        // the machine wakes from a checkpoint with both asks waiting; the new host answers
        asks.connected(new Host());
        long id = ((Message.Ask) old.sent.get(0)).id();
        asks.answered(new Message.Answer(id, Message.Outcome.REWOUND, "turn 1"));
        asks.answered(new Message.Answer(0, Message.Outcome.FORGOTTEN, "restored"));
        assertThat(turn.join().outcome()).isEqualTo(Message.Outcome.REWOUND);
        assertThat(other.join().outcome()).isEqualTo(Message.Outcome.FORGOTTEN);
    }

    @Test
    void withoutAHostOrPastTheBoundAnAskIsRefusedAtOnce() {
        GuestAsks asks = new GuestAsks();
        assertThat(asks.ask("x").join().outcome()).isEqualTo(Message.Outcome.REFUSED);
        asks.connected(new Host());
        for (int i = 0; i < GuestAsks.MAX_WAITING; i++) {
            assertThat(asks.ask("x")).isNotDone();
        }
        Message.Answer over = asks.ask("x").join();
        assertThat(over.outcome()).isEqualTo(Message.Outcome.REFUSED);
        assertThat(over.text()).contains("already waiting");
    }

    @Test
    void theListenerAnswersBadRequestsWithoutAskingTheHost() throws Exception {
        GuestAsks asks = new GuestAsks();
        Host host = new Host();
        asks.connected(host);
        AskListener l = new AskListener(asks);
        assertThat(l.handle(null)).startsWith("refused the request is longer");
        assertThat(l.handle("delete c1")).startsWith("refused unknown request");
        assertThat(l.handle("checkpoint " + "x".repeat(300))).startsWith("refused the label");
        assertThat(l.handle("checkpoint a\u0007b")).startsWith("refused the label");
        assertThat(host.sent).isEmpty();
        assertThat(AskListener.readLine(new ByteArrayInputStream("x".repeat(5000).getBytes(StandardCharsets.UTF_8))))
                .isNull();
        assertThat(AskListener.readLine(new ByteArrayInputStream(new byte[] {'a', (byte) 0xff, '\n'}))).isNull();
        assertThat(AskListener.readLine(new ByteArrayInputStream("checkpoint Bash\nmore".getBytes(StandardCharsets.UTF_8))))
                .isEqualTo("checkpoint Bash");
    }
}
