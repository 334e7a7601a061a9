package dev.kosa8.egress;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import com.sun.net.httpserver.HttpsConfigurator;
import com.sun.net.httpserver.HttpsServer;
import dev.kosa8.egress.tls.SandboxCa;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyStore;
import java.security.cert.Certificate;
import java.util.concurrent.Executors;
import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.SSLContext;

/**
 * Real loopback servers standing in for the internet: plain HTTP and HTTPS,
 * the latter with a certificate for {@code api.test} from a test CA (the
 * guest's client, or the test's, trusts that CA; the broker never needs to,
 * since it passes TLS through).
 */
public final class TestUpstream implements AutoCloseable {
    final HttpServer http;
    final HttpsServer https;
    public final Path caPem;
    /** Every request either server got: "METHOD URI" and its headers, for checks that a key never arrived. */
    public final java.util.List<String> seen = java.util.Collections.synchronizedList(new java.util.ArrayList<>());
    /** The client address of each connection either server got a request on: one per upstream connection. */
    public final java.util.Set<java.net.InetSocketAddress> peers = java.util.concurrent.ConcurrentHashMap.newKeySet();
    /** {@code /stream} sends its second event only once this is counted down (or after 30 s). */
    public final java.util.concurrent.CountDownLatch streamGate = new java.util.concurrent.CountDownLatch(1);
    final SandboxCa ca;
    private final com.sun.net.httpserver.Filter recorder = new com.sun.net.httpserver.Filter() {
        @Override
        public void doFilter(HttpExchange x, Chain chain) throws IOException {
            StringBuilder b = new StringBuilder(x.getRequestMethod() + " " + x.getRequestURI() + "\n");
            x.getRequestHeaders().forEach((k, v) -> b.append(k).append(": ").append(String.join(", ", v)).append('\n'));
            seen.add(b.toString());
            peers.add(x.getRemoteAddress());
            chain.doFilter(x);
        }

        @Override
        public String description() {
            return "records requests";
        }
    };

