package dev.kosa8.daemon;

/**
 * A token bucket: {@link TurnBounds#burst()} turn checkpoints at once, then
 * one per {@link TurnBounds#refill()}. Time is given, so tests need no clock.
 */
final class TurnRate {
    private final TurnBounds bounds;
    private double tokens;
    private long lastNanos;

    TurnRate(TurnBounds bounds, long nowNanos) {
        this.bounds = bounds;
        this.tokens = bounds.burst();
        this.lastNanos = nowNanos;
    }

    /** Takes a token if there is one; otherwise returns how many milliseconds until there will be. */
    synchronized long take(long nowNanos) {
        double per = bounds.refill().toNanos();
        tokens = Math.min(bounds.burst(), tokens + Math.max(0, nowNanos - lastNanos) / per);
        lastNanos = Math.max(lastNanos, nowNanos);
        if (tokens >= 1) {
            tokens -= 1;
            return 0;
        }
        return Math.max(1, (long) Math.ceil((1 - tokens) * per / 1_000_000));
    }
}
