package dev.kosa8.cli;

import dev.kosa8.client.Kosa8Exception;
import dev.kosa8.client.DaemonConnection;
import dev.kosa8.client.Json;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.kosa8.host.HostPaths;
import dev.kosa8.host.KosaException;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.UnixDomainSocketAddress;
import java.nio.channels.Channels;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * The CLI's side of the daemon's REST API: the Java SDK's
 * {@link DaemonConnection} (the same transport every SDK user has), with
 * its failures as the CLI's own {@link KosaException}, plus what only the
 * CLI does: start the daemon, stop it.
 */
public final class DaemonClient {
    private final HostPaths paths;
    private final DaemonConnection connection;

    public DaemonClient(HostPaths paths) {
        this.paths = paths;
        this.connection = new DaemonConnection(paths.daemonSocket(),
                "see its log at " + paths.daemonLog() + "; `kosa8 doctor` checks it");
    }

    /** The SDK's connection to the same daemon. */
    public DaemonConnection connection() {
        return connection;
    }

    /** A response: status and JSON body. */
    public record Response(int status, JsonNode body) {
    }

    /**
     * Jackson's data binding, for the commands that show or take JSON as it
     * is (inspect, doctor) and for {@link #get} and the like. Made on first
     * use: the commands of {@link HotPath} never need it.
     */
    static ObjectMapper json() {
        return Databind.JSON;
    }

    private static final class Databind {
        static final ObjectMapper JSON = new ObjectMapper().findAndRegisterModules();
    }

    public JsonNode get(String path) {
        return expectOk(request("GET", path));
    }

    public JsonNode post(String path) {
        return expectOk(request("POST", path));
    }

    public JsonNode delete(String path) {
        return expectOk(request("DELETE", path));
    }

    /** Turns an error response into the daemon's own KosaException. */
    static JsonNode expectOk(Response r) {
        if (r.status() >= 200 && r.status() < 300) {
            return r.body();
        }
        JsonNode b = r.body();
        throw cli(DaemonConnection.error(r.status(), java.util.Map.of(
                "kind", b.path("kind").asText(""), "error", b.path("error").asText(""),
                "suggestion", b.path("suggestion").asText(""), "exitCode", b.path("exitCode").asLong(0))));
    }

    /** An SDK failure as the CLI's KosaException: same kind, message, suggestion and exit code. */
    static KosaException cli(Kosa8Exception e) {
        KosaException.Kind kind = KosaException.Kind.valueOf(e.kind().name());
        return e.exitCode() == kind.exitCode() ? new KosaException(kind, e.getMessage(), e.suggestion(), e.getCause())
                : KosaException.withExitCode(kind, e.getMessage(), e.suggestion(), e.exitCode());
    }

    public Response request(String method, String path) {
        DaemonConnection.Raw r = raw(method, path);
        try {
            return new Response(r.status(), r.body().length == 0 ? json().createObjectNode() : json().readTree(r.body()));
        } catch (IOException e) {
            throw new KosaException(KosaException.Kind.DAEMON, "the daemon's answer is not JSON: " + e.getMessage(),
                    "see its log at " + paths.daemonLog(), e);
        }
    }

    /**
     * A request whose answer is read as plain values ({@link Json}): the
     * answer on success, the daemon's own error as a KosaException otherwise.
     */
    Object call(String method, String path) {
        return call(method, path, new byte[0], "");
    }

    /** One request on a connection of its own: its status and body. */
    DaemonConnection.Raw raw(String method, String path) {
        try {
            return connection.raw(method, path);
        } catch (Kosa8Exception e) {
            throw cli(e);
        }
    }

    /**
     * A request with a body ({@code contentType} such as {@code application/json}) whose answer is read as
     * {@link #call} reads it.
     */
    Object call(String method, String path, byte[] body, String contentType) {
        try {
            return connection.call(method, path, body, contentType);
        } catch (Kosa8Exception e) {
            throw cli(e);
        }
    }

    /** Opens an exec stream: sends the request and waits for {@code 101 Switching Protocols}. */
    public DaemonConnection.Stream upgrade(String path) {
        try {
            return connection.upgrade(path);
        } catch (Kosa8Exception e) {
            throw cli(e);
        }
    }

    /** True if a daemon answers on the socket. */
    public boolean isUp() {
        return version() != null;
    }

    /** The daemon's answer to {@code GET /v1/version}, or null when none answers. */
    private Object version() {
        return connection.version();
    }

    /**
     * Makes sure a daemon of this very build answers, starting one if needed:
     * no request when its build file names this build and its socket takes a
     * connection; else one {@code GET /v1/version}. A daemon of another build (the jar was
     * rebuilt) is asked to stop and replaced; sandboxes keep running and the
     * new daemon re-attaches to them.
     */
    public void ensureRunning(String build, Duration timeout) {
        if (ownBuildListens(build)) {
            return;
        }
        Object version = version();
        if (version != null) {
            if (Json.text(version, "build").equals(build)) {
                return;
            }
            stopDaemon();
        }
        DaemonLauncher.launch(paths);
        long deadline = System.nanoTime() + timeout.toNanos();
        while (System.nanoTime() < deadline) {
            if (isUp()) {
                return;
            }
            sleep(50);
        }
        throw new KosaException(KosaException.Kind.DAEMON, "kosa8d did not start within " + timeout.toSeconds() + " s",
                "see its log at " + paths.daemonLog());
    }

    /**
     * True when the daemon's build file names {@code build}, is no older than
     * the socket, and the socket takes a connection: no request, so no round
     * trip (40-130 ms of every command when it asked {@code GET /v1/version}:
     * docs/performance.md). A daemon killed outright leaves both files; its
     * socket then refuses. A daemon writes the file after it binds its socket
     * (and removes any before), so a file older than the socket is another
     * daemon's: one that wrote none (a build from before the file) serves.
     */
    private boolean ownBuildListens(String build) {
        try {
            Path file = paths.daemonBuild();
            if (!Files.readString(file).strip().equals(build) || Files.getLastModifiedTime(file)
                    .compareTo(Files.getLastModifiedTime(paths.daemonSocket())) < 0) {
                return false;
            }
            SocketChannel.open(UnixDomainSocketAddress.of(paths.daemonSocket())).close();
            return true;
        } catch (IOException | RuntimeException e) {
            return false; // no file, or none listens: ask, and start one
        }
    }

    /**
     * Asks the daemon to exit and returns once its process is gone; a daemon
     * that cannot stop by itself (say its jar vanished) is killed after 10 s.
     * Its sandboxes keep running.
     *
     * @return false if no daemon was running
     */
    public boolean stopDaemon() {
        Object version = version();
        if (version == null) {
            return false;
        }
        long pid = Json.number(version, "pid");
        try {
            request("POST", "/v1/shutdown");
        } catch (KosaException e) {
            // it may close the connection as it goes
        }
        ProcessHandle.of(pid).ifPresent(h -> {
            try {
                h.onExit().get(10, java.util.concurrent.TimeUnit.SECONDS);
            } catch (java.util.concurrent.TimeoutException e) {
                h.destroyForcibly();
                h.onExit().completeOnTimeout(h, 5, java.util.concurrent.TimeUnit.SECONDS).join();
            } catch (Exception ignored) {
                // gone already
            }
        });
        waitGone(Duration.ofSeconds(5));
        return true;
    }

    void waitGone(Duration timeout) {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (System.nanoTime() < deadline && Files.exists(paths.daemonSocket())) {
            sleep(50);
        }
    }

    private static void sleep(long ms) {
        try {
            Thread.sleep(ms);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
