package dev.kosa8.daemon;

import dev.kosa8.checkpoint.Checkpoint;
import dev.kosa8.host.KosaException;
import dev.kosa8.protocol.Message;
import dev.kosa8.vm.Vm;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Consumer;
import java.util.stream.Collectors;

/**
 * Turn checkpoints (docs/agents.md): a guest program asks, through the
 * agent, for a checkpoint before an agent's tool call; the host takes an
 * ordinary checkpoint labelled with the turn, within {@link TurnBounds}, and
 * thins the oldest turns when there are too many. The guest sends a label and
 * nothing else: it cannot name, read or remove a checkpoint, and thinning
 * removes turn checkpoints only, never one the user took. When a machine
 * wakes from a turn's checkpoint (rewind, fork), the ask that made it is
 * answered {@code REWOUND}, so the hook that asked stops its tool call.
 */
final class TurnCheckpoints {
    private final SandboxManager manager;
    private final SandboxLayout layout;
    private final TurnBounds bounds;
    private final Consumer<String> log;
    private final Map<String, TurnRate> rates = new ConcurrentHashMap<>();

    TurnCheckpoints(SandboxManager manager, SandboxLayout layout, TurnBounds bounds, Consumer<String> log) {
        this.manager = manager;
        this.layout = layout;
        this.bounds = bounds;
        this.log = log;
    }

    /** {@code vm} is now {@code s}'s running machine: its asks come here. */
    void attach(Sandbox s, Vm vm) {
        vm.agent().onAsk(ask -> answer(s, ask));
    }

    /**
     * {@code vm} woke from saved state: from checkpoint {@code from} (a rewind or a fork; null for a resume or a
     * re-attach). Asks it was waiting on are answered: the one that made {@code from}, rewound; the rest, forgotten.
     */
    void woke(Sandbox s, Vm vm, Checkpoint from, TurnLog turnsOfFrom) {
        if (from != null) {
            turnsOfFrom.byCheckpoint(from.id()).ifPresent(t -> vm.agent().answer(new Message.Answer(t.ask(),
                    Message.Outcome.REWOUND, "turn " + t.turn() + " (" + from.id() + "): the sandbox was put back "
                    + "to just before it")));
        }
        vm.agent().answer(new Message.Answer(0, Message.Outcome.FORGOTTEN,
                "the machine was restored; this ask's checkpoint is not known"));
    }

    /** The sandbox is gone: its rate is forgotten with it. */
    void forget(String sandboxId) {
        rates.remove(sandboxId);
    }

    TurnLog log(String sandboxId) {
        return new TurnLog(layout.directory(sandboxId));
    }

    /** The turns of {@code s} whose checkpoints exist, by checkpoint id. */
    Map<String, Turn> byCheckpoint(Sandbox s, Set<String> checkpoints) {
        return log(s.id()).turns(checkpoints).stream().collect(Collectors.toMap(Turn::checkpoint, t -> t));
    }

    /** The checkpoint id of turn {@code n}, or a usage error that says which turns there are. */
    String checkpointOf(Sandbox s, int n, Set<String> checkpoints) {
        List<Turn> turns = log(s.id()).turns(checkpoints);
        return turns.stream().filter(t -> t.turn() == n).findFirst().map(Turn::checkpoint)
                .orElseThrow(() -> new KosaException(KosaException.Kind.USAGE, "sandbox " + s.id() + " has no turn "
                        + n + (turns.isEmpty() ? " (no turn checkpoints)" : " (turns " + turns.getFirst().turn() + ".."
                        + turns.getLast().turn() + " are kept; older ones were thinned)"),
                        "`kosa8 checkpoints " + s.id() + "` lists them"));
    }

    private Message.Answer answer(Sandbox s, Message.Ask ask) {
        long wait = rates.computeIfAbsent(s.id(), id -> new TurnRate(bounds, System.nanoTime())).take(System.nanoTime());
        if (wait > 0) {
            return refused(ask, "turn checkpoints are limited to " + bounds.burst() + " at once and one per "
                    + bounds.refill().toSeconds() + " s after that; the next can be taken in " + (wait + 999) / 1000
                    + " s (the last turn's checkpoint covers this one)");
        }
        TurnLog turns = log(s.id());
        int n = turns.next();
        String label = ask.label().isBlank() ? "(no label)" : ask.label();
        Checkpoint c;
        try {
            c = manager.undo().turnCheckpoint(s, "turn " + n + ": " + label);
        } catch (KosaException e) {
            log.accept("sandbox " + s.id() + ": turn " + n + " refused: " + e.getMessage());
            return refused(ask, e.getMessage());
        }
        turns.add(new Turn(n, c.id(), label, ask.id(), c.created(), c.vmStateBytes() + c.workspaceBytesCopied()));
        log.accept("sandbox " + s.id() + ": turn " + n + " checkpoint " + c.id() + " (" + label + ")");
        // after the answer: removing a checkpoint waits for the commit under way, which the tool call need not
        Thread.ofVirtual().name("turn-thinning").start(() -> {
            try {
                thin(s, turns);
            } catch (RuntimeException e) {
                log.accept("sandbox " + s.id() + ": cannot thin its turns: " + e.getMessage());
            }
        });
        return new Message.Answer(ask.id(), Message.Outcome.TAKEN, "turn " + n + " " + c.id());
    }

    /** One thinning at a time per daemon, so that two never pick the same turn. */
    private synchronized void thin(Sandbox s, TurnLog turns) {
        // what each holds as its record says now: a checkpoint still committing counts what it has stored so far
        Map<String, Long> bytes = manager.undo().checkpointBytes(s);
        List<Turn> kept = turns.turns(bytes.keySet()).stream().map(t -> new Turn(t.turn(), t.checkpoint(), t.label(),
                t.ask(), t.created(), Math.max(t.bytes(), bytes.get(t.checkpoint())))).toList();
        for (Turn t : bounds.thin(kept)) {
            try {
                manager.undo().removeCheckpoint(s, t.checkpoint());
                turns.remove(t.checkpoint());
                log.accept("sandbox " + s.id() + ": thinned turn " + t.turn() + " (" + t.checkpoint() + ")");
            } catch (KosaException e) {
                log.accept("sandbox " + s.id() + ": cannot thin turn " + t.turn() + ": " + e.getMessage());
                return;
            }
        }
    }

    private static Message.Answer refused(Message.Ask ask, String why) {
        return new Message.Answer(ask.id(), Message.Outcome.REFUSED, why);
    }
}
