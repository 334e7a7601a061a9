package dev.kosa8.host;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Map;

/**
 * Where kosa8 keeps things on the host, following the XDG base directory spec.
 *
 * <ul>
 *   <li>{@code data}: guest images and sandboxes ({@code $XDG_DATA_HOME/kosa8});</li>
 *   <li>{@code cache}: downloaded packages and probe results ({@code $XDG_CACHE_HOME/kosa8});</li>
 *   <li>{@code runtime}: the daemon's socket and per-sandbox sockets
 *       ({@code $XDG_RUNTIME_DIR/kosa8}, else {@code /tmp/kosa8-UID}), mode 0700.</li>
 * </ul>
 *
 * {@code KOSA8_HOME}, when set, puts all three under one folder: tests use it
 * to stay apart from the user's own sandboxes. Unix socket paths are limited to
 * 107 bytes (103 on macOS: {@link UnixSocketPaths}), which is why sockets live in the short runtime directory.
 */
public record HostPaths(Path data, Path cache, Path runtime) {

    public static HostPaths fromEnvironment() {
        return from(System.getenv(), System.getProperty("user.home"));
    }

    static HostPaths from(Map<String, String> env, String userHome) {
        String home = env.get("KOSA8_HOME");
        if (home != null && !home.isBlank()) {
            Path root = Path.of(home).toAbsolutePath();
            return new HostPaths(root.resolve("data"), root.resolve("cache"), root.resolve("run"));
        }
        Path user = Path.of(userHome);
        Path data = xdg(env, "XDG_DATA_HOME", user.resolve(".local/share")).resolve("kosa8");
        Path cache = xdg(env, "XDG_CACHE_HOME", user.resolve(".cache")).resolve("kosa8");
        String runtimeDir = env.get("XDG_RUNTIME_DIR");
        Path runtime = runtimeDir != null && !runtimeDir.isBlank()
                ? Path.of(runtimeDir).resolve("kosa8")
                : Path.of("/tmp", "kosa8-" + uid());
        return new HostPaths(data, cache, runtime);
    }

    /**
     * The user's kosa8 configuration directory (network presets):
     * {@code $KOSA8_HOME/config}, else {@code $XDG_CONFIG_HOME/kosa8}, else
     * {@code ~/.config/kosa8}.
     */
    public static Path config() {
        Map<String, String> env = System.getenv();
        String home = env.get("KOSA8_HOME");
        if (home != null && !home.isBlank()) {
            return Path.of(home).toAbsolutePath().resolve("config");
        }
        return xdg(env, "XDG_CONFIG_HOME", Path.of(System.getProperty("user.home"), ".config")).resolve("kosa8");
    }

    private static Path xdg(Map<String, String> env, String name, Path fallback) {
        String v = env.get(name);
        return v == null || v.isBlank() ? fallback : Path.of(v);
    }

    private static String uid() {
        try {
            return String.valueOf(Files.getAttribute(Path.of("/proc/self"), "unix:uid"));
        } catch (IOException | UnsupportedOperationException e) {
            return System.getProperty("user.name", "user");
        }
    }

    public Path images() {
        return data.resolve("images");
    }

    public Path sandboxes() {
        return data.resolve("sandboxes");
    }

    public Path daemonSocket() {
        return runtime.resolve("kosa8d.sock");
    }

    /**
     * The build of the daemon serving {@link #daemonSocket()}, one line, which
     * it writes once it listens: the CLI reads it instead of asking the daemon
     * ({@code GET /v1/version}, a round trip before every command).
     */
    public Path daemonBuild() {
        return runtime().resolve("kosa8d.build");
    }

    public Path daemonLog() {
        return data.resolve("kosa8d.log");
    }

    /**
     * Creates a directory readable by the user only (0700), with its parents.
     * An existing one must belong to this user: in a shared {@code /tmp},
     * another user could have made it first to watch or replace our sockets.
     */
    public static Path privateDirectory(Path dir) {
        try {
            Files.createDirectories(dir);
            Object owner = Files.getAttribute(dir, "unix:uid", java.nio.file.LinkOption.NOFOLLOW_LINKS);
            Object me = Files.getAttribute(Path.of("/proc/self"), "unix:uid");
            if (!owner.equals(me)) {
                throw new KosaException(KosaException.Kind.HOST, dir + " belongs to another user (uid " + owner + ")",
                        "remove it, or set XDG_RUNTIME_DIR or KOSA8_HOME to a directory of your own");
            }
            Files.setPosixFilePermissions(dir, PosixFilePermissions.fromString("rwx------"));
            return dir;
        } catch (IOException e) {
            throw new KosaException(KosaException.Kind.HOST,
                    "cannot create directory " + dir + ": " + e.getMessage(),
                    "check that the parent directory is writable, or set KOSA8_HOME to a writable folder", e);
        }
    }
}
