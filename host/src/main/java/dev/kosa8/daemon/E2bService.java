package dev.kosa8.daemon;

import com.fasterxml.jackson.databind.JsonNode;
import dev.kosa8.e2b.E2bListener;
import dev.kosa8.host.HostPaths;
import dev.kosa8.host.KosaException;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.function.Consumer;

/**
 * The daemon's E2B listener (docs/e2b.md): started by `kosa8 e2b start` and from then on with every daemon
 * (its address and port in {@code e2b.json} in the configuration directory), stopped by `kosa8 e2b stop`. Its API
 * key is made once and kept in {@code e2b-api-key} (0600) beside it.
 */
final class E2bService {
    static final int DEFAULT_PORT = 49982;

    private final SandboxManager mgr;
    private final Path dir;
    private final Consumer<String> log;
    private E2bListener listener;

    E2bService(SandboxManager mgr, Path configDir, Consumer<String> log) {
        this.mgr = mgr;
        this.dir = configDir;
        this.log = log;
    }

    /** At daemon start: the listener again when it was on. */
    synchronized void restore() {
        Path f = dir.resolve("e2b.json");
        if (!Files.exists(f)) {
            return;
        }
        try {
            JsonNode n = SandboxStore.JSON.readTree(f.toFile());
            if (n.path("enabled").asBoolean(false)) {
                start(n.path("address").asText("127.0.0.1"), n.path("port").asInt(DEFAULT_PORT));
            }
        } catch (IOException | KosaException e) {
            log.accept("e2b: the listener was not started again: " + e.getMessage());
        }
    }

    synchronized Map<String, Object> start(String address, int port) {
        if (listener != null) {
            if (listener.port() == port || port == 0) {
                return status();
            }
            listener.close();
            listener = null;
        }
        if (port < 0 || port > 65535) {
            throw new KosaException(KosaException.Kind.USAGE, "a port is 0 to 65535", "");
        }
        try {
            HostPaths.privateDirectory(dir);
            listener = E2bListener.start(new E2bBridge(mgr), address, port, apiKey(), dir.resolve("e2b-sandboxes.json"),
                    log);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new KosaException(KosaException.Kind.DAEMON, "interrupted", "");
        } catch (RuntimeException e) {
            throw new KosaException(KosaException.Kind.USAGE, "cannot listen on " + address + ":" + port + ": "
                    + e.getMessage(), "choose another with `kosa8 e2b start --port P`");
        }
        save(Map.of("enabled", true, "address", address, "port", listener.port()));
        log.accept("e2b: listening on " + listener.url());
        return status();
    }

    synchronized Map<String, Object> stop() {
        if (listener != null) {
            listener.close();
            listener = null;
        }
        save(Map.of("enabled", false));
        return status();
    }

    synchronized Map<String, Object> status() {
        Map<String, Object> v = new LinkedHashMap<>();
        v.put("running", listener != null);
        if (listener != null) {
            v.put("url", listener.url());
            v.put("port", listener.port());
            v.put("apiKey", apiKey());
        }
        return v;
    }

    synchronized void close() {
        if (listener != null) {
            listener.close();
            listener = null;
        }
    }

    private String apiKey() {
        Path f = dir.resolve("e2b-api-key");
        try {
            if (Files.exists(f)) {
                String k = Files.readString(f, StandardCharsets.UTF_8).strip();
                if (k.matches("e2b_[0-9a-f]{40}")) {
                    return k;
                }
            }
            HostPaths.privateDirectory(dir);
            String k = E2bListener.newApiKey();
            Path tmp = dir.resolve("e2b-api-key.tmp");
            Files.deleteIfExists(tmp);
            Files.createFile(tmp, PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------")));
            Files.writeString(tmp, k + "\n", StandardCharsets.UTF_8, StandardOpenOption.TRUNCATE_EXISTING);
            Files.move(tmp, f, java.nio.file.StandardCopyOption.REPLACE_EXISTING,
                    java.nio.file.StandardCopyOption.ATOMIC_MOVE);
            return k;
        } catch (IOException e) {
            throw new KosaException(KosaException.Kind.DAEMON, "cannot keep the E2B API key in " + f + ": "
                    + e.getMessage(), "");
        }
    }

    private void save(Map<String, Object> v) {
        try {
            HostPaths.privateDirectory(dir);
            Files.write(dir.resolve("e2b.json"), SandboxStore.JSON.writeValueAsBytes(v));
        } catch (IOException e) {
            log.accept("e2b: cannot save e2b.json: " + e.getMessage());
        }
    }
}