    public TestUpstream(Path dir, String name) throws Exception {
        ca = SandboxCa.loadOrCreate(dir.resolve("test-ca"), "test-upstream");
        caPem = dir.resolve("test-ca.pem");
        Files.writeString(caPem, ca.certificatePem());
        var leaf = ca.leafFor(name);
        KeyStore ks = KeyStore.getInstance("PKCS12");
        ks.load(null, null);
        ks.setKeyEntry("leaf", leaf.key(), new char[0], new Certificate[] {leaf.leaf(), leaf.ca()});
        KeyManagerFactory kmf = KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm());
        kmf.init(ks, new char[0]);
        SSLContext ssl = SSLContext.getInstance("TLS");
        ssl.init(kmf.getKeyManagers(), null, null);
        InetSocketAddress any = new InetSocketAddress(InetAddress.getLoopbackAddress(), 0);
        http = HttpServer.create(any, 0);
        https = HttpsServer.create(any, 0);
        https.setHttpsConfigurator(new HttpsConfigurator(ssl));
        for (HttpServer s : new HttpServer[] {http, https}) {
            s.setExecutor(Executors.newVirtualThreadPerTaskExecutor());
            context(s, "/hello", x -> reply(x, 200, "hello from " + name + " " + x.getRequestMethod()));
            context(s, "/sink", TestUpstream::sink);
            context(s, "/redirect", x -> {
                x.getResponseHeaders().set("Location", "http://denied.test/hello");
                reply(x, 302, "moved");
            });
            context(s, "/big", x -> {
                long n = Long.parseLong(x.getRequestURI().getQuery().substring(2));
                x.sendResponseHeaders(200, n);
                byte[] chunk = new byte[64 * 1024];
                try (OutputStream out = x.getResponseBody()) {
                    for (long left = n; left > 0; left -= chunk.length) {
                        out.write(chunk, 0, (int) Math.min(left, chunk.length));
                    }
                }
            });
            context(s, "/pattern", x -> { // bytes that say where they are: a piece misplaced or lost shows
                long n = Long.parseLong(x.getRequestURI().getQuery().substring(2));
                x.sendResponseHeaders(200, n);
                byte[] chunk = new byte[64 * 1024];
                try (OutputStream out = x.getResponseBody()) {
                    for (long at = 0; at < n; at += chunk.length) {
                        int len = (int) Math.min(n - at, chunk.length);
                        for (int i = 0; i < len; i++) {
                            chunk[i] = patternByte(at + i);
                        }
                        out.write(chunk, 0, len);
                    }
                }
            });
            context(s, "/stream", x -> { // server-sent events: the second only after the client read the first
                x.getResponseHeaders().set("Content-Type", "text/event-stream");
                x.sendResponseHeaders(200, 0);
                try (OutputStream out = x.getResponseBody()) {
                    out.write("data: one\n\n".getBytes(StandardCharsets.UTF_8));
                    out.flush();
                    try {
                        streamGate.await(30, java.util.concurrent.TimeUnit.SECONDS);
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                    }
                    out.write("data: two\n\n".getBytes(StandardCharsets.UTF_8));
                }
            });
            s.start();
        }
    }

    /** Serves {@code path} (and below) with {@code h} over HTTPS, its requests recorded like the rest. */
    public void handle(String path, com.sun.net.httpserver.HttpHandler h) {
        context(https, path, h);
    }

    /** {@code /sink}: reads the request body to its end and answers its SHA-256 (hex) and length, space apart. */
    private static void sink(HttpExchange x) throws IOException {
        java.security.MessageDigest sha;
        try {
            sha = java.security.MessageDigest.getInstance("SHA-256");
        } catch (java.security.NoSuchAlgorithmException e) {
            throw new IOException(e);
        }
        long n = 0;
        byte[] buf = new byte[1 << 16];
        java.io.InputStream in = x.getRequestBody(); // left open: reply reads it to its end (nothing left)
        for (int r; (r = in.read(buf)) > 0; n += r) {
            sha.update(buf, 0, r);
        }
        reply(x, 200, java.util.HexFormat.of().formatHex(sha.digest()) + " " + n);
    }

    /** Serves {@code path} (and below) with {@code h} over plain HTTP, its requests recorded like the rest. */
    public void handlePlain(String path, com.sun.net.httpserver.HttpHandler h) {
        context(http, path, h);
    }

    private void context(HttpServer s, String path, com.sun.net.httpserver.HttpHandler h) {
        s.createContext(path, h).getFilters().add(recorder);
    }

    /**
     * An API that wants {@code key}: {@code /secret} answers 200 only to
     * {@code Authorization: Bearer KEY}; {@code /echo} sends the request's
     * headers and body back (raw, {@code /echo-b64} in base64,
     * {@code /echo-gzip} gzipped whatever the client accepts: the responses a
     * broker must take the key out of); {@code /repo.git/} serves {@code repo}
     * to Basic auth with the key as password; {@code /redirect-to?url} sends
     * the client on.
     */
    public void requireKey(String key, Path repo) {
        for (HttpServer s : new HttpServer[] {http, https}) {
            context(s, "/secret", x -> {
                boolean ok = ("Bearer " + key).equals(x.getRequestHeaders().getFirst("Authorization"));
                reply(x, ok ? 200 : 401, ok ? "authorized" : "no key");
            });
            context(s, "/echo", x -> reply(x, 200, echo(x)));
            context(s, "/echo-b64", x -> reply(x, 200, java.util.Base64.getEncoder().encodeToString(
                    echo(x).getBytes(StandardCharsets.UTF_8))));
            context(s, "/echo-gzip", x -> {
                var bytes = new java.io.ByteArrayOutputStream();
                try (var gz = new java.util.zip.GZIPOutputStream(bytes)) {
                    gz.write(echo(x).getBytes(StandardCharsets.UTF_8));
                }
                x.getResponseHeaders().set("Content-Encoding", "gzip");
                x.sendResponseHeaders(200, bytes.size());
                try (OutputStream out = x.getResponseBody()) {
                    out.write(bytes.toByteArray());
                }
            });
            context(s, "/redirect-to", x -> {
                x.getResponseHeaders().set("Location", x.getRequestURI().getRawQuery());
                reply(x, 302, "moved");
            });
            context(s, "/repo.git/", x -> {
                String auth = x.getRequestHeaders().getFirst("Authorization");
                String decoded = auth == null || !auth.startsWith("Basic ") ? ""
                        : new String(java.util.Base64.getDecoder().decode(auth.substring(6)), StandardCharsets.UTF_8);
                if (!decoded.endsWith(":" + key)) {
                    x.getResponseHeaders().set("WWW-Authenticate", "Basic realm=\"repo\"");
                    reply(x, 401, "no key");
                    return;
                }
                file(x, repo, "repo.git");
            });
        }
    }

    private static String echo(HttpExchange x) throws IOException {
        StringBuilder b = new StringBuilder(x.getRequestMethod() + " " + x.getRequestURI() + "\n");
        x.getRequestHeaders().forEach((k, v) -> b.append(k).append(": ").append(String.join(", ", v)).append('\n'));
        b.append('\n').append(new String(x.getRequestBody().readAllBytes(), StandardCharsets.UTF_8));
        return b.toString();
    }

    public int httpPort() {
        return http.getAddress().getPort();
    }

    public int httpsPort() {
        return https.getAddress().getPort();
    }

    private static void reply(HttpExchange x, int status, String body) throws IOException {
        x.getRequestBody().readAllBytes();
        byte[] b = body.getBytes(StandardCharsets.UTF_8);
        x.sendResponseHeaders(status, b.length);
        try (OutputStream out = x.getResponseBody()) {
            out.write(b);
        }
    }

    /** Serves the files under {@code dir} at {@code /prefix/}: enough for git's dumb HTTP protocol. */
    public void serveFiles(String prefix, Path dir) {
        for (HttpServer s : new HttpServer[] {http, https}) {
            context(s, "/" + prefix + "/", x -> file(x, dir, prefix));
        }
    }

    private static void file(HttpExchange x, Path dir, String prefix) throws IOException {
        Path f = dir.resolve(x.getRequestURI().getPath().substring(prefix.length() + 2)).normalize();
        if (!f.startsWith(dir) || !Files.isRegularFile(f)) {
            reply(x, 404, "no such file");
            return;
        }
        byte[] b = Files.readAllBytes(f);
        x.sendResponseHeaders(200, b.length);
        try (OutputStream out = x.getResponseBody()) {
            out.write(b);
        }
    }

    @Override
    public void close() {
        http.stop(0);
        https.stop(0);
    }

    /** Byte {@code i} of a {@code /pattern} answer's body: its position, mixed, so no two nearby pieces are alike. */
    public static byte patternByte(long i) {
        return (byte) (i ^ (i >>> 8) * 31 ^ (i >>> 16) * 7);
    }
}
