/*
 * Egress benchmark (issue 4): what the broker adds to a guest's TLS traffic, measured from the host against
 * ONE loopback HTTPS server, three paths side by side in one run, alternating in every round:
 *   - direct: the client dials the server;
 *   - relay:  the client dials a socat relay that dials the server (the hop a guest's connection also takes,
 *             since QEMU's guestfwd starts a socat per connection) — the baseline the broker is judged by;
 *   - broker: the client dials a socat relay into the broker's TLS unix socket; the broker reads the SNI,
 *             checks the policy, resolves (a test mapping to the loopback server), dials, and passes TLS
 *             through;
 *   - intercept: the same, into a broker whose rule for the name has a method (GET api.test/), so it ends the
 *             client's TLS with its sandbox CA's leaf, judges each request, and carries it on over TLS it
 *             verifies itself (one upstream connection per request, the client's kept alive).
 * Small requests: one keep-alive TLS connection per path and round, N GETs of a 32-byte body, each timed;
 * p50/p99 over all rounds. Bulk: a 100 MB body per path and round, MB/s; median of the rounds. Nothing is counted
 * before every path has moved WARM_MB (the JVM's JIT settles only after a few GB).
 * The client verifies the server's certificate by name (api.test) with the test CA, as a guest's client does.
 *
 *   java -cp host/target/kosa8.jar bench/EgressBench.java [--rounds 5] [--requests 2000] [--bulk-mb 100]
 */
import dev.kosa8.egress.AllowRule;
import dev.kosa8.egress.AuditLog;
import dev.kosa8.egress.Broker;
import dev.kosa8.egress.EgressPolicy;
import dev.kosa8.egress.EgressTestSettings;
import dev.kosa8.egress.Listener;
import dev.kosa8.egress.Upstreams;
import dev.kosa8.egress.tls.SandboxCa;
import com.sun.net.httpserver.HttpsConfigurator;
import com.sun.net.httpserver.HttpsServer;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.epoll.EpollIoHandler;
import java.io.*;
import java.net.*;
import java.nio.charset.StandardCharsets;
import java.nio.file.*;
import java.security.KeyStore;
import java.security.cert.Certificate;
import java.util.*;
import java.util.concurrent.Executors;
import javax.net.ssl.*;

