package dev.kosa8.vm;

import com.fasterxml.jackson.annotation.JsonAlias;
import dev.kosa8.host.KosaException;
import java.util.Locale;

/**
 * How the guest kernel reaches the workspace's port, and whether it caches the folder.
 * {@link #AUTO} (the default): its own 9p transport, the image's {@code kosa8_ws9p} module, with the
 * folder's names, attributes and pages cached in the guest, kept true to the host by notices of what
 * changes there (docs/workspace.md, "Caching in the guest"); where the image has no module, the agent's
 * relay, uncached. {@link #UNCACHED}: the module without the cache, every read and stat crossing to the
 * host (for diagnosis, and the baseline the cache's benchmark compares with). {@link #RELAY}: the relay
 * even where the module is, for diagnosis (2-3x slower on small files under TCG) and so that the relay,
 * every image's fallback, stays tested. The label {@code cached}, the cache's name while it was not the
 * default, is {@link #AUTO}.
 */
public enum WorkspaceTransport {
    @JsonAlias("CACHED")
    AUTO,
    UNCACHED,
    RELAY;

    public String label() {
        return name().toLowerCase(Locale.ROOT);
    }

    /** Whether the guest caches the folder (where its image has the module). */
    public boolean cached() {
        return this == AUTO;
    }

    /** Parses a label; empty is {@link #AUTO} (records from before there was a choice). */
    public static WorkspaceTransport parse(String label) {
        if (label == null || label.isEmpty() || label.equalsIgnoreCase("cached")) {
            return AUTO;
        }
        for (WorkspaceTransport t : values()) {
            if (t.label().equals(label.toLowerCase(Locale.ROOT))) {
                return t;
            }
        }
        throw new KosaException(KosaException.Kind.USAGE, "unknown workspace transport '" + label + "'",
                "use auto (the default: the folder cached in the guest), uncached or relay");
    }
}
