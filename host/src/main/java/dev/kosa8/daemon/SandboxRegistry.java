package dev.kosa8.daemon;

import dev.kosa8.host.KosaException;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/** The sandboxes the daemon knows, by id. */
final class SandboxRegistry {
    private final Map<String, Sandbox> sandboxes = new ConcurrentHashMap<>();

    void add(Sandbox s) {
        sandboxes.put(s.id(), s);
    }

    void remove(String id) {
        sandboxes.remove(id);
    }

    Collection<Sandbox> all() {
        return sandboxes.values();
    }

    /** Every sandbox, oldest first. */
    List<Sandbox> list() {
        List<Sandbox> all = new ArrayList<>(sandboxes.values());
        all.sort(Comparator.comparing((Sandbox s) -> s.record().created()));
        return all;
    }

    /** Finds a sandbox by its id or a unique prefix of it. */
    Sandbox get(String idOrPrefix) {
        Sandbox exact = sandboxes.get(idOrPrefix);
        if (exact != null) {
            return exact;
        }
        List<Sandbox> matches = idOrPrefix.isEmpty() ? List.of()
                : sandboxes.values().stream().filter(s -> s.id().startsWith(idOrPrefix)).toList();
        if (matches.size() == 1) {
            return matches.getFirst();
        }
        if (matches.size() > 1) {
            throw new KosaException(KosaException.Kind.USAGE, "'" + idOrPrefix + "' matches " + matches.size()
                    + " sandboxes", "give more characters of the id (see `kosa8 ls`)");
        }
        throw new KosaException(KosaException.Kind.USAGE, "no sandbox '" + idOrPrefix + "'",
                "`kosa8 ls` lists your sandboxes");
    }
}
