package dev.kosa8.vm;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.net.UnixDomainSocketAddress;
import java.nio.channels.Channels;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;

/**
 * A client of the QEMU Machine Protocol: JSON objects, one per line, over a
 * unix socket. On connect it reads the greeting and negotiates capabilities;
 * then {@link #execute} sends commands tagged with an id and waits for the
 * matching reply, while events go to a listener.
 */
public final class QmpClient implements AutoCloseable {
    private static final ObjectMapper JSON = new ObjectMapper();
    /** QMP lines are small; anything larger is not QEMU talking. */
    private static final int MAX_LINE = 16 * 1024 * 1024;

    private final SocketChannel socket;
    private final OutputStream out;
    private final Map<String, CompletableFuture<JsonNode>> pending = new ConcurrentHashMap<>();
    private final AtomicLong ids = new AtomicLong();
    private final Consumer<JsonNode> events;
    private final CompletableFuture<Void> closed = new CompletableFuture<>();
    private final JsonNode greeting;

    private QmpClient(SocketChannel socket, Consumer<JsonNode> events) throws IOException {
        this.socket = socket;
        this.out = Channels.newOutputStream(socket);
        this.events = events;
        BufferedReader in = new BufferedReader(new InputStreamReader(Channels.newInputStream(socket), StandardCharsets.UTF_8));
        String first = in.readLine();
        if (first == null) {
            throw new IOException("QMP closed before its greeting");
        }
        this.greeting = JSON.readTree(first);
        if (!greeting.has("QMP")) {
            throw new IOException("not a QMP greeting: " + first);
        }
        Thread.ofVirtual().name("qmp-reader").start(() -> readLoop(in));
        execute("qmp_capabilities", null, Duration.ofSeconds(10));
    }

    /**
     * Connects to QEMU's QMP socket, retrying until it exists or the timeout passes.
     */
    public static QmpClient connect(Path socket, Duration timeout, Consumer<JsonNode> events) throws IOException {
        long deadline = System.nanoTime() + timeout.toNanos();
        IOException last = null;
        while (System.nanoTime() < deadline) {
            SocketChannel ch = null;
            try {
                ch = SocketChannel.open(UnixDomainSocketAddress.of(socket));
                return new QmpClient(ch, events == null ? e -> { } : events);
            } catch (IOException e) {
                last = e;
                if (ch != null) {
                    ch.close();
                }
                try {
                    // QEMU binds its monitor 20-40 ms after it starts: a coarser poll added half its period to every
                    // start and restore; a refused connect costs microseconds
                    Thread.sleep(2);
                } catch (InterruptedException ie) {
                    Thread.currentThread().interrupt();
                    throw new IOException("interrupted while connecting to QMP", ie);
                }
            }
        }
        throw new IOException("QMP socket " + socket + " did not answer within " + timeout.toMillis() + " ms"
                + (last == null ? "" : ": " + last.getMessage()), last);
    }

    public JsonNode greeting() {
        return greeting;
    }

    /**
     * Runs a QMP command and returns its {@code return} value.
     *
     * @throws QmpException if QEMU answers with an error, does not answer in time, or has gone
     */
    public JsonNode execute(String command, Map<String, ?> arguments, Duration timeout) {
        String id = "k" + ids.incrementAndGet();
        ObjectNode req = JSON.createObjectNode().put("execute", command).put("id", id);
        if (arguments != null && !arguments.isEmpty()) {
            req.set("arguments", JSON.valueToTree(arguments));
        }
        CompletableFuture<JsonNode> reply = new CompletableFuture<>();
        pending.put(id, reply);
        try {
            byte[] line = (JSON.writeValueAsString(req) + "\n").getBytes(StandardCharsets.UTF_8);
            synchronized (out) {
                out.write(line);
                out.flush();
            }
            JsonNode r = reply.get(timeout.toMillis(), TimeUnit.MILLISECONDS);
            if (r.has("error")) {
                throw new QmpException(command + ": " + r.path("error").path("desc").asText(r.toString()));
            }
            return r.path("return");
        } catch (IOException e) {
            throw new QmpException(command + ": QMP connection failed: " + e.getMessage());
        } catch (TimeoutException e) {
            throw new QmpException(command + ": no answer from QEMU within " + timeout.toMillis() + " ms");
        } catch (ExecutionException e) {
            throw new QmpException(command + ": " + e.getCause().getMessage());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new QmpException(command + ": interrupted");
        } finally {
            pending.remove(id);
        }
    }

    private void readLoop(BufferedReader in) {
        try {
            String line;
            while ((line = in.readLine()) != null) {
                if (line.length() > MAX_LINE) {
                    throw new IOException("QMP line of " + line.length() + " characters");
                }
                JsonNode msg = JSON.readTree(line);
                if (msg.has("event")) {
                    events.accept(msg);
                } else if (msg.has("id")) {
                    CompletableFuture<JsonNode> f = pending.get(msg.get("id").asText());
                    if (f != null) {
                        f.complete(msg);
                    }
                }
            }
        } catch (IOException | RuntimeException e) {
            // the connection is gone; fail whoever is waiting
        } finally {
            IOException gone = new IOException("QEMU closed the QMP connection");
            pending.values().forEach(f -> f.completeExceptionally(gone));
            closed.complete(null);
        }
    }

    /** Completes when QEMU closes the connection (it exited, or another client took over). */
    public CompletableFuture<Void> closedFuture() {
        return closed;
    }

    @Override
    public void close() {
        try {
            socket.close();
        } catch (IOException ignored) {
            // closing anyway
        }
    }

    /** A QMP command failed. */
    public static final class QmpException extends RuntimeException {
        public QmpException(String message) {
            super(message);
        }
    }
}
