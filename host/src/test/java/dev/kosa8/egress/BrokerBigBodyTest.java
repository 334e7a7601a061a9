package dev.kosa8.egress;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import javax.net.ssl.SSLSocket;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Request bodies past what the broker holds in memory ({@link Broker#MAX_BODY}): real curl through a real broker to
 * a real loopback upstream, whose {@code /sink} answers with the SHA-256 of what it got. Bodies go to the spool on disk
 * ({@link BodySpool}) and upstream once judged; a misplaced placeholder anywhere in them is refused and never leaves;
 * past the bounds a 413; and whatever happens, the spool is empty after (no bytes counted, no file open) and
 * Netty's paranoid leak detector found nothing.
 */
@Timeout(value = 300, unit = TimeUnit.SECONDS)
class BrokerBigBodyTest {
    static final String HOST = "big.test";
    static final String FOREIGN = "ot-aaaaBBBBccccDDDDeeeeFFFF0123456789";
    static final long MIB = 1 << 20;
    static final Queue<String> problems = new ConcurrentLinkedQueue<>();
    @TempDir
    static Path dir;
    static EventLoopGroup group;
    static TestUpstream up;
    static InterceptingBroker intercepting;
    static Broker broker;
    static UnixBridge tls;
    static UnixBridge http;
    static Path caPem;
    static Path body100;
    static String body100Sha;
    static NettyWarnings netty;

    @BeforeAll
    static void start() throws Exception {
        netty = NettyWarnings.into(problems);
        group = new MultiThreadIoEventLoopGroup(1, dev.kosa8.host.NettyTransport.CURRENT.ioHandler());
        up = new TestUpstream(dir.resolve("up"), HOST);
        up.handle("/early", x -> { // answers after 1 MiB of the body, reads no more, and closes
            x.getRequestBody().readNBytes(1 << 20);
            x.sendResponseHeaders(413, -1);
            x.close();
        });
        up.handle("/slow", x -> { // takes the body slowly: a read, then 4 ms
            byte[] buf = new byte[64 * 1024];
            long n = 0;
            try {
                for (int r; (r = x.getRequestBody().read(buf)) > 0; n += r) {
                    Thread.sleep(4);
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            byte[] answer = Long.toString(n).getBytes(StandardCharsets.US_ASCII);
            x.sendResponseHeaders(200, answer.length);
            try (OutputStream out = x.getResponseBody()) {
                out.write(answer);
            }
        });
        int nothingListens;
        try (var bound = new java.net.ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
            nothingListens = bound.getLocalPort(); // closed: a dial to it is refused
        }
        EgressTestSettings test = new EgressTestSettings(Map.of(HOST + ":443", up.httpsPort(), HOST + ":80",
                up.httpPort(), "dead.test:443", nothingListens), Map.of(), Optional.of(up.caPem));
        // an HTTP/2 guest's upstream is offered h2; these servers take HTTP/1.1
        intercepting = InterceptingBroker.start("sbx-big", dir,
                new EgressPolicy(false, List.of(AllowRule.parse("GET,POST,PUT " + HOST + "/sink"),
                        AllowRule.parse("POST " + HOST + "/early"),
                        AllowRule.parse("POST " + HOST + "/slow"), AllowRule.parse("dead.test"))),
                test, problems::add, group);
        broker = intercepting.broker();
        caPem = intercepting.caPem();
        tls = intercepting.tls();
        broker.secrets(new SecretBindings(List.of(new SecretBinding("OTHER_TOKEN", "other.test", 443,
                "Authorization", "Bearer {}", FOREIGN, "ot-REALrealREALreal0123456789"))));
        http = new UnixBridge(broker.sockets().get(Listener.HTTP));
        body100 = dir.resolve("body100");
        body100Sha = writeBody(body100, 100 * MIB, -1);
    }

    @AfterAll
    static void stop() throws Exception {
        http.close();
        intercepting.close();
        up.close();
        group.shutdownGracefully(0, 1, TimeUnit.SECONDS).sync();
        netty.close();
    }

    /** After every case: nothing held on disk, no spool file open, no buffer leaked. */
    @AfterEach
    void spoolIsEmpty() throws Exception {
        broker.spool().limits(SpoolLimits.DEFAULT);
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while ((broker.spool().used() != 0 || !openSpoolFiles().isEmpty()) && System.nanoTime() < deadline) {
            Thread.sleep(50);
        }
        assertThat(broker.spool().used()).as("bytes the spool still counts").isZero();
        assertThat(openSpoolFiles()).as("spool files still open").isEmpty();
        try (var files = Files.list(broker.spool().dir())) {
            assertThat(files.toList()).as("spool files left").isEmpty();
        } catch (java.nio.file.NoSuchFileException never) {
            // nothing was spooled
        }
        for (int i = 0; i < 3; i++) { // unreleased buffers are reported when collected, at a later allocation
            System.gc();
            Thread.sleep(50);
            assertThat(curl("-X", "POST", "--data-binary", "x", https("/sink")).out()).hasSize(66);
        }
        assertThat(problems).as("leaks, Netty warnings, audit failures").isEmpty();
    }

    @Test
    void a100MiBBodyArrivesIntactWithContentLengthOrChunkedOverHttp1() throws Exception {
        assertThat(curl("--http1.1", "--data-binary", "@" + body100, https("/sink")).out())
                .isEqualTo(body100Sha + " " + 100 * MIB);
        assertThat(curl("--http1.1", "-H", "Transfer-Encoding: chunked", "--data-binary", "@" + body100,
                https("/sink")).out()).isEqualTo(body100Sha + " " + 100 * MIB);
        assertThat(curl("-T", body100.toString(), "http://" + HOST + "/sink", "--connect-to",
                HOST + ":80:127.0.0.1:" + http.port()).out()).isEqualTo(body100Sha + " " + 100 * MIB);
        assertThat(Files.readString(dir.resolve("net.log"))).contains("\"bytesOut\":" + 100 * MIB);
    }

    @Test
    void a100MiBBodyArrivesIntactOverHttp2() throws Exception {
        BrokerTest.Run r = curl("--http2", "-w", " %{http_version}", "--data-binary", "@" + body100, https("/sink"));
        assertThat(r.out()).isEqualTo(body100Sha + " " + 100 * MIB + " 2");
    }

    @Test
    void aForeignPlaceholderAt50MiBIsRefusedAndNeverLeaves() throws Exception {
        Path b = dir.resolve("foreign");
        writeBody(b, 60 * MIB, 50 * MIB);
        int before = up.seen.size();
        BrokerTest.Run h1 = curl("--http1.1", "-w", "%{http_code}", "--data-binary", "@" + b, https("/sink"));
        assertThat(h1.out()).endsWith("403").contains("OTHER_TOKEN");
        BrokerTest.Run h2 = curl("--http2", "-w", "%{http_code}", "--data-binary", "@" + b, https("/sink"));
        assertThat(h2.out()).endsWith("403").contains("OTHER_TOKEN");
        BrokerTest.Run plain = curl("-w", "%{http_code}", "--data-binary", "@" + b, "http://" + HOST + "/sink",
                "--connect-to", HOST + ":80:127.0.0.1:" + http.port());
        assertThat(plain.out()).endsWith("403");
        Files.delete(b);
        assertThat(up.seen.size()).as("requests the upstream got").isEqualTo(before);
        assertThat(Files.readString(dir.resolve("net.log"))).contains("possible exfiltration");
    }

    @Test
    void aPlaceholderSplitAcrossTwoChunksAt50MiBIsFound() throws Exception {
        int before = up.seen.size();
        String half = FOREIGN.substring(0, 17);
        try (SSLSocket s = tlsSocket()) {
            OutputStream out = s.getOutputStream();
            out.write(("POST /sink HTTP/1.1\r\nHost: " + HOST + "\r\nTransfer-Encoding: chunked\r\n\r\n")
                    .getBytes(StandardCharsets.US_ASCII));
            byte[] filler = new byte[(int) MIB];
            java.util.Arrays.fill(filler, (byte) 'f');
            for (int i = 0; i < 50; i++) {
                chunk(out, filler);
            }
            chunk(out, ("end of one chunk " + half).getBytes(StandardCharsets.US_ASCII));
            chunk(out, (FOREIGN.substring(17) + " start of the next").getBytes(StandardCharsets.US_ASCII));
            chunk(out, filler);
            out.write("0\r\n\r\n".getBytes(StandardCharsets.US_ASCII));
            out.flush();
            String head = BrokerTest.readHead(s.getInputStream());
            assertThat(head).startsWith("HTTP/1.1 403");
        }
        assertThat(up.seen.size()).isEqualTo(before);
    }

    @Test
    void bodiesPastTheBoundsGet413() throws Exception {
        // the real bound, declared: refused on the head, with or without Expect, before any of the body
        BrokerTest.Run declared = curl("-w", "%{http_code}", "-H", "Content-Length: " + (SpoolLimits.DEFAULT
                .perRequest() + 1), "-H", "Expect: 100-continue", "--data-binary", "small", https("/sink"));
        assertThat(declared.out()).endsWith("413").contains(SpoolLimits.DEFAULT.perRequest() + " bytes (1024 MiB)");
        broker.spool().limits(new SpoolLimits(24 * MIB, 40 * MIB));
        Path b = dir.resolve("30MiB");
        writeBody(b, 30 * MIB, -1);
        for (List<String> how : List.of(List.of("--http1.1"), List.of("--http1.1", "-H", "Transfer-Encoding: chunked"),
                List.of("--http2"))) {
            List<String> args = new ArrayList<>(how);
            args.addAll(List.of("-w", "%{http_code}", "--data-binary", "@" + b, https("/sink")));
            BrokerTest.Run r = curl(args.toArray(String[]::new));
            assertThat(r.out()).as(how.toString()).endsWith("413").contains("the most the broker holds for one");
        }
        // the sandbox's bound: one body held open at 20 MiB, a second of 21 MiB would pass 40
        try (SSLSocket held = tlsSocket()) {
            OutputStream out = held.getOutputStream();
            out.write(("POST /sink HTTP/1.1\r\nHost: " + HOST + "\r\nContent-Length: " + 22 * MIB + "\r\n\r\n")
                    .getBytes(StandardCharsets.US_ASCII));
            byte[] mib = new byte[(int) MIB];
            for (int i = 0; i < 20; i++) {
                out.write(mib);
            }
            out.flush();
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
            // wait until the 20 MiB sent have all been taken in: the count is read twice below, and must not move between
            long last = -1;
            while (System.nanoTime() < deadline) {
                long now = broker.spool().used();
                if (now >= 19 * MIB && now == last) {
                    break;
                }
                last = now;
                Thread.sleep(200);
            }
            // counted in the sandbox's disk budget (the daemon's DiskUsage) while held: the file itself is unlinked
            assertThat(broker.spooledBytes()).isEqualTo(broker.spool().used()).isGreaterThanOrEqualTo(19 * MIB);
            Path b21 = dir.resolve("21MiB");
            writeBody(b21, 21 * MIB, -1);
            BrokerTest.Run r = curl("-w", "%{http_code}", "--data-binary", "@" + b21, https("/sink"));
            assertThat(r.out()).endsWith("413").contains("the broker of this sandbox holds");
            Files.delete(b21);
        }
        Files.delete(b);
    }

    @Test
    void aGuestHangingUpMidBodyLeavesNothing() throws Exception {
        for (boolean chunked : new boolean[] {false, true}) {
            try (SSLSocket s = tlsSocket()) {
                OutputStream out = s.getOutputStream();
                out.write(("POST /sink HTTP/1.1\r\nHost: " + HOST + "\r\n" + (chunked ? "Transfer-Encoding: chunked"
                        : "Content-Length: " + 100 * MIB) + "\r\n\r\n").getBytes(StandardCharsets.US_ASCII));
                byte[] mib = new byte[(int) MIB];
                for (int i = 0; i < 20; i++) {
                    if (chunked) {
                        chunk(out, mib);
                    } else {
                        out.write(mib);
                    }
                }
                out.flush();
                long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
                while (openSpoolFiles().isEmpty() && System.nanoTime() < deadline) {
                    Thread.sleep(20);
                }
                assertThat(openSpoolFiles()).as("the body past 8 MiB is on disk").hasSize(1);
            }
        }
        // @AfterEach: the spool is empty again
    }

    @Test
    void aRefusedHeadsBodyIsDroppedNotHeld() throws Exception {
        try (SSLSocket s = tlsSocket()) {
            OutputStream out = s.getOutputStream();
            out.write(("POST /not-allowed HTTP/1.1\r\nHost: " + HOST + "\r\nContent-Length: " + 100 * MIB
                    + "\r\nExpect: 100-continue\r\n\r\n").getBytes(StandardCharsets.US_ASCII));
            out.flush();
            assertThat(BrokerTest.readHead(s.getInputStream())).startsWith("HTTP/1.1 403");
            out.write(new byte[(int) (20 * MIB)]); // sent all the same: dropped as it comes
            assertThat(broker.spool().used()).isZero();
            assertThat(openSpoolFiles()).isEmpty();
        } catch (java.net.SocketException closedMeanwhile) {
            // the broker lingered and closed: nothing of it was held either
        }
    }

    @Test
    void anUpstreamThatFailsOrAnswersMidBodyFreesTheSpool() throws Exception {
        Path b = dir.resolve("20MiB");
        writeBody(b, 20 * MIB, -1);
        BrokerTest.Run dead = curl("-w", "%{http_code}", "--data-binary", "@" + b, "https://dead.test/x",
                "--connect-to", "dead.test:443:127.0.0.1:" + tls.port());
        assertThat(dead.out()).endsWith("502");
        // the upstream answers (413) before the body is all sent and closes with the rest unread: its kernel resets
        // the connection, which may take the answer with it (curl straight to it sees the same); the rest of the
        // body is not sent, and the spool is freed all the same (checked after each case)
        BrokerTest.Run early = curl("--http1.1", "-w", "%{http_code}", "--data-binary", "@" + b, https("/early"));
        assertThat(early.out()).as(early.toString()).doesNotEndWith("200");
        Files.delete(b);
    }

    @Test
    void aSlowUpstreamHoldsTheFileBackNotTheHeap() throws Exception {
        Path b = dir.resolve("30MiB");
        writeBody(b, 30 * MIB, -1);
        long[] most = {0};
        Thread watch = Thread.ofVirtual().start(() -> {
            while (!Thread.currentThread().isInterrupted()) {
                most[0] = Math.max(most[0], nettyMemory());
                try {
                    Thread.sleep(5);
                } catch (InterruptedException e) {
                    return;
                }
            }
        });
        long before = nettyMemory();
        assertThat(before).as("Netty's allocator counts what it holds").isPositive();
        BrokerTest.Run r = curl("--http1.1", "--data-binary", "@" + b, https("/slow"));
        watch.interrupt();
        watch.join();
        assertThat(r.out()).as(r.toString()).isEqualTo(Long.toString(30 * MIB));
        // 30 MiB went out at the upstream's pace, read from the file as the socket took it: the memory of Netty's
        // allocator grew by a few buffers, never by the body (sent at once, it would hold most of 30 MiB)
        assertThat(most[0] - before).as("Netty's memory above where it was").isLessThan(12 * MIB);
        Files.delete(b);
    }

    @Test
    void aSpooledBodyWhoseSecretsChangedMeanwhileIsRefusedToBeSentAgain() throws Exception {
        SecretBindings before = broker.secrets();
        try (SSLSocket s = tlsSocket()) {
            OutputStream out = s.getOutputStream();
            out.write(("POST /sink HTTP/1.1\r\nHost: " + HOST + "\r\nContent-Length: " + 12 * MIB + "\r\n\r\n")
                    .getBytes(StandardCharsets.US_ASCII));
            out.write(new byte[(int) (10 * MIB)]);
            out.flush();
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
            while (broker.spool().used() < 9 * MIB && System.nanoTime() < deadline) {
                Thread.sleep(20);
            }
            broker.secrets(new SecretBindings(before.all())); // the same secrets, granted again: a new set
            out.write(new byte[(int) (2 * MIB)]);
            out.flush();
            assertThat(BrokerTest.readHead(s.getInputStream())).startsWith("HTTP/1.1 503");
        }
        assertThat(Files.readString(dir.resolve("net.log"))).contains("changed while the body of this request arrived");
    }

    @Test
    void closingTheBrokerMidBodyFreesTheSpool() throws Exception {
        try (Broker other = Broker.start("sbx-big-2", dir.resolve("run-2"),
                new EgressPolicy(false, List.of(AllowRule.parse("POST " + HOST + "/sink"))),
                new AuditLog(dir.resolve("net-2.log"), problems::add), Upstreams.system(EgressTestSettings.NONE),
                dev.kosa8.egress.tls.SandboxCa.loadOrCreate(dir.resolve("sandbox-ca"), "sbx-big"), null, group);
             UnixBridge bridge = new UnixBridge(other.sockets().get(Listener.HTTP));
             Socket s = new Socket("127.0.0.1", bridge.port())) {
            OutputStream out = s.getOutputStream();
            out.write(("POST /sink HTTP/1.1\r\nHost: " + HOST + "\r\nContent-Length: " + 50 * MIB + "\r\n\r\n")
                    .getBytes(StandardCharsets.US_ASCII));
            out.write(new byte[(int) (12 * MIB)]);
            out.flush();
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
            while (other.spool().used() < 11 * MIB && System.nanoTime() < deadline) {
                Thread.sleep(20);
            }
            assertThat(other.spool().used()).isGreaterThanOrEqualTo(11 * MIB); // as the wait above: 11 MiB is there
            other.close();
            deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5); // the pipelines end just after the close
            while ((other.spool().used() != 0 || !openSpoolFiles().isEmpty()) && System.nanoTime() < deadline) {
                Thread.sleep(20);
            }
            assertThat(other.spool().used()).as("counted after the broker closed").isZero();
            assertThat(openSpoolFiles()).as("open after the broker closed").isEmpty();
        }
    }

    @Test
    void aSlowDiskHoldsTheGuestBackNotTheEventLoop() throws Exception {
        Path b = dir.resolve("20MiB");
        String sha = writeBody(b, 20 * MIB, -1);
        broker.spool().slowWrites(300); // the disk takes 300 ms per write: the guest sends far faster
        Process upload = null;
        try {
            List<String> cmd = new ArrayList<>(List.of("curl", "-sS", "--max-time", "120", "--noproxy", "",
                    "--cacert", caPem.toString(), "--connect-to", HOST + ":443:127.0.0.1:" + tls.port(), "--http1.1",
                    "--data-binary", "@" + b, https("/sink")));
            upload = new ProcessBuilder(cmd).start();
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
            while (broker.spool().used() < SpoolFile.AHEAD && System.nanoTime() < deadline) {
                Thread.sleep(20);
            }
            Thread.sleep(1000);
            // the guest is read only as far as the writer keeps up (its length is declared, so the body goes to disk
            // from its first byte): the spool counts what was handed to the disk, a few writes and AHEAD
            long held = broker.spool().used();
            assertThat(held).as("bytes taken from the guest while the disk lags").isBetween((long) SpoolFile.AHEAD,
                    3L * SpoolFile.AHEAD);
            // another connection on the same (one) event loop is served at once meanwhile: with the file written on
            // the loop, each of the upload's reads would hold it for a second or more
            long t0 = System.nanoTime();
            assertThat(curl("-X", "POST", "--data-binary", "x", https("/sink")).out()).hasSize(66);
            long millis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0);
            assertThat(millis).as("ms for a small request while the upload spools").isLessThan(1500);
            assertThat(upload.isAlive()).as("the upload still spooling").isTrue();
        } finally {
            broker.spool().slowWrites(0);
        }
        String out = new String(upload.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(upload.waitFor()).isZero();
        assertThat(out).isEqualTo(sha + " " + 20 * MIB);
        Files.delete(b);
    }

    /** Direct and heap memory Netty's default allocator holds, the broker's as the test's. */
    static long nettyMemory() {
        var m = ((io.netty.buffer.ByteBufAllocatorMetricProvider) io.netty.buffer.ByteBufAllocator.DEFAULT).metric();
        return m.usedDirectMemory() + m.usedHeapMemory();
    }

    static void chunk(OutputStream out, byte[] data) throws Exception {
        out.write((Integer.toHexString(data.length) + "\r\n").getBytes(StandardCharsets.US_ASCII));
        out.write(data);
        out.write("\r\n".getBytes(StandardCharsets.US_ASCII));
    }

    /** A TLS connection to {@link #HOST} through the broker, trusting the sandbox's CA, as curl does. */
    static SSLSocket tlsSocket() throws Exception {
        java.security.KeyStore trust = java.security.KeyStore.getInstance("PKCS12");
        trust.load(null, null);
        try (InputStream pem = Files.newInputStream(caPem)) {
            trust.setCertificateEntry("ca", java.security.cert.CertificateFactory.getInstance("X.509")
                    .generateCertificate(pem));
        }
        var tmf = javax.net.ssl.TrustManagerFactory.getInstance(javax.net.ssl.TrustManagerFactory.getDefaultAlgorithm());
        tmf.init(trust);
        var ctx = javax.net.ssl.SSLContext.getInstance("TLS");
        ctx.init(null, tmf.getTrustManagers(), null);
        Socket raw = new Socket("127.0.0.1", tls.port());
        SSLSocket s = (SSLSocket) ctx.getSocketFactory().createSocket(raw, HOST, 443, true);
        var params = s.getSSLParameters();
        params.setServerNames(List.of(new javax.net.ssl.SNIHostName(HOST)));
        params.setApplicationProtocols(new String[] {"http/1.1"});
        s.setSSLParameters(params);
        s.startHandshake();
        return s;
    }

    /** The spool files the daemon has open: unlinked, so only /proc/self/fd still names them. */
    static List<String> openSpoolFiles() throws Exception {
        List<String> open = new ArrayList<>();
        try (var fds = Files.list(Path.of("/proc/self/fd"))) {
            for (Path fd : fds.toList()) {
                try {
                    String target = Files.readSymbolicLink(fd).toString();
                    if (target.contains("/bodies/body-")) {
                        open.add(target);
                    }
                } catch (java.io.IOException gone) {
                    // closed while listed
                }
            }
        }
        return open;
    }

    static String https(String path) {
        return "https://" + HOST + path;
    }

    static BrokerTest.Run curl(String... args) throws Exception {
        return intercepting.curl(HOST, args);
    }

    /** Writes {@code size} pseudo-random bytes, with {@link #FOREIGN} at {@code at} unless negative; its SHA-256. */
    static String writeBody(Path f, long size, long at) throws Exception {
        MessageDigest sha = sha256();
        java.util.Random random = new java.util.Random(size);
        byte[] block = new byte[(int) MIB];
        try (OutputStream out = Files.newOutputStream(f)) {
            for (long off = 0; off < size; off += block.length) {
                random.nextBytes(block);
                for (int i = 0; i < block.length; i++) {
                    block[i] = (byte) ('a' + (block[i] & 15)); // text, so no accidental placeholder form
                }
                if (at >= off && at < off + block.length) {
                    byte[] p = FOREIGN.getBytes(StandardCharsets.US_ASCII);
                    System.arraycopy(p, 0, block, (int) (at - off), Math.min(p.length, (int) (off + block.length - at)));
                }
                int n = (int) Math.min(block.length, size - off);
                out.write(block, 0, n);
                sha.update(block, 0, n);
            }
        }
        return HexFormat.of().formatHex(sha.digest());
    }

    static MessageDigest sha256() {
        try {
            return MessageDigest.getInstance("SHA-256");
        } catch (java.security.NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }
}
