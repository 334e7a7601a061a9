package dev.kosa8.egress;

import dev.kosa8.egress.tls.SandboxCa;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.nio.charset.StandardCharsets;
import java.security.KeyStore;
import java.security.MessageDigest;
import java.security.cert.Certificate;
import java.util.Base64;
import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLServerSocket;
import javax.net.ssl.SSLSocket;

/**
 * A loopback HTTPS server that accepts every WebSocket handshake (RFC 6455's
 * answer, computed) and then sends back every byte it gets: whatever frames a
 * client writes come back as they were, which is all a relay must keep.
 */
public final class WebSocketEcho implements AutoCloseable {
    private final SSLServerSocket server;
    /** The head of every handshake the server got, for checks of what the broker sent on. */
    public final java.util.List<String> heads = java.util.Collections.synchronizedList(new java.util.ArrayList<>());

    public WebSocketEcho(SandboxCa ca, String name) throws Exception {
        var leaf = ca.leafFor(name);
        KeyStore ks = KeyStore.getInstance("PKCS12");
        ks.load(null, null);
        ks.setKeyEntry("leaf", leaf.key(), new char[0], new Certificate[] {leaf.leaf(), leaf.ca()});
        KeyManagerFactory kmf = KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm());
        kmf.init(ks, new char[0]);
        SSLContext ssl = SSLContext.getInstance("TLS");
        ssl.init(kmf.getKeyManagers(), null, null);
        server = (SSLServerSocket) ssl.getServerSocketFactory().createServerSocket(0, 50, InetAddress.getLoopbackAddress());
        Thread.ofVirtual().start(() -> {
            while (!server.isClosed()) {
                try {
                    SSLSocket s = (SSLSocket) server.accept();
                    Thread.ofVirtual().start(() -> serve(s));
                } catch (IOException closed) {
                    return;
                }
            }
        });
    }

    public int port() {
        return server.getLocalPort();
    }

    private void serve(SSLSocket s) {
        try (s) {
            InputStream in = s.getInputStream();
            OutputStream out = s.getOutputStream();
            ByteArrayOutputStream head = new ByteArrayOutputStream();
            while (!head.toString(StandardCharsets.ISO_8859_1).endsWith("\r\n\r\n")) {
                int c = in.read();
                if (c < 0) {
                    return;
                }
                head.write(c);
            }
            String h = head.toString(StandardCharsets.ISO_8859_1);
            heads.add(h);
            String key = h.lines().filter(l -> l.toLowerCase(java.util.Locale.ROOT).startsWith("sec-websocket-key:"))
                    .map(l -> l.substring(l.indexOf(':') + 1).strip()).findFirst().orElse("");
            String accept = Base64.getEncoder().encodeToString(MessageDigest.getInstance("SHA-1").digest(
                    (key + "258EAFA5-E914-47DA-95CA-C5AB0DC85B11").getBytes(StandardCharsets.US_ASCII)));
            out.write(("HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                    + "Sec-WebSocket-Accept: " + accept + "\r\n\r\n").getBytes(StandardCharsets.US_ASCII));
            out.flush();
            byte[] buf = new byte[8192];
            for (int n; (n = in.read(buf)) > 0; ) {
                out.write(buf, 0, n);
                out.flush();
            }
        } catch (Exception ended) {
            // the client went
        }
    }

    @Override
    public void close() throws IOException {
        server.close();
    }
}
