package dev.kosa8.ports;

import java.util.concurrent.atomic.AtomicInteger;

/** A count of open connections under a cap, within the count of an enclosing one (a port's within its sandbox's). */
final class Slots {
    private final int max;
    private final Slots outer;
    private final AtomicInteger open = new AtomicInteger();

    Slots(int max, Slots outer) {
        this.max = max;
        this.outer = outer;
    }

    /** Takes a slot here and in every enclosing count, or none at all. */
    boolean take() {
        if (open.incrementAndGet() > max) {
            open.decrementAndGet();
            return false;
        }
        if (outer != null && !outer.take()) {
            open.decrementAndGet();
            return false;
        }
        return true;
    }

    void give() {
        open.decrementAndGet();
        if (outer != null) {
            outer.give();
        }
    }

    int open() {
        return open.get();
    }
}
