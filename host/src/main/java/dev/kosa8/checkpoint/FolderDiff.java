package dev.kosa8.checkpoint;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * The differences between two snapshots of a folder, path by path (a pure
 * function of the two manifests; contents are compared by hash). Modification
 * times are not differences: a file rewritten with the same bytes and mode is
 * unchanged, as git sees it. The folder itself ({@code ""}) differs only by
 * its mode. A rename is a deletion and an addition, as it is on disk.
 */
final class FolderDiff {
    private FolderDiff() {
    }

    /** One path that differs, with its entry on each side (null where absent). */
    record Pair(String path, FolderChange.Change change, Entry before, Entry after) {
    }

    static List<Pair> compare(Manifest before, Manifest after) {
        Map<String, Entry> was = index(before);
        Map<String, Entry> now = index(after);
        TreeMap<String, Pair> out = new TreeMap<>();
        for (Entry b : was.values()) {
            Entry a = now.get(b.path());
            FolderChange.Change c = a == null ? FolderChange.Change.DELETED : change(b, a);
            if (c != null) {
                out.put(b.path(), new Pair(b.path(), c, b, a));
            }
        }
        for (Entry a : now.values()) {
            if (!was.containsKey(a.path())) {
                out.put(a.path(), new Pair(a.path(), FolderChange.Change.ADDED, null, a));
            }
        }
        return new ArrayList<>(out.values());
    }

    /** How {@code b} became {@code a}, or null if it did not change. */
    private static FolderChange.Change change(Entry b, Entry a) {
        if (b.kind() != a.kind()) {
            return FolderChange.Change.TYPE;
        }
        return switch (b.kind()) {
            case FILE -> !b.sha256().equals(a.sha256()) ? FolderChange.Change.MODIFIED
                    : b.mode() != a.mode() ? FolderChange.Change.MODE : null;
            case SYMLINK -> !b.target().equals(a.target()) ? FolderChange.Change.SYMLINK : null;
            case DIR, FIFO -> b.mode() != a.mode() ? FolderChange.Change.MODE : null;
        };
    }

    private static Map<String, Entry> index(Manifest m) {
        Map<String, Entry> map = new TreeMap<>();
        for (Entry e : m.entries()) {
            map.put(e.path(), e);
        }
        return map;
    }
}
