package dev.kosa8.cli;

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
 * The CLI's side of the daemon's REST API, over the daemon's unix socket.
 *
 * <p>A deliberately small HTTP/1.1 client: one request per connection,
 * {@code Content-Length} bodies, and the {@code Upgrade} handshake for exec
 * streams. Written here rather than taken from a library because the JDK's
 * HttpClient cannot use a unix socket, and a general client (Netty's) would
 * add its class loading to every CLI command's start-up, which kosa8 keeps
 * under 150 ms. The daemon side is Netty's full HTTP codec.
 */
public final class DaemonClient {
    private static final int MAX_HEADER = 64 * 1024;
    private static final int MAX_BODY = 64 * 1024 * 1024;

    private final HostPaths paths;

    public DaemonClient(HostPaths paths) {
        this.paths = paths;
    }

    /** A response: status and JSON body. */
    public record Response(int status, JsonNode body) {
    }

    /** A response as it came: status and body. */
    record Raw(int status, byte[] body) {
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

    /** An upgraded connection: raw streams speaking the agent protocol. */
    /** An agent-protocol stream; {@code sandbox} is the id the daemon named in its answer ("" if none). */
    public record Stream(SocketChannel socket, InputStream in, OutputStream out, String sandbox) implements AutoCloseable {
        @Override
        public void close() throws IOException {
            socket.close();
        }
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
        throw error(r.status(), b.path("kind").asText("INTERNAL"), b.path("error").asText(""),
                b.path("suggestion").asText(""));
    }

    /** The daemon's error answer as its own KosaException. */
    private static KosaException error(int status, String kindName, String message, String suggestion) {
        KosaException.Kind kind;
        try {
            kind = KosaException.Kind.valueOf(kindName.isEmpty() ? "INTERNAL" : kindName);
        } catch (IllegalArgumentException e) {
            kind = KosaException.Kind.INTERNAL;
        }
        return new KosaException(kind, message.isEmpty() ? "the daemon answered HTTP " + status : message,
                suggestion);
    }

    public Response request(String method, String path) {
        Raw r = raw(method, path);
        try {
            return new Response(r.status(), r.body().length == 0 ? json().createObjectNode() : json().readTree(r.body()));
        } catch (IOException e) {
            throw unreachable(e);
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
    Raw raw(String method, String path) {
        return raw(method, path, new byte[0], "");
    }

    /**
     * A request with a body ({@code contentType} such as {@code application/json}) whose answer is read as
     * {@link #call} reads it.
     */
    Object call(String method, String path, byte[] body, String contentType) {
        Raw r = raw(method, path, body, contentType);
        Object answer;
        try {
            answer = r.body().length == 0 ? java.util.Map.of() : Json.parse(r.body());
        } catch (IOException e) {
            throw unreachable(e);
        }
        if (r.status() >= 200 && r.status() < 300) {
            return answer;
        }
        throw error(r.status(), Json.text(answer, "kind"), Json.text(answer, "error"), Json.text(answer,
                "suggestion"));
    }

    private Raw raw(String method, String path, byte[] requestBody, String contentType) {
        try (SocketChannel ch = connect()) {
            OutputStream out = Channels.newOutputStream(ch);
            List<String> headers = new ArrayList<>(List.of("Connection: close",
                    "Content-Length: " + requestBody.length));
            if (!contentType.isEmpty()) {
                headers.add("Content-Type: " + contentType);
            }
            out.write(head(method, path, headers));
            out.write(requestBody);
            out.flush();
            InputStream in = Channels.newInputStream(ch);
            Head h = readHead(in);
            byte[] body = h.contentLength >= 0 ? in.readNBytes(h.contentLength) : in.readNBytes(MAX_BODY);
            return new Raw(h.status, body);
        } catch (IOException e) {
            throw unreachable(e);
        }
    }

    /** Opens an exec stream: sends the request and waits for {@code 101 Switching Protocols}. */
    public Stream upgrade(String path) {
        SocketChannel ch = null;
        try {
            ch = connect();
            OutputStream out = Channels.newOutputStream(ch);
            out.write(head("POST", path, List.of("Connection: Upgrade", "Upgrade: kosa8-stream", "Content-Length: 0")));
            out.flush();
            InputStream in = Channels.newInputStream(ch);
            Head h = readHead(in);
            if (h.status != 101) {
                byte[] body = h.contentLength >= 0 ? in.readNBytes(h.contentLength) : in.readNBytes(MAX_BODY);
                ch.close();
                Object b = body.length == 0 ? java.util.Map.of() : Json.parse(body);
                if (h.status < 200 || h.status >= 300) {
                    throw error(h.status, Json.text(b, "kind"), Json.text(b, "error"), Json.text(b, "suggestion"));
                }
                throw new KosaException(KosaException.Kind.DAEMON, "the daemon did not open a stream (HTTP " + h.status + ")", "");
            }
            return new Stream(ch, in, out, h.sandbox());
        } catch (IOException e) {
            closeQuietly(ch);
            throw unreachable(e);
        }
    }

    private SocketChannel connect() throws IOException {
        return SocketChannel.open(UnixDomainSocketAddress.of(paths.daemonSocket()));
    }

    private static byte[] head(String method, String path, List<String> headers) {
        StringBuilder sb = new StringBuilder(method).append(' ').append(path).append(" HTTP/1.1\r\nHost: kosa8d\r\n");
        headers.forEach(x -> sb.append(x).append("\r\n"));
        return sb.append("\r\n").toString().getBytes(StandardCharsets.US_ASCII);
    }

    private record Head(int status, int contentLength, String sandbox) {
    }

    /** The header of a stream's answer that names the sandbox it runs in. */
    public static final String SANDBOX_HEADER = "Kosa8-Sandbox";

    /** Reads the status line and headers byte by byte, so nothing after them is consumed. */
    private static Head readHead(InputStream in) throws IOException {
        ByteArrayOutputStream buf = new ByteArrayOutputStream();
        int state = 0;
        while (state < 4) {
            int b = in.read();
            if (b < 0) {
                throw new IOException("the daemon closed the connection before answering");
            }
            buf.write(b);
            if (buf.size() > MAX_HEADER) {
                throw new IOException("the daemon's response header is too large");
            }
            state = (b == '\r' && (state == 0 || state == 2)) ? state + 1 : (b == '\n' && (state == 1 || state == 3)) ? state + 1 : 0;
        }
        List<String> lines = new ArrayList<>(buf.toString(StandardCharsets.ISO_8859_1).lines().toList());
        String[] status = lines.getFirst().split(" ", 3);
        if (status.length < 2 || !status[0].startsWith("HTTP/1.")) {
            throw new IOException("not an HTTP response: " + lines.getFirst());
        }
        int length = -1;
        String sandbox = "";
        for (String l : lines.subList(1, lines.size())) {
            int c = l.indexOf(':');
            if (c > 0 && l.substring(0, c).trim().equalsIgnoreCase(SANDBOX_HEADER)) {
                sandbox = l.substring(c + 1).trim();
            }
            if (c > 0 && l.substring(0, c).trim().toLowerCase(Locale.ROOT).equals("content-length")) {
                length = Integer.parseInt(l.substring(c + 1).trim());
                if (length < 0 || length > MAX_BODY) {
                    throw new IOException("bad Content-Length " + length);
                }
            }
        }
        return new Head(Integer.parseInt(status[1]), length, sandbox);
    }

    private KosaException unreachable(IOException e) {
        return new KosaException(KosaException.Kind.DAEMON, "cannot talk to kosa8d at " + paths.daemonSocket()
                + ": " + e.getMessage(), "see its log at " + paths.daemonLog() + "; `kosa8 doctor` checks it", e);
    }

    private static void closeQuietly(SocketChannel ch) {
        if (ch != null) {
            try {
                ch.close();
            } catch (IOException ignored) {
                // closing anyway
            }
        }
    }

    /** True if a daemon answers on the socket. */
    public boolean isUp() {
        return version() != null;
    }

    /** The daemon's answer to {@code GET /v1/version}, or null when none answers. */
    private Object version() {
        if (!Files.exists(paths.daemonSocket())) {
            return null;
        }
        try {
            Raw r = raw("GET", "/v1/version");
            return r.status() == 200 ? Json.parse(r.body()) : null;
        } catch (KosaException | IOException e) {
            return null;
        }
    }

    /**
     * Makes sure a daemon of this very build answers, starting one if needed:
     * one request when it does. A daemon of another build (the jar was
     * rebuilt) is asked to stop and replaced; sandboxes keep running and the
     * new daemon re-attaches to them.
     */
    public void ensureRunning(String build, Duration timeout) {
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
