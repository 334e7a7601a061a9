package dev.kosa8.agent;

import dev.kosa8.protocol.Message;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The asks guest programs have sent the host and are still waiting on
 * (docs/agents.md, "Turn checkpoints"). They outlive a session: a machine
 * restored from a checkpoint wakes with the asks that were waiting when it
 * was taken, and the new host answers them ({@link Message.Outcome#REWOUND}
 * for the one that made the checkpoint, {@link Message.Outcome#FORGOTTEN}
 * for the rest).
 */
final class GuestAsks {
    /** At most this many asks wait at once; the host serves one at a time anyway. */
    static final int MAX_WAITING = 4;

    private final AtomicLong nextId = new AtomicLong(1);
    private final Map<Long, CompletableFuture<Message.Answer>> waiting = new ConcurrentHashMap<>();
    private volatile Outbox host;

    /** The session that now speaks for the host, or null when none does. */
    void connected(Outbox outbox) {
        host = outbox;
    }

    void disconnected(Outbox outbox) {
        if (host == outbox) {
            host = null;
        }
    }

    /** Sends an ask; the future completes with the host's answer (or a refusal made here). */
    CompletableFuture<Message.Answer> ask(String label) {
        long id = nextId.getAndIncrement();
        if (waiting.size() >= MAX_WAITING) {
            return refused(id, MAX_WAITING + " asks are already waiting for the host");
        }
        Outbox o = host;
        if (o == null) {
            return refused(id, "the host is not connected");
        }
        CompletableFuture<Message.Answer> f = new CompletableFuture<>();
        waiting.put(id, f);
        f.whenComplete((a, e) -> waiting.remove(id));
        if (!o.send(new Message.Ask(id, label))) {
            f.complete(new Message.Answer(id, Message.Outcome.REFUSED, "the host went away"));
        }
        return f;
    }

    /** The host's answer: to one ask, or (id 0, forgotten) to every ask still waiting. */
    void answered(Message.Answer a) {
        if (a.id() == 0) {
            waiting.forEach((id, f) -> f.complete(new Message.Answer(id, a.outcome(), a.text())));
            return;
        }
        CompletableFuture<Message.Answer> f = waiting.get(a.id());
        if (f != null) {
            f.complete(a);
        }
    }

    private static CompletableFuture<Message.Answer> refused(long id, String why) {
        return CompletableFuture.completedFuture(new Message.Answer(id, Message.Outcome.REFUSED, why));
    }
}
