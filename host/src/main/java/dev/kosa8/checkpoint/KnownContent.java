package dev.kosa8.checkpoint;

import java.time.Duration;
import java.time.Instant;
import java.util.HashMap;
import java.util.Map;

/**
 * Content hashes known without reading: the file identities earlier manifests
 * recorded, each with its hash. A file whose identity today equals one recorded
 * has not been written since (every write moves mtime and ctime, and no one
 * can set a ctime), so it still has that hash.
 *
 * <p>Except in one case, which this class rules out: timestamps come from a
 * coarse clock, one tick of which (1–10 ms; a whole second on ext3, ext4 with
 * small inodes, some network file systems) can hold the stat that recorded an
 * identity and a later write of the same size. So an identity counts only if
 * its ctime was older, by {@link #RACY_MARGIN}, than the start of the capture
 * that recorded it; a later write then necessarily has a later ctime. Files
 * changed within the margin before a capture are simply read again next time.
 */
final class KnownContent {
    /** Longer than a clock tick plus the coarsest timestamp granularity of common Linux file systems (1 s). */
    static final Duration RACY_MARGIN = Duration.ofSeconds(2);

    private final Map<Identity, String> hashes = new HashMap<>();

    /** Adds the trustworthy identities of {@code m}'s files. */
    KnownContent add(Manifest m) {
        Instant trustedBefore = m.capturedAt().minus(RACY_MARGIN);
        for (Entry e : m.entries()) {
            if (e.kind() == Kind.FILE) {
                Identity id = e.identity();
                if (Instant.ofEpochSecond(id.ctimeSec(), id.ctimeNsec()).isBefore(trustedBefore)) {
                    hashes.put(id, e.sha256());
                }
            }
        }
        return this;
    }

    /** The hash of a file whose stat is {@code s}, if known without reading it; else null. */
    String hashOf(Posix.Stat s) {
        return hashes.get(Identity.of(s));
    }

    int size() {
        return hashes.size();
    }
}
