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

    public TestUpstream(Path dir, String name) throws Exception {
        SandboxCa ca = SandboxCa.loadOrCreate(dir.resolve("test-ca"), "test-upstream");
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
            s.createContext("/hello", x -> reply(x, 200, "hello from " + name + " " + x.getRequestMethod()));
            s.createContext("/redirect", x -> {
                x.getResponseHeaders().set("Location", "http://denied.test/hello");
                reply(x, 302, "moved");
            });
            s.createContext("/big", x -> {
                long n = Long.parseLong(x.getRequestURI().getQuery().substring(2));
                x.sendResponseHeaders(200, n);
                byte[] chunk = new byte[64 * 1024];
                try (OutputStream out = x.getResponseBody()) {
                    for (long left = n; left > 0; left -= chunk.length) {
                        out.write(chunk, 0, (int) Math.min(left, chunk.length));
                    }
                }
            });
            s.start();
        }
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
            s.createContext("/" + prefix + "/", x -> {
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
            });
        }
    }

    @Override
    public void close() {
        http.stop(0);
        https.stop(0);
    }
}
