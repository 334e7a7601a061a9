package dev.kosa8.egress;

import java.util.function.LongSupplier;

/**
 * How many DNS queries a sandbox may ask its broker: a token bucket of
 * {@link #BURST} queries, refilled at {@link #PER_SECOND} a second. The
 * broker's DNS resolves nothing upstream, but each query it answers NXDOMAIN
 * is an audit line, and a guest asks as fast as it likes; past the rate a query
 * is answered REFUSED, which resolvers report at once as a failed lookup. Safe
 * for the broker's event loops to share.
 */
final class QueryRate {
    static final int PER_SECOND = 100;
    static final int BURST = 200;
    private static final long NANOS_PER_QUERY = 1_000_000_000L / PER_SECOND;

    private final LongSupplier nanoTime;
    private long tokensAt;
    private double tokens = BURST;
    private long lastSaid = Long.MIN_VALUE;

    QueryRate() {
        this(System::nanoTime);
    }

    QueryRate(LongSupplier nanoTime) {
        this.nanoTime = nanoTime;
        this.tokensAt = nanoTime.getAsLong();
    }

    /** Takes one query's token; false when the sandbox is over its rate. */
    synchronized boolean take() {
        long now = nanoTime.getAsLong();
        tokens = Math.min(BURST, tokens + (double) (now - tokensAt) / NANOS_PER_QUERY);
        tokensAt = now;
        if (tokens >= 1) {
            tokens -= 1;
            return true;
        }
        return false;
    }

    /** Whether a refusal should be logged now: at most once a second. */
    synchronized boolean sayRefusal() {
        long now = nanoTime.getAsLong();
        if (lastSaid != Long.MIN_VALUE && now - lastSaid < 1_000_000_000L) {
            return false;
        }
        lastSaid = now;
        return true;
    }
}
