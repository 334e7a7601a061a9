package dev.kosa8.vm;

import dev.kosa8.protocol.Message;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Consumer;
import java.util.function.Function;

/**
 * The guest's asks on one agent connection (docs/agents.md, "Turn
 * checkpoints"): one at a time goes to the handler the daemon set, on a
 * thread of its own, so the connection's reader never waits on a checkpoint;
 * an ask that comes while one is being served, or before any handler is set,
 * is refused at once.
 */
final class GuestAskGate {
    private static final Function<Message.Ask, Message.Answer> NONE = a -> new Message.Answer(a.id(),
            Message.Outcome.REFUSED, "this sandbox takes no turn checkpoints");

    private volatile Function<Message.Ask, Message.Answer> handler = NONE;
    private final AtomicBoolean serving = new AtomicBoolean();

    void handler(Function<Message.Ask, Message.Answer> h) {
        handler = h == null ? NONE : h;
    }

    /** Routes one ask; the answer goes to {@code reply}, now (refused) or once the handler is done. */
    void received(Message.Ask a, Consumer<Message.Answer> reply) {
        if (!serving.compareAndSet(false, true)) {
            reply.accept(new Message.Answer(a.id(), Message.Outcome.REFUSED,
                    "another turn checkpoint is being taken; ask one at a time"));
            return;
        }
        Function<Message.Ask, Message.Answer> h = handler;
        Thread.ofVirtual().name("guest-ask").start(() -> {
            Message.Answer answer;
            try {
                answer = h.apply(a);
            } catch (RuntimeException e) {
                answer = new Message.Answer(a.id(), Message.Outcome.REFUSED, "the host failed: " + e.getMessage());
            } finally {
                serving.set(false);
            }
            reply.accept(answer);
        });
    }
}
