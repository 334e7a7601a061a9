package dev.kosa8.agent;

import java.util.ArrayList;
import java.util.List;

/**
 * Which mount's connection the host's messages go to: set and ended by the
 * mount's lifecycle ({@link WorkspaceRelay}), read by the port's reader
 * ({@link DownPump}) before each batch of messages it delivers.
 *
 * <p>When a mount is detached (the host's server was replaced without the
 * guest's state), the host's messages are dropped until the answer to the
 * new mount's Tversion: whatever came before it answers the old mount. (The
 * host's server answers every request it received before a Tversion before
 * answering that.)
 */
final class CurrentMount {
    /** The current mount's connection; null between mounts. */
    private RelayConnection current;
    /** Connections detached whose replies' end the port's reader has still to close. */
    private final List<RelayConnection> retired = new ArrayList<>();
    /** Set by {@link #detach}: the host's messages are for the old mount until its Rversion. */
    private volatile boolean awaitingVersion;

    synchronized void attach(RelayConnection c) {
        current = c;
    }

    synchronized RelayConnection current() {
        return current;
    }

    /**
     * Ends the current mount's turn and returns its connection (null if
     * none): the host's messages are the old mount's until the next Rversion.
     */
    synchronized RelayConnection detach() {
        RelayConnection c = current;
        current = null;
        awaitingVersion = true;
        return c;
    }

    /**
     * Hands a detached connection's end of the replies to the port's reader
     * to close. Only once nothing else will touch that number: dup3 onto a
     * number closed (and perhaps reused) meanwhile would replace another file.
     */
    synchronized void retire(RelayConnection c) {
        retired.add(c);
    }

    /**
     * For the port's reader, before it delivers: closes the replies' ends of
     * the connections retired since (it is their user), and returns the
     * current connection, or null.
     */
    RelayConnection forDelivery() {
        List<RelayConnection> done;
        RelayConnection to;
        synchronized (this) {
            done = retired.isEmpty() ? List.of() : List.copyOf(retired);
            retired.clear();
            to = current;
        }
        for (RelayConnection c : done) {
            synchronized (c.replying) { // the old up pump may be putting an Rclunk: it finds it closed after this
                Posix.close(c.replies); // /dev/null by now: nothing of the old mount is written after this
            }
        }
        return to;
    }

    /** Whether the host's messages are still the old mount's answers (until an Rversion). */
    boolean awaitingVersion() {
        return awaitingVersion;
    }

    /** The new mount's Rversion came: from here on the host's messages are its. */
    void versionCame() {
        awaitingVersion = false;
    }
}
