/*
 * Egress benchmark (issue 4): what the broker adds to a guest's TLS traffic, measured from the host against
 * ONE loopback HTTPS server, three paths side by side in one run, alternating in every round:
 *   - direct: the client dials the server;
 *   - relay:  the client dials a socat relay that dials the server (the hop a guest's connection also takes,
 *             since QEMU's guestfwd starts a socat per connection) — the baseline the broker is judged by;
 *   - broker: the client dials a socat relay into the broker's TLS unix socket; the broker reads the SNI,
 *             checks the policy, resolves (a test mapping to the loopback server), dials, and passes TLS
 *             through (the name is allowed {@code passthrough api.test});
 *   - intercept: the same, into a broker that allows the name as every host is by default (api.test), so it ends
 *             the client's TLS with its sandbox CA's leaf, checks each request's authority, and carries it on over
 *             TLS it verifies itself (the upstream connection kept while the client's is);
 *   - intercept-h2 (curl rows only): the same broker, the client speaking HTTP/2 to it (ALPN h2), one stream per
 *             request, each checked on its own; the broker carries streams on over HTTP/1.1. The other curl rows
 *             ask for HTTP/1.1.
 *   - issue 42's rows (curl --http2): a second server in the --serve process (bench/H2BenchServer.java, Netty,
 *             offering h2) reached passed through, through a broker whose upstream leg speaks HTTP/1.1 (the leg
 *             before issue 42), and through one that offers it h2: the upstream leg's A/B in one run.
 * Interception is judged against passthrough measured in the same run (its A/B), and every path against direct.
 * Small requests: one keep-alive TLS connection per path and round, N GETs of a 32-byte body, each timed;
 * p50/p99 over all rounds. Bulk: a 100 MB body per path and round, MB/s; median of the rounds. Nothing is counted
 * before every path has moved WARM_MB (the JVM's JIT settles only after a few GB).
 * The client verifies the server's certificate by name (api.test) with the test CA, as a guest's client does.
 *
 * The server runs in a process of its own (this file with --serve), so that the curl rows can also be run with the
 * CPUs laid out two ways, interleaved in every round (see CpuLayout):
 *   - shared: server, curl and the broker all on every CPU, as in a laptop's single busy moment;
 *   - apart:  the transfer's two ends (server and curl) on CPU 0, the broker's JVM on CPU 1 — a scaled-down model
 *             of a machine with a core free for the daemon, where the direct path gets the same one core.
 *
 *   java -Dbench.source=bench/EgressBench.java -cp host/target/kosa8.jar bench/EgressBench.java \
 *        [--rounds 5] [--requests 2000] [--bulk-mb 100] [--curl-only] [--warm-mb 2000] [--guest]
 * --guest measures through a real guest instead, and nothing else (EgressGuestRows, beside this file): REQUESTS
 * connections per round, each timed from its connect to the end of a small answer, and a BULK_MB download.
 * --curl-only skips the JDK client's rows (through the socat relay) and runs the curl rows alone. --warm-mb: what
 * every path moves before anything is counted (smaller only to try the bench out: the JIT needs the 2,000 MB).
 * Writes its result under bench/results/ (bench/BenchResult.java): per path and CPU layout, p50 and download
 * throughput against the direct path (the JDK client's rows: against the relay), with their samples per round.
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
        if (args.length == 2 && args[0].equals("--serve")) {
            serve(Path.of(args[1]));
            return;
        }
        int rounds = 5, requests = 2000, bulkMb = 100, warmMb = WARM_MB;
        boolean curlOnly = false;
        boolean guest = false;
        for (int i = 0; i < args.length; i++) {
            switch (args[i]) {
                case "--rounds" -> rounds = Integer.parseInt(args[++i]);
                case "--requests" -> requests = Integer.parseInt(args[++i]);
                case "--bulk-mb" -> bulkMb = Integer.parseInt(args[++i]);
                case "--curl-only" -> curlOnly = true;
                case "--warm-mb" -> warmMb = Integer.parseInt(args[++i]);
                case "--guest" -> guest = true;
                default -> throw new IllegalArgumentException("unknown option " + args[i]);
            }
        }
        if (guest) { // the rows through a real guest alone (EgressGuestRows): REQUESTS connections, a BULK_MB download
            BenchResult result = new BenchResult("egress");
            EgressGuestRows.run(result, rounds, requests, bulkMb);
            result.write();
            return;
        }
        BenchResult result = new BenchResult("egress").fact("accelerator", "none: no VM (host side only)");
        Path dir = Files.createTempDirectory("kosa8-egress-bench");
        SandboxCa ca = SandboxCa.loadOrCreate(dir.resolve("ca"), "bench");
        Server server = Server.start(dir);
        int serverPort = server.port();

        var group = new MultiThreadIoEventLoopGroup(2, EpollIoHandler.newFactory());
        Path serverCaPem = Files.writeString(dir.resolve("server-ca.pem"), ca.certificatePem());
        EgressTestSettings test = new EgressTestSettings(Map.of("api.test:443", serverPort), Map.of(), Optional.of(serverCaPem));
        SandboxCa sandboxCa = SandboxCa.loadOrCreate(dir.resolve("sandbox-ca"), "bench");
        var upstreamTls = dev.kosa8.egress.tls.UpstreamTls.clientContext(test.trustedCa());
        Broker broker = Broker.start("bench", dir.resolve("run"), new EgressPolicy(false, List.of(AllowRule.parse("passthrough api.test"))),
                new AuditLog(dir.resolve("net.log"), System.err::println), Upstreams.system(test), sandboxCa, upstreamTls, group);
        Broker intercepting = Broker.start("bench-i", dir.resolve("run-i"),
                new EgressPolicy(false, List.of(AllowRule.parse("api.test"))),
                new AuditLog(dir.resolve("net-i.log"), System.err::println), Upstreams.system(test), sandboxCa, upstreamTls, group);

        // issue 42's A/B: the upstream leg in HTTP/2 or HTTP/1.1, to the same Netty server that offers h2; and that
        // server passed through, the client speaking HTTP/2 to it end to end
        EgressTestSettings toH2 = new EgressTestSettings(Map.of("api.test:443", server.h2Port()), Map.of(),
                Optional.of(serverCaPem));
        Broker upH2 = Broker.start("bench-h2", dir.resolve("run-h2"), new EgressPolicy(false, List.of(AllowRule.parse(
                "api.test"))), new AuditLog(dir.resolve("net-h2.log"), System.err::println), Upstreams.system(toH2),
                sandboxCa, upstreamTls, group);
        upH2.upstreamHttp2(dev.kosa8.egress.tls.UpstreamTls.http2ClientContext(toH2.trustedCa(),
                dev.kosa8.egress.tls.HostCas.NONE));
        Broker upH1 = Broker.start("bench-h1", dir.resolve("run-h1"), new EgressPolicy(false, List.of(AllowRule.parse(
                "api.test"))), new AuditLog(dir.resolve("net-h1.log"), System.err::println), Upstreams.system(toH2),
                sandboxCa, upstreamTls, group);
        Broker passH2 = Broker.start("bench-p2", dir.resolve("run-p2"), new EgressPolicy(false, List.of(AllowRule.parse(
                "passthrough api.test"))), new AuditLog(dir.resolve("net-p2.log"), System.err::println),
                Upstreams.system(toH2), sandboxCa, upstreamTls, group);
        H2_ROWS.put("h2 passthrough (Netty server)", List.of("--http2", "--unix-socket",
                passH2.sockets().get(Listener.TLS).toString()));
        H2_ROWS.put("h2 guest, h1 upstream", List.of("--http2", "--unix-socket",
                upH1.sockets().get(Listener.TLS).toString()));
        H2_ROWS.put("h2 guest, h2 upstream", List.of("--http2", "--unix-socket",
                upH2.sockets().get(Listener.TLS).toString()));

        // a key bound to the name (issue 5): intercepted, and each request gets the real key in its header
        Broker injecting = Broker.start("bench-s", dir.resolve("run-s"),
                new EgressPolicy(false, List.of(AllowRule.parse("api.test"))),
                new AuditLog(dir.resolve("net-s.log"), System.err::println), Upstreams.system(test), sandboxCa, upstreamTls, group);
        injecting.secrets(new dev.kosa8.egress.SecretBindings(List.of(new dev.kosa8.egress.SecretBinding("BENCH_KEY",
                "api.test", 443, "Authorization", "Bearer {}", "sk-bench-placeholder00000000000000000000",
                "sk-bench-0123456789abcdefghijklmnopqrstu"))));

        List<Process> relays = new ArrayList<>();
        if (!curlOnly) {
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
            Map<String, List<Double>> latRounds = new LinkedHashMap<>(); // each round's p50
            Map<String, List<Double>> mbps = new LinkedHashMap<>();
            paths.keySet().forEach(k -> {
                lat.put(k, new ArrayList<>());
                latRounds.put(k, new ArrayList<>());
                mbps.put(k, new ArrayList<>());
            });
            // warm-up: the daemon is a long-lived JVM, so its steady state is what counts. A few MB was not enough:
            // measured here, an intercepted download ran at 200-260 MB/s for its first ~2 GB, while C2 was still
            // compiling the broker's and the server's paths, and at ~500 MB/s after. So every path moves WARM_MB first.
            System.err.printf("warming up every path (%d MB each)...%n", warmMb);
            for (int w = 0; w * bulkMb < warmMb; w++) {
                for (String p : paths.keySet()) {
                    smallRequests(clientSsl, paths.get(p), 300);
                    bulk(clientSsl, paths.get(p), (long) bulkMb * 1_000_000);
                }
            }
            for (int r = 0; r < rounds; r++) {
                List<String> order = new ArrayList<>(paths.keySet());
                if (r % 2 == 1) Collections.reverse(order);
                for (String p : order) {
                    List<Double> times = smallRequests(clientSsl, paths.get(p), requests);
                    lat.get(p).addAll(times);
                    latRounds.get(p).add(pct(times, 50));
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
            for (String p : List.of("broker", "intercept")) {
                result.add(BenchResult.Row.of("JDK client through the relay, " + p + ": small GET p50", "ms",
                                BenchResult.Better.LOWER, pct(lat.get(p), 50), latRounds.get(p))
                        .baseline("relay (the hop every guest connection takes)", pct(lat.get("relay"), 50),
                                latRounds.get("relay"), BenchResult.Ratio.FIGURE_OVER_BASELINE)
                        .goal("<= 1 ms added at p50"));
                result.add(BenchResult.Row.of("JDK client through the relay, " + p + ": " + bulkMb + " MB download",
                                "MB/s", BenchResult.Better.HIGHER, pct(mbps.get(p), 50), mbps.get(p))
                        .baseline("relay (the hop every guest connection takes)", pct(mbps.get("relay"), 50),
                                mbps.get("relay"), BenchResult.Ratio.FIGURE_OVER_BASELINE)
                        .goal(">= 0.80 of the baseline"));
            }
        }
        curlRows(dir, ca, sandboxCa, server, broker, intercepting, injecting, rounds, bulkMb, warmMb, curlOnly, result);
        result.write();
        relays.forEach(Process::destroy);
        broker.close();
        intercepting.close();
        injecting.close();
        server.stop();
        group.shutdownGracefully().sync();
        try (var walk = Files.walk(dir)) { // the CAs' keys, the brokers' sockets and logs: leave nothing behind
            walk.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
        }
    }

    /**
     * The same comparison with curl (OpenSSL) as the client and no relay at all: curl dials the server, or speaks
     * TLS straight into the broker's unix socket ({@code --unix-socket}), so the broker's own cost is all that
     * differs. 100 requests on one connection (per-request time from curl's own clock), then the bulk download.
     * Every path runs in both CPU layouts in every round, the order of layouts and of paths alternating.
     */
    static void curlRows(Path dir, SandboxCa serverCa, SandboxCa sandboxCa, Server server, Broker broker,
                         Broker intercepting, Broker injecting, int rounds, int bulkMb, int warmMb, boolean warm,
                         BenchResult result) throws Exception {
        Path bundle = dir.resolve("bundle.pem");
        Files.writeString(bundle, serverCa.certificatePem() + sandboxCa.certificatePem());
        Map<String, List<String>> how = new LinkedHashMap<>();
        how.put("direct", List.of("--connect-to", "api.test:443:127.0.0.1:" + server.port()));
        how.put("broker", List.of("--unix-socket", broker.sockets().get(Listener.TLS).toString()));
        // curl offers h2 by default, which the broker now takes: HTTP/1.1 is asked for where it is what is measured
        how.put("intercept", List.of("--http1.1", "--unix-socket", intercepting.sockets().get(Listener.TLS).toString()));
        how.put("intercept-h2", List.of("--http2", "--unix-socket", intercepting.sockets().get(Listener.TLS).toString()));
        how.put("inject", List.of("--http1.1", "--unix-socket", injecting.sockets().get(Listener.TLS).toString()));
        how.putAll(H2_ROWS);
        if (warm) { // the JDK rows' warm-up did not run: warm server and broker here, WARM_MB per path
            System.err.printf("warming up every path (%d MB each)...%n", warmMb);
            for (int w = 0; w * bulkMb < warmMb; w++) {
                for (String k : how.keySet()) {
                    List<String> big = new ArrayList<>(List.of("curl", "-s", "--cacert", bundle.toString(), "-o",
                            "/dev/null"));
                    big.addAll(how.get(k));
                    big.add("https://api.test/big?n=" + (long) bulkMb * 1_000_000);
                    run(big);
                }
            }
        }
        Map<String, Samples> at = new LinkedHashMap<>();
        for (CpuLayout l : CpuLayout.values()) {
            how.keySet().forEach(k -> at.put(l + " " + k, new Samples()));
        }
        for (int r = 0; r < rounds + 1; r++) {
            List<CpuLayout> layouts = new ArrayList<>(List.of(CpuLayout.values()));
            if (r % 2 == 1) Collections.reverse(layouts);
            for (CpuLayout l : layouts) {
                l.apply(server);
                List<String> order = new ArrayList<>(how.keySet());
                if (r % 2 == 1) Collections.reverse(order);
                for (String k : order) {
                    List<String> small = new ArrayList<>(List.of("taskset", "-c", l.ends, "curl", "-s", "--cacert",
                            bundle.toString()));
                    small.addAll(how.get(k));
                    for (int i = 0; i < 100; i++) {
                        small.addAll(List.of("-o", "/dev/null", "-w", "%{time_total}\\n", "https://api.test/small"));
                    }
                    List<Double> times = run(small).lines().map(Double::parseDouble).toList();
                    // bash's `times` gives curl's CPU time, /proc the server's and the broker JVM's
                    List<String> big = new ArrayList<>(List.of("taskset", "-c", l.ends, "bash", "-c",
                            "\"$@\" && echo && times", "-", "curl", "-s", "--cacert", bundle.toString(), "-o",
                            "/dev/null", "-w", "%{speed_download}"));
                    big.addAll(how.get(k));
                    big.add("https://api.test/big?n=" + (long) bulkMb * 1_000_000);
                    Map<Long, Long> threadsBefore = threadCpu();
                    long self = ProcessHandle.current().pid();
                    long jvmBefore = cpuNanos(self);
                    long serverBefore = server.cpuNanos();
                    List<String> out = run(big).lines().toList();
                    double serverCpu = (server.cpuNanos() - serverBefore) / 1e9;
                    double jvmCpu = (cpuNanos(self) - jvmBefore) / 1e9;
                    double loops = loopCpu(threadsBefore, threadCpu());
                    double speed = Double.parseDouble(out.get(0).strip()) / 1e6;
                    double curlCpu = Arrays.stream(out.get(2).split(" ")).mapToDouble(EgressBench::bashTime).sum();
                    // an upload of the same size (POST, Content-Length): intercepted, the broker holds it whole on
                    // disk before it sends it on (docs/network.md, "Request bodies")
                    List<String> up = new ArrayList<>(List.of("taskset", "-c", l.ends, "curl", "-s", "--cacert",
                            bundle.toString(), "-o", "/dev/null", "-w", "%{speed_upload}", "--data-binary",
                            "@" + upload(dir, bulkMb)));
                    up.addAll(how.get(k));
                    up.add("https://api.test/sink");
                    double upSpeed = Double.parseDouble(run(up).strip()) / 1e6;
                    if (r > 0) { // round 0 warms the JIT of server and broker
                        Samples s = at.get(l + " " + k);
                        List<Double> ms = times.subList(1, times.size()).stream().map(t -> t * 1000).toList();
                        s.latencyMs.addAll(ms);
                        s.roundP50s.add(pct(ms, 50));
                        s.mbps.add(speed);
                        s.upMbps.add(upSpeed);
                        s.loops.add(loops * 1000 / bulkMb);
                        s.jvmRest.add((jvmCpu - loops) * 1000 / bulkMb);
                        s.server.add(serverCpu * 1000 / bulkMb);
                        s.curl.add(curlCpu * 1000 / bulkMb);
                    }
                }
                System.err.printf("curl round %d, %s CPUs, done%n", r, l.label);
            }
        }
        CpuLayout.SHARED.apply(server);
        for (CpuLayout l : CpuLayout.values()) {
            System.out.printf("%n**curl, no relay, %s CPUs** (%s)%n%n", l.label, l.what);
            System.out.println("| path | small GET p50 (ms) | p99 (ms) | " + bulkMb + " MB download (MB/s, median) "
                    + "| CPU s per GB: broker's event loops | rest of the broker's JVM (JIT, GC) | server | curl "
                    + "| bound from CPU (MB/s) |");
            System.out.println("|---|---|---|---|---|---|---|---|---|");
            for (String k : how.keySet()) {
                Samples s = at.get(l + " " + k);
                double loops = pct(s.loops, 50), rest = pct(s.jvmRest, 50), srv = pct(s.server, 50),
                        curl = pct(s.curl, 50);
                System.out.printf("| %s | %.3f | %.3f | %.0f | %.2f | %.2f | %.2f | %.2f | %.0f |%n", k,
                        pct(s.latencyMs, 50), pct(s.latencyMs, 99), pct(s.mbps, 50), loops, rest, srv, curl,
                        l.bound(k.equals("direct") ? 0 : loops + rest, srv + curl));
            }
            Samples direct = at.get(l + " direct");
            for (String k : List.of("broker", "intercept", "intercept-h2", "inject")) {
                Samples s = at.get(l + " " + k);
                System.out.printf("%s vs direct, %s CPUs: %+.3f ms at p50 (goal <= 1 ms), throughput %.2fx (goal >= 0.80)%n",
                        k, l.label, pct(s.latencyMs, 50) - pct(direct.latencyMs, 50), pct(s.mbps, 50) / pct(direct.mbps, 50));
            }
            Samples inject = at.get(l + " inject"), pass = at.get(l + " broker");
            for (String k : List.of("intercept", "intercept-h2")) { // the issue's A/B: interception against passthrough
                Samples s = at.get(l + " " + k);
                System.out.printf("%s vs passthrough, %s CPUs: %+.3f ms at p50 (goal <= 1 ms), throughput %.2fx "
                        + "(goal >= 0.80)%n", k, l.label, pct(s.latencyMs, 50) - pct(pass.latencyMs, 50),
                        pct(s.mbps, 50) / pct(pass.mbps, 50));
                String row = "curl, " + l.label + " CPUs, " + k + " against passthrough";
                result.add(BenchResult.Row.of(row + ": small GET p50", "ms", BenchResult.Better.LOWER,
                                pct(s.latencyMs, 50), s.roundP50s)
                        .baseline("passthrough (broker)", pct(pass.latencyMs, 50), pass.roundP50s,
                                BenchResult.Ratio.FIGURE_OVER_BASELINE)
                        .goal("<= 1 ms added at p50"));
                result.add(BenchResult.Row.of(row + ": " + bulkMb + " MB download", "MB/s", BenchResult.Better.HIGHER,
                                pct(s.mbps, 50), s.mbps)
                        .baseline("passthrough (broker)", pct(pass.mbps, 50), pass.mbps,
                                BenchResult.Ratio.FIGURE_OVER_BASELINE)
                        .goal(">= 0.80 of the baseline"));
                System.out.printf("%s vs passthrough, %s CPUs: %d MB upload %.0f MB/s against %.0f, %.2fx%n", k,
                        l.label, bulkMb, pct(s.upMbps, 50), pct(pass.upMbps, 50), pct(s.upMbps, 50) / pct(pass.upMbps, 50));
                result.add(BenchResult.Row.of(row + ": " + bulkMb + " MB upload", "MB/s", BenchResult.Better.HIGHER,
                                pct(s.upMbps, 50), s.upMbps)
                        .baseline("passthrough (broker)", pct(pass.upMbps, 50), pass.upMbps,
                                BenchResult.Ratio.FIGURE_OVER_BASELINE));
            }
            Samples h2pass = at.get(l + " h2 passthrough (Netty server)"), h1up = at.get(l + " h2 guest, h1 upstream");
            for (String k : List.of("h2 guest, h2 upstream", "h2 guest, h1 upstream")) { // issue 42's A/B
                Samples s = at.get(l + " " + k);
                System.out.printf("%s vs h2 passthrough, %s CPUs: %+.3f ms at p50, download %.2fx, upload %.2fx%n", k,
                        l.label, pct(s.latencyMs, 50) - pct(h2pass.latencyMs, 50), pct(s.mbps, 50) / pct(h2pass.mbps, 50),
                        pct(s.upMbps, 50) / pct(h2pass.upMbps, 50));
                String row = "curl --http2, " + l.label + " CPUs, " + k + " against passthrough (Netty h2 server)";
                result.add(BenchResult.Row.of(row + ": small GET p50", "ms", BenchResult.Better.LOWER,
                                pct(s.latencyMs, 50), s.roundP50s)
                        .baseline("passthrough, h2 end to end", pct(h2pass.latencyMs, 50), h2pass.roundP50s,
                                BenchResult.Ratio.FIGURE_OVER_BASELINE).goal("<= 1 ms added at p50"));
                result.add(BenchResult.Row.of(row + ": " + bulkMb + " MB download", "MB/s", BenchResult.Better.HIGHER,
                                pct(s.mbps, 50), s.mbps)
                        .baseline("passthrough, h2 end to end", pct(h2pass.mbps, 50), h2pass.mbps,
                                BenchResult.Ratio.FIGURE_OVER_BASELINE).goal(">= 0.80 of the baseline"));
                result.add(BenchResult.Row.of(row + ": " + bulkMb + " MB upload", "MB/s", BenchResult.Better.HIGHER,
                                pct(s.upMbps, 50), s.upMbps)
                        .baseline("passthrough, h2 end to end", pct(h2pass.upMbps, 50), h2pass.upMbps,
                                BenchResult.Ratio.FIGURE_OVER_BASELINE));
            }
            Samples h2up = at.get(l + " h2 guest, h2 upstream");
            System.out.printf("h2 upstream vs h1 upstream (same server, h2 guest), %s CPUs: %+.3f ms at p50, download "
                    + "%.2fx, upload %.2fx%n", l.label, pct(h2up.latencyMs, 50) - pct(h1up.latencyMs, 50),
                    pct(h2up.mbps, 50) / pct(h1up.mbps, 50), pct(h2up.upMbps, 50) / pct(h1up.upMbps, 50));
            System.out.printf("inject vs passthrough, %s CPUs: %+.3f ms at p50, throughput %.2fx%n", l.label,
                    pct(inject.latencyMs, 50) - pct(pass.latencyMs, 50), pct(inject.mbps, 50) / pct(pass.mbps, 50));
            for (String k : List.of("broker", "intercept", "intercept-h2", "inject")) {
                Samples s = at.get(l + " " + k);
                String row = "curl, " + l.label + " CPUs, " + k;
                result.add(BenchResult.Row.of(row + ": small GET p50", "ms", BenchResult.Better.LOWER,
                                pct(s.latencyMs, 50), s.roundP50s)
                        .baseline("direct", pct(direct.latencyMs, 50), direct.roundP50s,
                                BenchResult.Ratio.FIGURE_OVER_BASELINE)
                        .goal("<= 1 ms added at p50"));
                result.add(BenchResult.Row.of(row + ": " + bulkMb + " MB download", "MB/s", BenchResult.Better.HIGHER,
                                pct(s.mbps, 50), s.mbps)
                        .baseline("direct", pct(direct.mbps, 50), direct.mbps, BenchResult.Ratio.FIGURE_OVER_BASELINE)
                        .goal(">= 0.80 of the baseline"));
                result.add(BenchResult.Row.of(row + ": broker's event loops, CPU s per GB", "s/GB",
                                BenchResult.Better.LOWER, pct(s.loops, 50), s.loops)
                        .noBaseline("none: the direct path has no broker"));
            }
            result.add(BenchResult.Row.of("curl, " + l.label + " CPUs, inject against passthrough: " + bulkMb
                            + " MB download", "MB/s", BenchResult.Better.HIGHER, pct(inject.mbps, 50), inject.mbps)
                    .baseline("passthrough (broker)", pct(pass.mbps, 50), pass.mbps,
                            BenchResult.Ratio.FIGURE_OVER_BASELINE));
        }
    }

    /** One path's figures in one CPU layout, over the counted rounds; CPU in seconds per GB downloaded. */
    record Samples(List<Double> latencyMs, List<Double> roundP50s, List<Double> mbps, List<Double> loops,
                   List<Double> jvmRest, List<Double> server, List<Double> curl, List<Double> upMbps) {
        Samples() {
            this(new ArrayList<>(), new ArrayList<>(), new ArrayList<>(), new ArrayList<>(), new ArrayList<>(),
                    new ArrayList<>(), new ArrayList<>(), new ArrayList<>());
        }
    }

    /**
     * Where the processes may run. {@code shared}: everything on every CPU, so the broker's work takes CPU from the
     * transfer's own two ends (on two cores a direct download already keeps both busy). {@code apart}: the two ends
     * on CPU 0, the broker's JVM on CPU 1: what the broker costs a transfer when it has a core the transfer does not
     * use, as on a machine with cores to spare; the direct path gets exactly the one core the ends get with the
     * broker in between. Applied with taskset to every thread of the server's process and of this JVM (the broker's);
     * curl is started under taskset each time.
     */
    enum CpuLayout {
        SHARED("shared", "server, curl and broker all on CPUs " + ALL_CPUS, ALL_CPUS, ALL_CPUS),
        APART("apart", "server and curl on CPU 0, the broker's JVM on CPU 1", "0", "1");

        final String label, what, ends, broker;

        CpuLayout(String label, String what, String ends, String broker) {
            this.label = label;
            this.what = what;
            this.ends = ends;
            this.broker = broker;
        }

        void apply(Server server) throws Exception {
            pin(server.pid(), ends);
            pin(ProcessHandle.current().pid(), broker);
        }

        /** The most MB/s the CPU allows, from CPU seconds per GB of the broker and of the two ends. */
        double bound(double brokerS, double endsS) {
            return this == SHARED ? CORES * 1000 / (brokerS + endsS)
                    : Math.min(1000 / endsS, brokerS == 0 ? Double.MAX_VALUE : 1000 / brokerS);
        }
    }

    static final String ALL_CPUS = "0-" + (Runtime.getRuntime().availableProcessors() - 1);

    /**
     * CPU time of every thread of a process, from /proc (the scheduler's own count, in ns; the JVM's process CPU
     * counter ticks in 10 ms, too coarse for one download). A thread that ended in between is lost: none of the
     * server's or the broker's does during a download.
     */
    static long cpuNanos(long pid) throws IOException {
        long ns = 0;
        try (var tasks = Files.list(Path.of("/proc", Long.toString(pid), "task"))) {
            for (Path t : tasks.toList()) {
                try {
                    ns += Long.parseLong(Files.readString(t.resolve("schedstat")).split(" ")[0]);
                } catch (NoSuchFileException gone) {
                    // a thread that ended between the listing and the read
                }
            }
        }
        return ns;
    }

    static void pin(long pid, String cpus) throws Exception {
        run(List.of("taskset", "-a", "-p", "-c", cpus, Long.toString(pid)));
    }

    /** CPU seconds of the broker's event loops between two {@link #threadCpu} readings. */
    static double loopCpu(Map<Long, Long> before, Map<Long, Long> after) {
        double loops = 0;
        for (var e : after.entrySet()) {
            java.lang.management.ThreadInfo info = THREADS.getThreadInfo(e.getKey());
            if (info != null && info.getThreadName().startsWith("multiThreadIoEventLoopGroup")) {
                loops += (e.getValue() - before.getOrDefault(e.getKey(), 0L)) / 1e9;
            }
        }
        return loops;
    }

    /**
     * The loopback HTTPS server, in a process of its own (this file, {@code --serve DIR}) so that its CPU can be
     * placed and counted apart from the broker's.
     */
    record Server(Process process, int port, int h2Port) {
        static Server start(Path dir) throws Exception {
            String source = System.getProperty("bench.source");
            if (source == null) throw new IllegalStateException("run with -Dbench.source=<path of EgressBench.java>");
            Process p = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                    "-XX:+UseSerialGC", "-cp", System.getProperty("java.class.path"), source, "--serve", dir.toString())
                    .redirectError(ProcessBuilder.Redirect.INHERIT).start();
            String line = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.US_ASCII)).readLine();
            if (line == null) throw new IOException("the bench's server did not start (exit " + p.waitFor() + ")");
            String[] ports = line.strip().split(" ");
            return new Server(p, Integer.parseInt(ports[0]), Integer.parseInt(ports[1]));
        }

        long pid() {
            return process.pid();
        }

        /** CPU time of every thread of the server's process, from /proc (the scheduler's own count, in ns). */
        long cpuNanos() throws IOException {
            return EgressBench.cpuNanos(pid());
        }

        void stop() throws Exception {
            process.getOutputStream().close(); // the server ends when its stdin does
            if (!process.waitFor(10, java.util.concurrent.TimeUnit.SECONDS)) process.destroyForcibly();
        }
    }

    /** The server's side: the JDK's HttpsServer with the bench CA's leaf for api.test; its port goes to stdout. */
    static void serve(Path dir) throws Exception {
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
        server.createContext("/sink", x -> { // reads an upload to its end
            byte[] buf = new byte[256 * 1024];
            long n = 0;
            for (int r; (r = x.getRequestBody().read(buf)) > 0; ) n += r;
            byte[] answer = Long.toString(n).getBytes(StandardCharsets.US_ASCII);
            x.sendResponseHeaders(200, answer.length);
            try (OutputStream o = x.getResponseBody()) { o.write(answer); }
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
        int h2Port = H2BenchServer.start(ca);
        System.out.println(server.getAddress().getPort() + " " + h2Port);
        System.out.flush();
        System.in.readAllBytes(); // until the bench closes our stdin (or dies)
        server.stop(0);
    }

    /** A file of {@code mb} MB to upload, made once. */
    static Path upload(Path dir, int mb) throws IOException {
        Path f = dir.resolve("upload-" + mb);
        if (!Files.exists(f)) {
            byte[] block = new byte[1_000_000];
            new java.util.Random(mb).nextBytes(block);
            try (OutputStream o = Files.newOutputStream(f)) {
                for (int i = 0; i < mb; i++) o.write(block);
            }
        }
        return f;
    }

    /** The curl rows of issue 42's A/B (the upstream leg in HTTP/2 or HTTP/1.1), set up in main. */
    static final Map<String, List<String>> H2_ROWS = new LinkedHashMap<>();

    /** MB each path moves before anything is counted, unless --warm-mb says otherwise. */
    static final int WARM_MB = 2000;

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
