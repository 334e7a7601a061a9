package dev.kosa8.files;

import java.time.Duration;

/**
 * What file operations may make the daemon keep, per sandbox (docs/limits.md).
 *
 * @param listEntries       the most entries one listing returns; more are cut off, and the listing says so
 * @param watches           watches open at once per sandbox; one more is refused ({@code LIMIT})
 * @param pendingEvents     events a watch keeps while no one takes them; more are dropped and reported as one
 *                          {@code OVERFLOW} event
 * @param timeout           the longest one operation (a stat, a listing, a recursive remove) may take
 */
public record FileLimits(int listEntries, int watches, int pendingEvents, Duration timeout) {
    public static final FileLimits DEFAULT = new FileLimits(10_000, 16, 4096, Duration.ofMinutes(2));

    public FileLimits {
        if (listEntries < 1 || listEntries >= dev.kosa8.protocol.FileOp.MAX_LIST_ENTRIES) {
            throw new IllegalArgumentException("a listing returns 1.." + dev.kosa8.protocol.FileOp.MAX_LIST_ENTRIES
                    + " entries, not " + listEntries);
        }
        if (watches < 1 || pendingEvents < 1) {
            throw new IllegalArgumentException("a sandbox has at least one watch of at least one pending event");
        }
        if (timeout.isNegative() || timeout.isZero()) {
            throw new IllegalArgumentException("an operation's timeout must be positive");
        }
    }
}
