package dev.kosa8.workspace;

import dev.kosa8.host.KosaException;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The held units of a sandbox's held layer in memory, by path and by the directory each is in: what the folder
 * server asks on every request that touches a name (is this path held? which names of this directory come from
 * the held tree?). {@link HeldChanges} changes it under its own lock and records it; reads take no lock.
 */
final class HeldUnits {
    private final Map<String, HeldChanges.Unit> byPath = new ConcurrentHashMap<>();
    /** The names of units, by the directory they are in: the listings that need merging. */
    private final Map<String, Set<String>> byParent = new ConcurrentHashMap<>();

    void add(HeldChanges.Unit u) {
        byPath.put(u.path(), u);
        byParent.computeIfAbsent(Fid.parent(u.path()), k -> ConcurrentHashMap.newKeySet()).add(Fid.lastName(u.path()));
    }

    void remove(HeldChanges.Unit u) {
        byPath.remove(u.path());
        Set<String> s = byParent.get(Fid.parent(u.path()));
        if (s != null) {
            s.remove(Fid.lastName(u.path()));
            if (s.isEmpty()) {
                byParent.remove(Fid.parent(u.path()));
            }
        }
    }

    void clear() {
        byPath.clear();
        byParent.clear();
    }

    boolean isEmpty() {
        return byPath.isEmpty();
    }

    /** The unit at exactly {@code path}, or null. */
    HeldChanges.Unit get(String path) {
        return byPath.get(path);
    }

    /** Every unit, by path. */
    List<HeldChanges.Unit> sorted() {
        List<HeldChanges.Unit> out = new ArrayList<>(byPath.values());
        out.sort(Comparator.comparing(HeldChanges.Unit::path));
        return out;
    }

    /** The unit {@code path} is in (itself or an ancestor), or null. */
    HeldChanges.Unit unitOf(String path) {
        if (byPath.isEmpty()) {
            return null;
        }
        String p = path;
        while (true) {
            HeldChanges.Unit u = byPath.get(p);
            if (u != null) {
                return u;
            }
            if (p.isEmpty()) {
                return null;
            }
            p = Fid.parent(p);
        }
    }

    /** The names of units directly in directory {@code dirPath}. */
    Set<String> namesIn(String dirPath) {
        Set<String> s = byParent.get(dirPath);
        return s == null ? Set.of() : s;
    }

    /** Whether any unit lies strictly under {@code dirPath}. */
    boolean anyUnder(String dirPath) {
        if (byPath.isEmpty()) {
            return false;
        }
        String prefix = dirPath.isEmpty() ? "" : dirPath + "/";
        for (String p : byPath.keySet()) {
            if (p.startsWith(prefix) && !p.equals(dirPath)) {
                return true;
            }
        }
        return false;
    }

    /**
     * The units {@code paths} name as a user typed them (accept, reject), or all; every path must be a unit, else
     * a usage error naming the wrong ones and what is held.
     */
    List<HeldChanges.Unit> named(List<String> paths, boolean all) {
        if (all) {
            return sorted();
        }
        if (paths.isEmpty()) {
            throw new KosaException(KosaException.Kind.USAGE, "no path given", "name held paths, or pass --all");
        }
        List<HeldChanges.Unit> out = new ArrayList<>();
        List<String> wrong = new ArrayList<>();
        for (String p : paths) {
            String norm = normalise(p);
            HeldChanges.Unit u = norm == null ? null : get(norm);
            if (u == null) {
                wrong.add(p);
            } else if (!out.contains(u)) {
                out.add(u);
            }
        }
        if (!wrong.isEmpty()) {
            throw new KosaException(KosaException.Kind.USAGE, "not held: " + String.join(", ", wrong),
                    isEmpty() ? "nothing is held" : "held are: " + String.join(", ",
                            sorted().stream().map(HeldChanges.Unit::path).toList()));
        }
        return out;
    }

    /** A path as the user typed it, relative to the folder, or null if it is absolute or climbs. */
    static String normalise(String p) {
        if (p.startsWith("/")) {
            return null;
        }
        List<String> parts = new ArrayList<>();
        for (String s : p.split("/")) {
            if (s.isEmpty() || s.equals(".")) {
                continue;
            }
            if (s.equals("..")) {
                return null;
            }
            parts.add(s);
        }
        return parts.isEmpty() ? null : String.join("/", parts);
    }
}
