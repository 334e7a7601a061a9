package dev.kosa8.checkpoint;

import java.util.ArrayDeque;
import java.util.Deque;
import java.util.function.Consumer;

/**
 * The undo stack of one checkpoint, rewind or pause to disk: each step that
 * changed something pushes how to take it back; a failure later unwinds the
 * stack newest first, each undo on its own, so that one failing does not skip
 * the rest. A step that is given back on the way (the guest thawed once the
 * machine runs again) or made permanent (a snapshot committed) leaves the
 * stack through its {@link Entry}.
 */
final class Rollback {
    /** How to take a step back. */
    interface Action {
        void run() throws Exception;
    }

    /** One pushed undo, until it is dropped, run or unwound. */
    final class Entry {
        private final String what;
        private final Action action;

        private Entry(String what, Action action) {
            this.what = what;
            this.action = action;
        }

        /** The step stands: nothing is to be undone. */
        void drop() {
            entries.remove(this);
        }

        /**
         * The step is given back now, as the procedure goes on; a failure
         * here is the procedure's, and leaves the entry for the unwinding to
         * try once more.
         */
        void runNow() throws Exception {
            action.run();
            entries.remove(this);
        }
    }

    private final Deque<Entry> entries = new ArrayDeque<>();
    private final Consumer<String> log;

    Rollback(Consumer<String> log) {
        this.log = log;
    }

    /** Notes how to take back a step just done; {@code what} names it in the log if that fails. */
    Entry push(String what, Action undo) {
        Entry e = new Entry(what, undo);
        entries.push(e);
        return e;
    }

    /** Whether anything is left to undo. */
    boolean isEmpty() {
        return entries.isEmpty();
    }

    /** After a failure: every undo still on the stack, newest first, each on its own. */
    void unwind() {
        while (!entries.isEmpty()) {
            Entry e = entries.pop();
            try {
                e.action.run();
            } catch (Exception ex) {
                log.accept("checkpoint cleanup: cannot " + e.what + ": " + ex.getMessage());
            }
        }
    }
}
