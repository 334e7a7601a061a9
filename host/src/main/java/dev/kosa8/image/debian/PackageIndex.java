package dev.kosa8.image.debian;

import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * The packages of one or more {@code Packages} files of one architecture,
 * by name (the newest version of each, as apt's candidate is without pins)
 * and by what they provide.
 */
public final class PackageIndex {
    private final Map<String, PackageEntry> byName = new HashMap<>();
    private final Map<String, List<PackageEntry>> providers = new HashMap<>();
    private final Map<String, String> origins = new HashMap<>();
    /** Every entry the signed indices list, each version (not only the newest), as its lock line. */
    private final java.util.Set<String> listed = new java.util.HashSet<>();

    /** An index of {@code entries}; of two with one name the newer is kept. */
    public static PackageIndex of(Collection<PackageEntry> entries) {
        PackageIndex index = new PackageIndex();
        entries.forEach(index::add);
        return index;
    }

    /** Reads the text of a Packages file into a new index, keeping only {@code architecture} and {@code all}. */
    public static PackageIndex parse(String text, String what, String architecture) {
        PackageIndex index = new PackageIndex();
        index.addAll(text, what, architecture);
        return index;
    }

    /** Adds the packages of another Packages file (a security or updates suite's, say). */
    public void addAll(String text, String what, String architecture) {
        addAll(text, what, architecture, "debian");
    }

    /** As {@link #addAll(String, String, String)}, noting that these packages come from the archive {@code origin}. */
    public void addAll(String text, String what, String architecture, String origin) {
        Stanzas.each(text, what, s -> {
            PackageEntry e = PackageEntry.of(s, what);
            if (e.architecture().equals(architecture) || e.architecture().equals("all")) {
                listed.add(e.locked().withArchive(origin).line());
                add(e, origin);
            }
        });
    }

    /** Which archive the chosen version of {@code name} came from. */
    public String origin(String name) {
        return origins.getOrDefault(name, "debian");
    }

    private void add(PackageEntry e) {
        add(e, "debian");
    }

    private void add(PackageEntry e, String origin) {
        PackageEntry old = byName.get(e.name());
        if (old != null && old.version().compareTo(e.version()) >= 0) {
            return;
        }
        origins.put(e.name(), origin);
        if (old != null) {
            for (Relation p : old.provides()) {
                providers.get(p.name()).remove(old);
            }
        }
        byName.put(e.name(), e);
        for (Relation p : e.provides()) {
            providers.computeIfAbsent(p.name(), k -> new ArrayList<>()).add(e);
        }
    }

    /**
     * Whether the signed indices list exactly {@code l}: this name, version and architecture, with this SHA-256
     * and size, at this path of this archive (any version the suites list, not only the newest).
     */
    public boolean lists(Locked l) {
        return listed.contains(l.line());
    }

    public Optional<PackageEntry> get(String name) {
        return Optional.ofNullable(byName.get(name));
    }

    /** The packages that provide {@code name} (a virtual package, or a real one's other name). */
    public List<PackageEntry> providersOf(String name) {
        return List.copyOf(providers.getOrDefault(name, List.of()));
    }

    public Collection<PackageEntry> all() {
        return byName.values();
    }

    public int size() {
        return byName.size();
    }
}
