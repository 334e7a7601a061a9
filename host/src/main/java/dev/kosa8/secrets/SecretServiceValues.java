package dev.kosa8.secrets;

import dev.kosa8.host.HostTools;
import dev.kosa8.host.KosaException;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * Secret values in the freedesktop Secret Service (GNOME Keyring, KeePassXC,
 * KWallet), the keyring a Linux desktop unlocks at login, driven through
 * {@code secret-tool} from libsecret (Debian: libsecret-tools). Each value is
 * an item with the attributes {@code application=kosa8} and {@code name=NAME},
 * labelled {@code kosa8 NAME}, so the user finds it in Seahorse or KeePassXC.
 *
 * <p>{@code secret-tool store} reads the value from its standard input, which
 * keeps it off every command line. The tools reach the keyring over the D-Bus
 * session bus named by {@code DBUS_SESSION_BUS_ADDRESS}; a process without
 * one (a daemon started from cron or ssh) cannot read these values, and
 * {@link SecretBackends} says so instead of failing obscurely.
 */
final class SecretServiceValues implements SecretValues {
    static final String ID = "secret-service";
    static final String TOOL = "secret-tool";
    static final String PACKAGE = "libsecret-tools";
    /** Long enough for a user to answer the desktop's unlock prompt. */
    private static final Duration TIMEOUT = Duration.ofSeconds(60);

    private final Map<String, String> env;

    /** @param env variables for {@code secret-tool} on top of this process's own, the D-Bus address above all */
    SecretServiceValues(Map<String, String> env) {
        this.env = Map.copyOf(env);
    }

    @Override
    public String id() {
        return ID;
    }

    @Override
    public String description() {
        return "Secret Service (desktop keyring)";
    }

    static List<String> storeCommand(String name) {
        return List.of(TOOL, "store", "--label=kosa8 " + name, "application", "kosa8", "name", name);
    }

    static List<String> lookupCommand(String name) {
        return List.of(TOOL, "lookup", "application", "kosa8", "name", name);
    }

    static List<String> clearCommand(String name) {
        return List.of(TOOL, "clear", "application", "kosa8", "name", name);
    }

    static List<String> probeCommand() {
        return List.of(TOOL, "search", "application", "kosa8");
    }

    @Override
    public void put(String name, String value) {
        var r = Subprocess.run(storeCommand(name), env, value, TIMEOUT, "storing " + name + " in the Secret Service");
        if (r.exit() != 0) {
            throw failure("cannot store " + name, r);
        }
    }

    @Override
    public Optional<String> get(String name) {
        var r = Subprocess.run(lookupCommand(name), env, "", TIMEOUT, "reading " + name + " from the Secret Service");
        if (r.exit() == 0) {
            String v = r.out();
            return Optional.of(v.endsWith("\n") ? v.substring(0, v.length() - 1) : v);
        }
        if (r.exit() == 1 && r.err().isEmpty()) {
            return Optional.empty(); // secret-tool's way of saying "no such item"
        }
        throw failure("cannot read " + name, r);
    }

    @Override
    public void remove(String name) {
        var r = Subprocess.run(clearCommand(name), env, "", TIMEOUT, "removing " + name + " from the Secret Service");
        if (r.exit() != 0 && !(r.exit() == 1 && r.err().isEmpty())) {
            throw failure("cannot remove " + name, r);
        }
    }

    /**
     * Why this process cannot use the Secret Service, or null when it can: the
     * tool is installed, a session bus is named, and a search answers within
     * {@code timeout} (a search unlocks nothing, so it never waits for a prompt).
     */
    static String problem(Map<String, String> env, Duration timeout) {
        String basic = unreachable(env);
        if (basic != null) {
            return basic;
        }
        try {
            var r = Subprocess.run(probeCommand(), env, "", timeout, "asking the Secret Service");
            return r.exit() == 0 ? null : "secret-tool search failed: " + firstLine(r.err());
        } catch (KosaException e) {
            return e.getMessage();
        }
    }

    /** Why secret-tool cannot even try, or null: checked before each read, with no process started. */
    static String unreachable(Map<String, String> env) {
        if (HostTools.which(TOOL) == null) {
            return TOOL + " is not installed (Debian: " + PACKAGE + ")";
        }
        String bus = env.get("DBUS_SESSION_BUS_ADDRESS");
        if (bus == null || bus.isBlank()) {
            return "no D-Bus session (DBUS_SESSION_BUS_ADDRESS is not set)";
        }
        return null;
    }

    private static KosaException failure(String what, Subprocess.Result r) {
        return new KosaException(KosaException.Kind.HOST, what + ": secret-tool exited with status " + r.exit()
                + (r.err().isEmpty() ? "" : ": " + firstLine(r.err())),
                "check that your keyring is unlocked (Seahorse, KeePassXC), or set KOSA8_SECRET_STORE=file");
    }

    private static String firstLine(String s) {
        return s.isEmpty() ? "(no message)" : s.lines().findFirst().orElse("");
    }
}
