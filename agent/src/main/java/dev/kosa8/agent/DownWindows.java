package dev.kosa8.agent;

import dev.kosa8.protocol.NetLink;

/**
 * The windows the agent grants the host towards the guest, over all streams
 * of the network link: each stream opens with {@link NetLink#OPEN_WINDOW},
 * and grows, up to {@link NetLink#DOWN_WINDOW}, each time it credits bytes it
 * wrote into its guest's socket, while the sum stays within
 * {@link NetLink#DOWN_BUDGET} with an open window kept for each stream that
 * may still open. So the host's bytes that guest programs have not read cost
 * the agent at most the budget, however many streams stop reading, and the
 * agent never stops reading the port for them: a stream that does not read
 * stalls itself alone. Windows grow for streams whose guests read, the ones
 * that move bytes. Used by {@link NetRelay}'s thread alone.
 */
final class DownWindows {
    private long granted;
    private int open;

    /** A stream opens: its window. */
    int open() {
        if (open == NetLink.AGENT_STREAMS) {
            throw new IllegalStateException("more than " + NetLink.AGENT_STREAMS + " streams");
        }
        open++;
        granted += NetLink.OPEN_WINDOW;
        return NetLink.OPEN_WINDOW;
    }

    /**
     * What a stream whose window is {@code window} may grow by as it credits bytes it wrote: 0 when the budget is
     * spent. Nothing is granted until {@link #grant}, so a credit that cannot be made loses nothing of the budget.
     */
    int room(int window) {
        long room = NetLink.DOWN_BUDGET - granted - (long) (NetLink.AGENT_STREAMS - open) * NetLink.OPEN_WINDOW;
        return (int) Math.max(0, Math.min(NetLink.DOWN_WINDOW - window, room));
    }

    /** A stream grew its window by {@code more}, at most its {@link #room}. */
    void grant(int more) {
        granted += more;
    }

    /** A stream whose window had grown to {@code window} is over: its window goes back to the budget. */
    void close(int window) {
        open--;
        granted -= window;
    }

    /** What is granted over all open streams: the most the host may have sent that no guest has read. */
    long granted() {
        return granted;
    }
}
