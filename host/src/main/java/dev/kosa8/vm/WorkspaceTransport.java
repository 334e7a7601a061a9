package dev.kosa8.vm;

import dev.kosa8.host.KosaException;
import java.util.Locale;

/**
 * How the guest kernel reaches the workspace's port. {@link #AUTO} (the
 * default): its own 9p transport, the image's {@code kosa8_ws9p} module, where
 * the image has it, else the agent's relay. {@link #RELAY}: the relay even
 * where the module is, for diagnosis (it is 2-3x slower on small files under
 * TCG) and so that the relay, every image's fallback, stays tested.
 * {@link #CACHED}: as auto, and the guest caches the folder's names,
 * attributes and pages, kept true to the host by notices of what changes
 * there (docs/workspace.md, "Caching in the guest"); where the image has no
 * module, as auto.
 */
public enum WorkspaceTransport {
    AUTO, RELAY, CACHED;

    public String label() {
        return name().toLowerCase(Locale.ROOT);
    }

    /** Parses a label; empty is {@link #AUTO} (records from before there was a choice). */
    public static WorkspaceTransport parse(String label) {
        if (label == null || label.isEmpty()) {
            return AUTO;
        }
        for (WorkspaceTransport t : values()) {
            if (t.label().equals(label.toLowerCase(Locale.ROOT))) {
                return t;
            }
        }
        throw new KosaException(KosaException.Kind.USAGE, "unknown workspace transport '" + label + "'",
                "use auto (the default), cached or relay");
    }
}
