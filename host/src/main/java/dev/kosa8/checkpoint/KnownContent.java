package dev.kosa8.checkpoint;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
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

    private final List<Map<Identity, String>> known = new ArrayList<>();

    /** Adds the trustworthy identities of {@code m}'s files. */
    KnownContent add(Manifest m) {
        return add(ManifestIndex.of(m));
    }

    /** Adds the trustworthy identities of an indexed manifest's files (the index's own map, not a copy). */
    KnownContent add(ManifestIndex index) {
        known.add(index.trusted);
        return this;
    }

    /** The hash of a file whose stat is {@code s}, if known without reading it; else null. */
    String hashOf(Posix.Stat s) {
        Identity id = Identity.of(s);
        for (Map<Identity, String> k : known) {
            String hash = k.get(id);
            if (hash != null) {
                return hash;
            }
        }
        return null;
    }

    int size() {
        int n = 0;
        for (Map<Identity, String> k : known) {
            n += k.size();
        }
        return n;
    }
}
