package dev.kosa8.client;

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
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * The daemon's REST API over its unix socket (docs/api.md): the transport
 * under {@link Kosa8}, and under the kosa8 CLI itself.
 *
 * <p>A deliberately small HTTP/1.1 client: one request per connection,
 * {@code Content-Length} bodies, and the {@code Upgrade} handshake for exec
 * streams. Written here rather than taken from a library because the JDK's
 * HttpClient cannot use a unix socket, and a general client (Netty's) would
 * add its class loading to every CLI command's start-up, which kosa8 keeps
 * under 150 ms. The daemon side is Netty's full HTTP codec.
 */
public final class DaemonConnection {
    private static final int MAX_HEADER = 64 * 1024;
    private static final int MAX_BODY = 64 * 1024 * 1024;

    /** The header of a stream's answer that names the sandbox it runs in. */
    public static final String SANDBOX_HEADER = "Kosa8-Sandbox";

    private final Path socket;
    private final String hint;

    /**
     * @param socket the daemon's socket
     * @param hint   what to tell a user when the daemon cannot be reached (where its log is)
     */
    public DaemonConnection(Path socket, String hint) {
        this.socket = socket;
        this.hint = hint;
    }

    /**
     * The daemon's socket as kosa8 places it: {@code $KOSA8_HOME/run/kosa8d.sock} when {@code KOSA8_HOME} is set,
     * else {@code $XDG_RUNTIME_DIR/kosa8/kosa8d.sock}, else {@code /tmp/kosa8-UID/kosa8d.sock}.
     */
    public static Path defaultSocket() {
        String home = System.getenv("KOSA8_HOME");
        if (home != null && !home.isBlank()) {
            return Path.of(home).toAbsolutePath().resolve("run").resolve("kosa8d.sock");
        }
        String runtimeDir = System.getenv("XDG_RUNTIME_DIR");
        Path runtime = runtimeDir != null && !runtimeDir.isBlank() ? Path.of(runtimeDir).resolve("kosa8")
                : Path.of("/tmp", "kosa8-" + uid());
        return runtime.resolve("kosa8d.sock");
    }

    private static String uid() {
        try {
            return String.valueOf(Files.getAttribute(Path.of("/proc/self"), "unix:uid"));
        } catch (IOException | UnsupportedOperationException | IllegalArgumentException e) {
            return System.getProperty("user.name", "user");
        }
    }

    public Path socket() {
        return socket;
    }

    /** An answer as it came: status and body. */
    public record Raw(int status, byte[] body) {
    }

    /** An upgraded connection speaking the agent protocol; {@code sandbox} is the id the daemon named ("" if none). */
    public record Stream(SocketChannel socket, InputStream in, OutputStream out, String sandbox) implements AutoCloseable {
        @Override
        public void close() throws IOException {
            socket.close();
        }
    }

    /** A request without a body whose answer is read as plain values ({@link Json}); an error answer is thrown. */
    public Object call(String method, String path) {
        return call(method, path, new byte[0], "");
    }

    /** A request with a body ({@code contentType} such as {@code application/json}), read as {@link #call(String, String)}. */
    public Object call(String method, String path, byte[] body, String contentType) {
        Raw r = raw(method, path, body, contentType);
        Object answer = parse(r.body());
        if (r.status() >= 200 && r.status() < 300) {
            return answer;
        }
        throw error(r.status(), answer);
    }

    private Object parse(byte[] body) {
        try {
            return body.length == 0 ? Map.of() : Json.parse(body);
        } catch (IOException e) {
            throw new DaemonUnavailableException("the daemon's answer is not JSON: " + e.getMessage(), hint, e);
        }
    }

    /** The daemon's error answer ({@code error}, {@code suggestion}, {@code kind}, {@code exitCode}) as an exception. */
    public static Kosa8Exception error(int status, Object answer) {
        return Kosa8Exception.fromAnswer(status, Json.text(answer, "kind"), Json.text(answer, "error"),
                Json.text(answer, "suggestion"), (int) Json.number(answer, "exitCode"), Json.text(answer, "code"));
    }

    /** One request on a connection of its own: its status and body, whatever the status. */
    public Raw raw(String method, String path) {
        return raw(method, path, new byte[0], "");
    }

    /** As {@link #raw(String, String)}, with a body. */
    public Raw raw(String method, String path, byte[] requestBody, String contentType) {
        try (SocketChannel ch = connect()) {
            OutputStream out = Channels.newOutputStream(ch);
            List<String> headers = new ArrayList<>(List.of("Connection: close", "Content-Length: " + requestBody.length));
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

    /** Opens an agent-protocol stream: sends the request and waits for {@code 101 Switching Protocols}. */
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
                Object b = parse(body);
                if (h.status < 200 || h.status >= 300) {
                    throw error(h.status, b);
                }
                throw new DaemonUnavailableException("the daemon did not open a stream (HTTP " + h.status + ")", hint,
                        null);
            }
            return new Stream(ch, in, out, h.sandbox());
        } catch (IOException e) {
            closeQuietly(ch);
            throw unreachable(e);
        }
    }

    /** The daemon's {@code GET /v1/version} answer, or null when none answers. */
    public Object version() {
        if (!Files.exists(socket)) {
            return null;
        }
        try {
            Raw r = raw("GET", "/v1/version");
            return r.status() == 200 ? Json.parse(r.body()) : null;
        } catch (Kosa8Exception | IOException e) {
            return null;
        }
    }

    private SocketChannel connect() throws IOException {
        return SocketChannel.open(UnixDomainSocketAddress.of(socket));
    }

    private static byte[] head(String method, String path, List<String> headers) {
        StringBuilder sb = new StringBuilder(method).append(' ').append(path).append(" HTTP/1.1\r\nHost: kosa8d\r\n");
        headers.forEach(x -> sb.append(x).append("\r\n"));
        return sb.append("\r\n").toString().getBytes(StandardCharsets.US_ASCII);
    }

    private record Head(int status, int contentLength, String sandbox) {
    }

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
            state = (b == '\r' && (state == 0 || state == 2)) ? state + 1
                    : (b == '\n' && (state == 1 || state == 3)) ? state + 1 : 0;
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
            if (c <= 0) {
                continue;
            }
            String name = l.substring(0, c).trim().toLowerCase(Locale.ROOT);
            if (name.equals(SANDBOX_HEADER.toLowerCase(Locale.ROOT))) {
                sandbox = l.substring(c + 1).trim();
            } else if (name.equals("content-length")) {
                try {
                    length = Integer.parseInt(l.substring(c + 1).trim());
                } catch (NumberFormatException e) {
                    length = -2;
                }
                if (length < 0 || length > MAX_BODY) {
                    throw new IOException("bad Content-Length " + l.substring(c + 1).trim());
                }
            }
        }
        try {
            return new Head(Integer.parseInt(status[1]), length, sandbox);
        } catch (NumberFormatException e) {
            throw new IOException("not an HTTP status: " + lines.getFirst());
        }
    }

    private DaemonUnavailableException unreachable(IOException e) {
        return new DaemonUnavailableException("cannot talk to kosa8d at " + socket + ": " + e.getMessage(), hint, e);
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
}
