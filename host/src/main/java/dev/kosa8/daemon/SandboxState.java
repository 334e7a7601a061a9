package dev.kosa8.daemon;

import java.util.Locale;

/** Where a sandbox is in its life. Operations name the state when they refuse. */
public enum SandboxState {
    /** Its machine is booting. */
    STARTING,
    /** Its machine runs and its agent answers. */
    RUNNING,
    /** Its machine is off; its disk is kept. */
    STOPPED,
    /** Its machine died or never came up; its logs are kept for `kosa8 logs`. */
    FAILED,
    /** It is being removed. */
    REMOVING;

    /** The state as messages name it: {@code running}, {@code stopped}. */
    String label() {
        return name().toLowerCase(Locale.ROOT);
    }
}
