package dev.kosa8.secrets;

import dev.kosa8.host.HostTools;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/**
 * A private, headless Secret Service for tests: a D-Bus session bus
 * ({@code dbus-run-session}) with GNOME Keyring in it, its login keyring
 * unlocked with a throw-away password, all files in a temporary home. It
 * lives while its shell reads standard input; {@link #close} ends that input,
 * which ends the bus, and GNOME Keyring leaves with its bus.
 */
final class SecretServiceSession implements AutoCloseable {
    static final List<String> TOOLS = List.of("dbus-run-session", "gnome-keyring-daemon", "secret-tool");
    private static final String SCRIPT = "printf test-password | gnome-keyring-daemon --unlock --components=secrets "
            + ">/dev/null || exit 1; echo \"$DBUS_SESSION_BUS_ADDRESS\"; exec cat >/dev/null";

    private final Process process;
    private final Path home;
    private final String address;

    private SecretServiceSession(Process process, Path home, String address) {
        this.process = process;
        this.home = home;
        this.address = address;
    }

    static boolean available() {
        return TOOLS.stream().allMatch(t -> HostTools.which(t) != null);
    }

    static SecretServiceSession start(Path home) throws Exception {
        Path run = home.resolve("run");
        Files.createDirectories(run);
        Files.setPosixFilePermissions(run, PosixFilePermissions.fromString("rwx------"));
        ProcessBuilder pb = new ProcessBuilder("dbus-run-session", "--", "sh", "-c", SCRIPT)
                .redirectError(home.resolve("session.log").toFile());
        var env = pb.environment();
        env.keySet().removeAll(List.of("DBUS_SESSION_BUS_ADDRESS", "DISPLAY", "WAYLAND_DISPLAY",
                "GNOME_KEYRING_CONTROL"));
        env.put("HOME", home.toString());
        env.put("XDG_RUNTIME_DIR", run.toString());
        env.put("XDG_DATA_HOME", home.resolve("data").toString());
        env.put("XDG_CONFIG_HOME", home.resolve("config").toString());
        env.put("XDG_CACHE_HOME", home.resolve("cache").toString());
        Process p = pb.start();
        CompletableFuture<String> line = CompletableFuture.supplyAsync(() -> {
            try {
                return new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8)).readLine();
            } catch (IOException e) {
                return null;
            }
        });
        String address;
        try {
            address = line.get(20, TimeUnit.SECONDS);
        } catch (Exception e) {
            address = null;
        }
        SecretServiceSession s = new SecretServiceSession(p, home, address);
        if (address == null || address.isBlank()) {
            s.close();
            throw new IllegalStateException("no Secret Service session came up: "
                    + Files.readString(home.resolve("session.log")));
        }
        return s;
    }

    String address() {
        return address;
    }

    @Override
    public void close() throws IOException {
        process.getOutputStream().close();
        try {
            if (!process.waitFor(10, TimeUnit.SECONDS)) {
                process.descendants().forEach(ProcessHandle::destroyForcibly);
                process.destroyForcibly();
                process.waitFor(5, TimeUnit.SECONDS);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            process.destroyForcibly();
        }
        // GNOME Keyring detaches from the shell; it quits with its bus, but make sure ours is gone.
        for (ProcessHandle h : ProcessHandle.allProcesses().toList()) {
            if (h.info().command().orElse("").endsWith("/gnome-keyring-daemon") && ranIn(h.pid())) {
                h.destroyForcibly();
            }
        }
    }

    private boolean ranIn(long pid) {
        try {
            byte[] environ = Files.readAllBytes(Path.of("/proc", Long.toString(pid), "environ"));
            return new String(environ, StandardCharsets.UTF_8).contains("HOME=" + home + "\0");
        } catch (IOException e) {
            return false;
        }
    }
}