public class EgressBench {
    public static void main(String[] args) throws Exception {
        int rounds = 5, requests = 2000, bulkMb = 100;
        for (int i = 0; i < args.length; i++) {
            switch (args[i]) {
                case "--rounds" -> rounds = Integer.parseInt(args[++i]);
                case "--requests" -> requests = Integer.parseInt(args[++i]);
                case "--bulk-mb" -> bulkMb = Integer.parseInt(args[++i]);
                default -> throw new IllegalArgumentException("unknown option " + args[i]);
            }
        }
        Path dir = Files.createTempDirectory("kosa8-egress-bench");
        SandboxCa ca = SandboxCa.loadOrCreate(dir.resolve("ca"), "bench");
        var leaf = ca.leafFor("api.test");
        KeyStore ks = KeyStore.getInstance("PKCS12");
        ks.load(null, null);
        ks.setKeyEntry("k", leaf.key(), new char[0], new Certificate[] {leaf.leaf(), leaf.ca()});
        KeyManagerFactory kmf = KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm());
        kmf.init(ks, new char[0]);
        SSLContext serverSsl = SSLContext.getInstance("TLS");
        serverSsl.init(kmf.getKeyManagers(), null, null);
        HttpsServer server = HttpsServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 64);
        server.setHttpsConfigurator(new HttpsConfigurator(serverSsl));
        server.setExecutor(Executors.newVirtualThreadPerTaskExecutor());
        byte[] small = "0123456789abcdef0123456789abcdef".getBytes(StandardCharsets.US_ASCII);
        server.createContext("/small", x -> {
            x.sendResponseHeaders(200, small.length);
            try (OutputStream o = x.getResponseBody()) { o.write(small); }
        });
        server.createContext("/big", x -> {
            long n = Long.parseLong(x.getRequestURI().getQuery().substring(2));
            x.sendResponseHeaders(200, n);
            byte[] chunk = new byte[256 * 1024];
            try (OutputStream o = x.getResponseBody()) {
                for (long left = n; left > 0; left -= chunk.length) o.write(chunk, 0, (int) Math.min(left, chunk.length));
            }
        });
        server.start();
        int serverPort = server.getAddress().getPort();

        var group = new MultiThreadIoEventLoopGroup(2, EpollIoHandler.newFactory());
        Path serverCaPem = Files.writeString(dir.resolve("server-ca.pem"), ca.certificatePem());
        EgressTestSettings test = new EgressTestSettings(Map.of("api.test:443", serverPort), Map.of(), Optional.of(serverCaPem));
        SandboxCa sandboxCa = SandboxCa.loadOrCreate(dir.resolve("sandbox-ca"), "bench");
        var upstreamTls = dev.kosa8.egress.tls.UpstreamTls.clientContext(test.trustedCa());
        Broker broker = Broker.start("bench", dir.resolve("run"), new EgressPolicy(false, List.of(AllowRule.parse("api.test"))),
                new AuditLog(dir.resolve("net.log"), System.err::println), Upstreams.system(test), sandboxCa, upstreamTls, group);
        Broker intercepting = Broker.start("bench-i", dir.resolve("run-i"),
                new EgressPolicy(false, List.of(AllowRule.parse("GET api.test/"))),
                new AuditLog(dir.resolve("net-i.log"), System.err::println), Upstreams.system(test), sandboxCa, upstreamTls, group);

        // a key bound to the name (issue 5): intercepted, and each request gets the real key in its header
        Broker injecting = Broker.start("bench-s", dir.resolve("run-s"),
                new EgressPolicy(false, List.of(AllowRule.parse("api.test"))),
                new AuditLog(dir.resolve("net-s.log"), System.err::println), Upstreams.system(test), sandboxCa, upstreamTls, group);
        injecting.secrets(new dev.kosa8.egress.SecretBindings(List.of(new dev.kosa8.egress.SecretBinding("BENCH_KEY",
                "api.test", 443, "Authorization", "Bearer {}", "sk-bench-placeholder00000000000000000000",
                "sk-bench-0123456789abcdefghijklmnopqrstu"))));

        List<Process> relays = new ArrayList<>();
        int relayPort = relay(relays, "TCP:127.0.0.1:" + serverPort);
        int brokerPort = relay(relays, "UNIX-CONNECT:" + broker.sockets().get(Listener.TLS));
        int interceptPort = relay(relays, "UNIX-CONNECT:" + intercepting.sockets().get(Listener.TLS));

        TrustManagerFactory tmf = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
        KeyStore trust = KeyStore.getInstance("PKCS12");
        trust.load(null, null);
        trust.setCertificateEntry("ca", ca.certificate());
        trust.setCertificateEntry("sandbox-ca", sandboxCa.certificate());
        tmf.init(trust);
        SSLContext clientSsl = SSLContext.getInstance("TLS");
        clientSsl.init(null, tmf.getTrustManagers(), null);

        Map<String, Integer> paths = new LinkedHashMap<>();
        paths.put("direct", serverPort);
        paths.put("relay", relayPort);
        paths.put("broker", brokerPort);
        paths.put("intercept", interceptPort);
        Map<String, List<Double>> lat = new LinkedHashMap<>();
        Map<String, List<Double>> mbps = new LinkedHashMap<>();
        paths.keySet().forEach(k -> { lat.put(k, new ArrayList<>()); mbps.put(k, new ArrayList<>()); });
        // warm-up: the daemon is a long-lived JVM, so its steady state is what counts. A few MB was not enough:
        // measured here, an intercepted download ran at 200-260 MB/s for its first ~2 GB, while C2 was still
        // compiling the broker's and the server's paths, and at ~500 MB/s after. So every path moves WARM_MB first.
        System.err.printf("warming up every path (%d MB each)...%n", WARM_MB);
        for (int w = 0; w * bulkMb < WARM_MB; w++) {
            for (String p : paths.keySet()) {
                smallRequests(clientSsl, paths.get(p), 300);
                bulk(clientSsl, paths.get(p), (long) bulkMb * 1_000_000);
            }
        }
        for (int r = 0; r < rounds; r++) {
            List<String> order = new ArrayList<>(paths.keySet());
            if (r % 2 == 1) Collections.reverse(order);
            for (String p : order) {
                lat.get(p).addAll(smallRequests(clientSsl, paths.get(p), requests));
                mbps.get(p).add(bulk(clientSsl, paths.get(p), (long) bulkMb * 1_000_000));
                System.err.printf("round %d %s done%n", r + 1, p);
            }
        }
        System.out.println("| path | small GET p50 (ms) | p99 (ms) | " + bulkMb + " MB download (MB/s, median) |");
        System.out.println("|---|---|---|---|");
        for (String p : paths.keySet()) {
            System.out.printf("| %s | %.3f | %.3f | %.0f |%n", p, pct(lat.get(p), 50), pct(lat.get(p), 99), pct(mbps.get(p), 50));
        }
        double added = pct(lat.get("broker"), 50) - pct(lat.get("relay"), 50);
        System.out.printf("%nbroker vs relay: %+.3f ms at p50 (goal <= 1 ms), throughput %.2fx (goal >= 0.80)%n",
                added, pct(mbps.get("broker"), 50) / pct(mbps.get("relay"), 50));
        System.out.printf("broker vs direct: %+.3f ms at p50, throughput %.2fx%n",
                pct(lat.get("broker"), 50) - pct(lat.get("direct"), 50), pct(mbps.get("broker"), 50) / pct(mbps.get("direct"), 50));
        System.out.printf("intercept vs relay: %+.3f ms at p50, throughput %.2fx%n",
                pct(lat.get("intercept"), 50) - pct(lat.get("relay"), 50), pct(mbps.get("intercept"), 50) / pct(mbps.get("relay"), 50));
        curlRows(dir, ca, sandboxCa, serverPort, broker, intercepting, injecting, rounds, bulkMb);
        relays.forEach(Process::destroy);
        broker.close();
        intercepting.close();
        injecting.close();
        server.stop(0);
        group.shutdownGracefully().sync();
    }

    /**
     * The same comparison with curl (OpenSSL) as the client and no relay at all: curl dials the server, or speaks
     * TLS straight into the broker's unix socket ({@code --unix-socket}), so the broker's own cost is all that
     * differs. 100 requests on one connection (per-request time from curl's own clock), then the bulk download.
     */
    static void curlRows(Path dir, SandboxCa serverCa, SandboxCa sandboxCa, int serverPort, Broker broker,
                         Broker intercepting, Broker injecting, int rounds, int bulkMb) throws Exception {
        Path bundle = dir.resolve("bundle.pem");
        Files.writeString(bundle, serverCa.certificatePem() + sandboxCa.certificatePem());
        Map<String, List<String>> how = new LinkedHashMap<>();
        how.put("curl direct", List.of("--connect-to", "api.test:443:127.0.0.1:" + serverPort));
        how.put("curl broker", List.of("--unix-socket", broker.sockets().get(Listener.TLS).toString()));
        how.put("curl intercept", List.of("--unix-socket", intercepting.sockets().get(Listener.TLS).toString()));
        how.put("curl inject", List.of("--unix-socket", injecting.sockets().get(Listener.TLS).toString()));
        Map<String, List<Double>> lat = new LinkedHashMap<>();
        Map<String, List<Double>> mbps = new LinkedHashMap<>();
        Map<String, List<Double>> jvmCpuPerGb = new LinkedHashMap<>();
        Map<String, List<Double>> curlCpuPerGb = new LinkedHashMap<>();
        Map<String, List<Double>> brokerCpuPerGb = new LinkedHashMap<>();
        Map<String, List<Double>> otherCpuPerGb = new LinkedHashMap<>();
        Map<String, List<Double>> internalCpuPerGb = new LinkedHashMap<>();
        how.keySet().forEach(k -> {
            brokerCpuPerGb.put(k, new ArrayList<>());
            otherCpuPerGb.put(k, new ArrayList<>());
            internalCpuPerGb.put(k, new ArrayList<>());
            lat.put(k, new ArrayList<>());
            mbps.put(k, new ArrayList<>());
            jvmCpuPerGb.put(k, new ArrayList<>());
            curlCpuPerGb.put(k, new ArrayList<>());
        });
        for (int r = 0; r < rounds + 1; r++) {
            List<String> order = new ArrayList<>(how.keySet());
            if (r % 2 == 1) Collections.reverse(order);
            for (String k : order) {
                List<String> small = new ArrayList<>(List.of("curl", "-s", "--cacert", bundle.toString()));
                small.addAll(how.get(k));
                for (int i = 0; i < 100; i++) {
                    small.addAll(List.of("-o", "/dev/null", "-w", "%{time_total}\\n", "https://api.test/small"));
                }
                List<Double> times = run(small).lines().map(Double::parseDouble).toList();
                // bash's `times` gives curl's CPU time; the JVM's own counter gives the server's and the broker's
                List<String> big = new ArrayList<>(List.of("bash", "-c", "\"$@\" && echo && times", "-",
                        "curl", "-s", "--cacert", bundle.toString(), "-o", "/dev/null", "-w", "%{speed_download}"));
                big.addAll(how.get(k));
                big.add("https://api.test/big?n=" + (long) bulkMb * 1_000_000);
                Map<Long, Long> threadsBefore = threadCpu();
                long jvmBefore = JVM.getProcessCpuTime();
                List<String> out = run(big).lines().toList();
                double jvmCpu = (JVM.getProcessCpuTime() - jvmBefore) / 1e9;
                double[] split = split(threadsBefore, threadCpu());
                double speed = Double.parseDouble(out.get(0).strip()) / 1e6;
                double curlCpu = Arrays.stream(out.get(2).split(" ")).mapToDouble(EgressBench::bashTime).sum();
                if (r > 0) { // round 0 warms the JIT of server and broker
                    lat.get(k).addAll(times.subList(1, times.size()).stream().map(t -> t * 1000).toList());
                    mbps.get(k).add(speed);
                    jvmCpuPerGb.get(k).add(jvmCpu * 1000 / bulkMb);
                    brokerCpuPerGb.get(k).add(split[0] * 1000 / bulkMb);
                    otherCpuPerGb.get(k).add(split[1] * 1000 / bulkMb);
                    internalCpuPerGb.get(k).add((jvmCpu - split[0] - split[1]) * 1000 / bulkMb);
                    curlCpuPerGb.get(k).add(curlCpu * 1000 / bulkMb);
                }
            }
        }
        System.out.println();
        System.out.println("| curl, no relay | small GET p50 (ms) | p99 (ms) | " + bulkMb + " MB download (MB/s, median) |");
        System.out.println("|---|---|---|---|");
        for (String k : how.keySet()) {
            System.out.printf("| %s | %.3f | %.3f | %.0f |%n", k.substring(5), pct(lat.get(k), 50), pct(lat.get(k), 99),
                    pct(mbps.get(k), 50));
        }
        System.out.println();
        System.out.println("| curl, no relay | CPU s per GB: server and broker (JVM) | curl | total | throughput bound on "
                + CORES + " cores (MB/s) |");
        System.out.println("|---|---|---|---|---|");
        for (String k : how.keySet()) {
            double jvm = pct(jvmCpuPerGb.get(k), 50), curl = pct(curlCpuPerGb.get(k), 50);
            System.out.printf("| %s | %.2f | %.2f | %.2f | %.0f |%n", k.substring(5), jvm, curl, jvm + curl,
                    CORES * 1000 / (jvm + curl));
        }
        System.out.println();
        System.out.println("| curl, no relay | CPU s per GB: broker's event loops | server (its threads) | JVM's own (JIT, GC)"
                + " | curl | bound on " + CORES + " cores without the JVM's own (MB/s) |");
        System.out.println("|---|---|---|---|---|---|");
        for (String k : how.keySet()) {
            double b = pct(brokerCpuPerGb.get(k), 50), o = pct(otherCpuPerGb.get(k), 50),
                    in = pct(internalCpuPerGb.get(k), 50), curl = pct(curlCpuPerGb.get(k), 50);
            System.out.printf("| %s | %.2f | %.2f | %.2f | %.2f | %.0f |%n", k.substring(5), b, o, in, curl,
                    CORES * 1000 / (b + o + curl));
        }
        System.out.printf("%ncurl: broker vs direct %+.3f ms at p50, throughput %.2fx; intercept vs direct %+.3f ms, %.2fx%n",
                pct(lat.get("curl broker"), 50) - pct(lat.get("curl direct"), 50),
                pct(mbps.get("curl broker"), 50) / pct(mbps.get("curl direct"), 50),
                pct(lat.get("curl intercept"), 50) - pct(lat.get("curl direct"), 50),
                pct(mbps.get("curl intercept"), 50) / pct(mbps.get("curl direct"), 50));
        System.out.printf("curl: inject (key put in, responses scrubbed) vs passthrough %+.3f ms at p50, throughput %.2fx; "
                        + "vs intercept %+.3f ms, %.2fx%n",
                pct(lat.get("curl inject"), 50) - pct(lat.get("curl broker"), 50),
                pct(mbps.get("curl inject"), 50) / pct(mbps.get("curl broker"), 50),
                pct(lat.get("curl inject"), 50) - pct(lat.get("curl intercept"), 50),
                pct(mbps.get("curl inject"), 50) / pct(mbps.get("curl intercept"), 50));
    }

    /** MB each path moves before anything is counted. */
    static final int WARM_MB = 2000;

    static final com.sun.management.OperatingSystemMXBean JVM =
            (com.sun.management.OperatingSystemMXBean) java.lang.management.ManagementFactory.getOperatingSystemMXBean();
    static final int CORES = Runtime.getRuntime().availableProcessors();

    static final java.lang.management.ThreadMXBean THREADS = java.lang.management.ManagementFactory.getThreadMXBean();

    /** CPU ns of every live thread the JVM shows (not its compiler and GC threads, which it hides), by id. */
    static Map<Long, Long> threadCpu() {
        Map<Long, Long> cpu = new HashMap<>();
        for (long id : THREADS.getAllThreadIds()) {
            long ns = THREADS.getThreadCpuTime(id);
            if (ns >= 0) cpu.put(id, ns);
        }
        return cpu;
    }

    /**
     * Seconds of CPU between two {@link #threadCpu} readings: [the broker's event loops, every other thread the
     * JVM shows (the server's dispatcher and its virtual threads' carriers)]. The rest of the process's CPU is the
     * JVM's own: JIT compilers, GC. A thread that ended in between is lost (none does: the loops and carriers
     * outlive a download).
     */
    static double[] split(Map<Long, Long> before, Map<Long, Long> after) {
        double broker = 0, other = 0;
        for (var e : after.entrySet()) {
            double s = (e.getValue() - before.getOrDefault(e.getKey(), 0L)) / 1e9;
            java.lang.management.ThreadInfo info = THREADS.getThreadInfo(e.getKey());
            if (info != null && info.getThreadName().startsWith("multiThreadIoEventLoopGroup")) broker += s;
            else other += s;
        }
        return new double[] {broker, other};
    }

    /** Seconds from bash's {@code times} format, {@code 1m2.345s}. */
    static double bashTime(String t) {
        int m = t.indexOf('m');
        return Integer.parseInt(t.substring(0, m)) * 60 + Double.parseDouble(t.substring(m + 1, t.length() - 1));
    }

    static String run(List<String> cmd) throws Exception {
        Process p = new ProcessBuilder(cmd).redirectError(ProcessBuilder.Redirect.INHERIT).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        if (p.waitFor() != 0) throw new IOException("failed (" + p.exitValue() + "): " + String.join(" ", cmd.subList(0, 6)));
        return out;
    }

    static int relay(List<Process> relays, String target) throws Exception {
        int port;
        try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) { port = s.getLocalPort(); }
        Process p = new ProcessBuilder("socat", "TCP-LISTEN:" + port + ",bind=127.0.0.1,fork,reuseaddr", target)
                .redirectErrorStream(true).start();
        relays.add(p);
        for (int i = 0; i < 100; i++) {
            try (Socket s = new Socket(InetAddress.getLoopbackAddress(), port)) { return port; } catch (IOException e) { Thread.sleep(50); }
        }
        throw new IOException("socat did not listen on " + port);
    }

    static SSLSocket open(SSLContext ssl, int port) throws IOException {
        Socket raw = new Socket(InetAddress.getLoopbackAddress(), port);
        raw.setTcpNoDelay(true);
        SSLSocket s = (SSLSocket) ssl.getSocketFactory().createSocket(raw, "api.test", 443, true);
        SSLParameters params = s.getSSLParameters();
        params.setEndpointIdentificationAlgorithm("HTTPS");
        params.setServerNames(List.of(new SNIHostName("api.test")));
        s.setSSLParameters(params);
        s.startHandshake();
        return s;
    }

    static List<Double> smallRequests(SSLContext ssl, int port, int n) throws IOException {
        List<Double> out = new ArrayList<>(n);
        try (SSLSocket s = open(ssl, port)) {
            OutputStream o = new BufferedOutputStream(s.getOutputStream());
            InputStream in = new BufferedInputStream(s.getInputStream());
            byte[] req = "GET /small HTTP/1.1\r\nHost: api.test\r\n\r\n".getBytes(StandardCharsets.US_ASCII);
            for (int i = 0; i < n; i++) {
                long t0 = System.nanoTime();
                o.write(req);
                o.flush();
                long len = readHead(in);
                in.readNBytes((int) len);
                out.add((System.nanoTime() - t0) / 1e6);
            }
        }
        return out;
    }

    static double bulk(SSLContext ssl, int port, long bytes) throws IOException {
        try (SSLSocket s = open(ssl, port)) {
            long t0 = System.nanoTime();
            OutputStream o = s.getOutputStream();
            o.write(("GET /big?n=" + bytes + " HTTP/1.1\r\nHost: api.test\r\n\r\n").getBytes(StandardCharsets.US_ASCII));
            o.flush();
            InputStream in = new BufferedInputStream(s.getInputStream(), 256 * 1024);
            long len = readHead(in);
            byte[] buf = new byte[256 * 1024];
            long got = 0;
            while (got < len) {
                int k = in.read(buf, 0, (int) Math.min(buf.length, len - got));
                if (k < 0) throw new EOFException("short body: " + got + " of " + len);
                got += k;
            }
            return len / 1e6 / ((System.nanoTime() - t0) / 1e9);
        }
    }

    /** Reads a response head; returns its Content-Length. */
    static long readHead(InputStream in) throws IOException {
        StringBuilder line = new StringBuilder();
        long len = -1;
        int status = -1;
        while (true) {
            int c = in.read();
            if (c < 0) throw new EOFException("connection closed in a response head");
            if (c == '\n') {
                String l = line.toString().strip();
                line.setLength(0);
                if (l.isEmpty()) break;
                if (status < 0) status = Integer.parseInt(l.split(" ")[1]);
                else if (l.toLowerCase(Locale.ROOT).startsWith("content-length:")) len = Long.parseLong(l.substring(15).strip());
            } else line.append((char) c);
        }
        if (status != 200 || len < 0) throw new IOException("unexpected response: status " + status + ", length " + len);
        return len;
    }

    static double pct(List<Double> v, int p) {
        List<Double> s = new ArrayList<>(v);
        Collections.sort(s);
        return s.get(Math.min(s.size() - 1, (int) Math.ceil(p / 100.0 * s.size()) - 1));
    }
}
