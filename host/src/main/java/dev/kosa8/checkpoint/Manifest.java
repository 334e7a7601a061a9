package dev.kosa8.checkpoint;

import java.time.Instant;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * What one snapshot holds: every entry of the folder, the folder itself first
 * (path ""), each directory before what it contains.
 *
 * @param capturedAt when the capture began; an identity recorded here is trusted only if its ctime is
 *                   older than this by a margin (see {@link KnownContent})
 */
record Manifest(String id, Instant capturedAt, List<Entry> entries) {
    Manifest {
        entries = List.copyOf(entries);
        if (entries.isEmpty() || !entries.getFirst().path().isEmpty()) {
            throw new IllegalArgumentException("snapshot " + id + " does not start with the folder itself");
        }
        Set<String> dirs = new HashSet<>();
        Set<String> seen = new HashSet<>();
        for (Entry e : entries) {
            if (!seen.add(e.path())) {
                throw new IllegalArgumentException("snapshot " + id + " names " + ByteNames.display(e.path())
                        + " twice");
            }
            if (!e.path().isEmpty() && !dirs.contains(ByteNames.parent(e.path()))) {
                throw new IllegalArgumentException("snapshot " + id + " has " + ByteNames.display(e.path())
                        + " before its directory");
            }
            if (e.kind() == Kind.DIR) {
                dirs.add(e.path());
            }
        }
    }

    Entry root() {
        return entries.getFirst();
    }

    /** The content hashes this snapshot needs. */
    Set<String> objects() {
        Set<String> out = new HashSet<>();
        for (Entry e : entries) {
            if (e.sha256() != null) {
                out.add(e.sha256());
            }
        }
        return out;
    }
}
