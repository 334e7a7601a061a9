package dev.kosa8.image.debian;

import com.sun.net.httpserver.HttpServer;
import org.tukaani.xz.LZMA2Options;
import org.tukaani.xz.XZOutputStream;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A Debian archive on a loopback HTTP server, signed with a throwaway key:
 * {@code /debian/dists/SUITE/InRelease}, its {@code Packages.xz}, and
 * {@code .deb}s of random bytes under {@code pool/}. Any path's bytes can be
 * replaced to play a broken mirror or a tampering proxy.
 */
public final class FixtureArchive implements AutoCloseable {
    final TestSigner key;
    public final Map<String, byte[]> files = new ConcurrentHashMap<>();
    public final AtomicInteger requests = new AtomicInteger();
    final HttpServer server;

    public FixtureArchive(TestSigner key) throws IOException {
        this.key = key;
        server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
        server.createContext("/", ex -> {
            requests.incrementAndGet();
            byte[] body = files.get(ex.getRequestURI().getPath());
            if (body == null) {
                ex.sendResponseHeaders(404, -1);
            } else {
                ex.sendResponseHeaders(200, body.length);
                try (OutputStream o = ex.getResponseBody()) {
                    o.write(body);
                }
            }
            ex.close();
        });
        server.start();
    }

    URI base(String archive) {
        return URI.create("http://127.0.0.1:" + server.getAddress().getPort() + "/" + archive);
    }

    public Mirror mirror(String archive) {
        return new Mirror(base(archive));
    }

    /** A .deb of {@code size} pseudo-random bytes for {@code name}, served under the archive; its stanza. */
    public String deb(String archive, String name, String version, int size, String... fields) {
        byte[] data = new byte[size];
        new java.util.Random(name.hashCode()).nextBytes(data);
        String filename = "pool/main/" + name.charAt(0) + "/" + name + "/" + name + "_" + version + "_amd64.deb";
        files.put("/" + archive + "/" + filename, data);
        StringBuilder b = new StringBuilder("Package: " + name + "\nVersion: " + version + "\nArchitecture: amd64\n"
                + "Filename: " + filename + "\nSize: " + size + "\nSHA256: " + sha256(data) + "\n");
        for (String f : fields) {
            b.append(f).append('\n');
        }
        return b.append("Description: the package ").append(name).append("\n the long description\n .\n more\n\n")
                .toString();
    }

    /** Publishes {@code packages} as the suite's main/binary-amd64 index, with a Release signed by the key. */
    public void publish(String archive, String suite, String packages, String extraRelease) {
        publish(archive, suite, packages, extraRelease, "Sat, 11 Jul 2026 10:16:37 UTC");
    }

    /** The same, with the Release's {@code Date}. */
    void publish(String archive, String suite, String packages, String extraRelease, String date) {
        byte[] plain = packages.getBytes(StandardCharsets.UTF_8);
        byte[] xz = xz(plain);
        String dir = "/" + archive + "/dists/" + suite + "/";
        files.put(dir + "main/binary-amd64/Packages.xz", xz);
        String release = "Origin: Debian\nSuite: " + suite + "\nCodename: " + suite + "\n"
                + "Date: " + date + "\n" + extraRelease
                + "Architectures: amd64\nComponents: main\nSHA256:\n"
                + " " + sha256(plain) + " " + plain.length + " main/binary-amd64/Packages\n"
                + " " + sha256(xz) + " " + xz.length + " main/binary-amd64/Packages.xz\n";
        files.put(dir + "InRelease", key.clearSign(release));
    }

    static byte[] xz(byte[] plain) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        try (XZOutputStream x = new XZOutputStream(out, new LZMA2Options())) {
            x.write(plain);
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
        return out.toByteArray();
    }

    public static String sha256(byte[] data) {
        try {
            return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(data));
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }

    List<Source> sources(String suite) {
        return List.of(new Source("debian", mirror("debian"), suite, "main"),
                new Source("debian-security", mirror("debian-security"), suite + "-security", "main"));
    }

    @Override
    public void close() {
        server.stop(0);
    }
}
