package dev.kosa8.image.debian;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.Deque;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;

/**
 * The dependency closure of a set of packages, as apt would install it on an
 * empty system, for the image's root file system: each {@code Depends} and
 * {@code Pre-Depends} group is satisfied by a package already chosen when one
 * does (its own name or a {@code Provides}, version constraints checked),
 * else by its first alternative that exists (a real package first, then the
 * highest-priority provider). Groups with a choice wait until every group
 * without one is done, so a choice already made elsewhere wins, as with apt.
 * Cycles are fine (a chosen package is not visited twice). {@code Recommends},
 * {@code Conflicts} and {@code Breaks} are not followed: minbase installs
 * without recommends, and the newest versions of one suite do not conflict.
 * A group nothing satisfies fails, naming the chain that asked for it.
 */
public final class Resolver {
    private static final List<String> PRIORITIES = List.of("required", "important", "standard", "optional", "extra");

    private final PackageIndex index;
    private final Map<String, PackageEntry> chosen = new LinkedHashMap<>();
    private final Map<String, String> why = new LinkedHashMap<>();

    private Resolver(PackageIndex index) {
        this.index = index;
    }

    /**
     * The packages mmdebstrap's {@code minbase} variant starts from: every
     * {@code Essential: yes} package, every {@code Priority: required} one,
     * and apt.
     */
    public static List<String> minbase(PackageIndex index) {
        List<String> out = new ArrayList<>(index.all().stream()
                .filter(e -> e.essential() || e.priority().equals("required"))
                .map(PackageEntry::name).sorted().toList());
        if (index.get("apt").isPresent() && !out.contains("apt")) {
            out.add("apt");
        }
        return out;
    }

    /** The closure of {@code names}, sorted by name; an error names a package or relation nothing satisfies. */
    public static List<PackageEntry> closure(PackageIndex index, List<String> names) {
        Resolver r = new Resolver(index);
        Deque<PackageEntry> work = new ArrayDeque<>();
        for (String n : names) {
            PackageEntry e = index.get(n).or(() -> r.bestProvider(new Relation(n, "", null)))
                    .orElseThrow(() -> unsatisfied("the package " + n + " is not in the archive's index",
                            "requested"));
            r.choose(e, "requested", work);
        }
        List<Deferred> deferred = new ArrayList<>();
        while (true) {
            while (!work.isEmpty()) {
                PackageEntry e = work.pop();
                List<List<Relation>> groups = new ArrayList<>(e.preDepends());
                groups.addAll(e.depends());
                for (List<Relation> group : groups) {
                    if (r.satisfied(group)) {
                        continue;
                    }
                    if (group.size() > 1) {
                        deferred.add(new Deferred(e, group));
                        continue;
                    }
                    r.choose(r.pick(group, e), e.name(), work);
                }
            }
            if (deferred.isEmpty()) {
                break;
            }
            Deferred d = deferred.removeFirst();
            if (!r.satisfied(d.group())) {
                r.choose(r.pick(d.group(), d.from()), d.from().name(), work);
            }
        }
        return new TreeMap<>(r.chosen).values().stream().toList();
    }

    private record Deferred(PackageEntry from, List<Relation> group) {
    }

    private void choose(PackageEntry e, String by, Deque<PackageEntry> work) {
        if (chosen.putIfAbsent(e.name(), e) == null) {
            why.put(e.name(), by);
            work.push(e);
        }
    }

    private boolean satisfied(List<Relation> group) {
        for (Relation r : group) {
            PackageEntry real = chosen.get(r.name());
            if (real != null && r.satisfiedBy(real.name(), real.version())) {
                return true;
            }
            for (PackageEntry p : index.providersOf(r.name())) {
                if (chosen.get(p.name()) == p && providesMatch(p, r)) {
                    return true;
                }
            }
        }
        return false;
    }

    /** The package that satisfies the group: the first alternative that any package satisfies. */
    private PackageEntry pick(List<Relation> group, PackageEntry from) {
        for (Relation r : group) {
            Optional<PackageEntry> real = index.get(r.name()).filter(e -> r.satisfiedBy(e.name(), e.version()));
            if (real.isPresent()) {
                return real.get();
            }
            Optional<PackageEntry> provider = bestProvider(r);
            if (provider.isPresent()) {
                return provider.get();
            }
        }
        throw unsatisfied("nothing in the archive's index satisfies "
                + String.join(" | ", group.stream().map(Relation::toString).toList()), chain(from.name()));
    }

    private Optional<PackageEntry> bestProvider(Relation r) {
        return index.providersOf(r.name()).stream().filter(p -> providesMatch(p, r))
                .min(Comparator.<PackageEntry>comparingInt(p -> rank(p.priority())).thenComparing(PackageEntry::name));
    }

    private static boolean providesMatch(PackageEntry p, Relation r) {
        return p.provides().stream().anyMatch(pr -> r.satisfiedBy(pr.name(), pr.version()));
    }

    private static int rank(String priority) {
        int i = PRIORITIES.indexOf(priority);
        return i < 0 ? PRIORITIES.size() : i;
    }

    private String chain(String name) {
        List<String> out = new ArrayList<>();
        String at = name;
        while (at != null && !at.equals("requested") && out.size() < 20 && !out.contains(at)) {
            out.add(at);
            at = why.get(at);
        }
        return String.join(" <- ", out) + " <- requested";
    }

    private static dev.kosa8.host.KosaException unsatisfied(String what, String chain) {
        return new dev.kosa8.host.KosaException(dev.kosa8.host.KosaException.Kind.IMAGE,
                "cannot resolve the image's packages: " + what + " (needed by " + chain + ")",
                "check the suite and include list (a package renamed or dropped in the suite), or the mirror's "
                        + "completeness (KOSA8_DEBIAN_MIRROR)");
    }
}
