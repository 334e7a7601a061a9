package dev.kosa8.checkpoint;

import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * What captures and restores look up in a manifest, made once for each
 * manifest the daemon holds ({@link ManifestCache#index}): its entries by
 * directory, the content hashes it needs, and its files' trustworthy
 * identities ({@link KnownContent}). Building these for 10,000 entries was a
 * third of a restore's CPU once the manifest itself was no longer decoded
 * each time, and a capture inside a checkpoint's pause built the identities
 * of the head anew too.
 */
final class ManifestIndex {
    /** Each directory's entries, by the directory's path. */
    final Map<String, List<Entry>> children;
    /** The content hashes the manifest needs. */
    final Set<String> objects;
    /** Identity of a file to its hash, for identities whose ctime was older than the capture by the margin. */
    final Map<Identity, String> trusted;
    /**
     * Set once every object was found in the store: the daemon deletes no object a manifest it keeps needs
     * (its collection keeps them), so a later restore of the same manifest need not look again (10,000 stats,
     * 45% of such a restore's time). An object taken away behind the daemon's back is still found missing
     * when the restore needs it, before that file is touched.
     */
    volatile boolean objectsPresent;

    private ManifestIndex(Map<String, List<Entry>> children, Set<String> objects, Map<Identity, String> trusted) {
        this.children = children;
        this.objects = objects;
        this.trusted = trusted;
    }

    static ManifestIndex of(Manifest m) {
        Map<String, List<Entry>> children = new HashMap<>();
        Set<String> objects = new HashSet<>();
        Map<Identity, String> trusted = new HashMap<>();
        Instant trustedBefore = m.capturedAt().minus(KnownContent.RACY_MARGIN);
        for (Entry e : m.entries()) {
            if (!e.path().isEmpty()) {
                children.computeIfAbsent(ByteNames.parent(e.path()), k -> new ArrayList<>()).add(e);
            }
            if (e.sha256() != null) {
                objects.add(e.sha256());
            }
            if (e.kind() == Kind.FILE) {
                Identity id = e.identity();
                if (Instant.ofEpochSecond(id.ctimeSec(), id.ctimeNsec()).isBefore(trustedBefore)) {
                    trusted.put(id, e.sha256());
                }
            }
        }
        children.replaceAll((k, v) -> List.copyOf(v));
        return new ManifestIndex(Map.copyOf(children), Set.copyOf(objects), Map.copyOf(trusted));
    }
}
