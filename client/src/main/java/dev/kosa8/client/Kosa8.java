package dev.kosa8.client;

import java.nio.file.Path;
import java.util.List;

/**
 * The kosa8 Java SDK's entry point: a connection to the kosa8 daemon on this
 * machine, which runs the sandboxes.
 * <pre>{@code
 * Kosa8 kosa8 = Kosa8.connect();
 * try (Sandbox s = kosa8.create(SandboxSpec.builder().allow("pypi.org").build())) {
 *     System.out.print(s.exec("python3", "-c", "print(6*7)").stdout());   // 42
 * }
 * }</pre>
 * The daemon is started by any {@code kosa8} command (such as {@code kosa8 ls}); the SDK does not start
 * it, so that a program never runs a daemon of another build than the user's. Holds no resources: each call opens
 * its own connection, and it is safe to use from many threads.
 */
public final class Kosa8 {
    private final DaemonConnection daemon;

    private Kosa8(DaemonConnection daemon) {
        this.daemon = daemon;
    }

    /** Connects to the user's daemon ({@link DaemonConnection#defaultSocket()}). */
    public static Kosa8 connect() {
        return connect(DaemonConnection.defaultSocket());
    }

    /**
     * Connects to the daemon at {@code socket}.
     *
     * @throws DaemonUnavailableException if no daemon answers there
     */
    public static Kosa8 connect(Path socket) {
        DaemonConnection d = new DaemonConnection(socket, "start it with any kosa8 command, such as `kosa8 ls`; "
                + "`kosa8 doctor` checks it");
        if (d.version() == null) {
            throw new DaemonUnavailableException("no kosa8 daemon answers at " + socket,
                    "start it with any kosa8 command, such as `kosa8 ls`", null);
        }
        return new Kosa8(d);
    }

    /** The daemon's version. */
    public String version() {
        return Json.text(daemon.call("GET", "/v1/version"), "version");
    }

    /** Creates a sandbox and returns once it is booted and its folder mounted. */
    public Sandbox create(SandboxSpec spec) {
        Object s = daemon.call("POST", "/v1/sandboxes?" + spec.query());
        return new Sandbox(daemon, Json.text(s, "id"), !spec.keep());
    }

    /** Creates a sandbox with the defaults: the default image, a closed network, no folder. */
    public Sandbox create() {
        return create(SandboxSpec.builder().build());
    }

    /** An existing sandbox by id or unique prefix; closing it leaves it be. */
    public Sandbox sandbox(String idOrPrefix) {
        Object s = daemon.call("GET", "/v1/sandboxes/" + Sandbox.enc(idOrPrefix));
        return new Sandbox(daemon, Json.text(s, "id"), false);
    }

    /** Every sandbox the daemon knows. */
    public List<SandboxInfo> sandboxes() {
        return Json.list(daemon.call("GET", "/v1/sandboxes")).stream().map(SandboxInfo::of).toList();
    }

    /** The connection itself, for calls the SDK does not wrap (docs/api.md). */
    public DaemonConnection connection() {
        return daemon;
    }
}
