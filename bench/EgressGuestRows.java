import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;

/**
 * The egress benchmark's rows through a real guest (issue 34): what a guest's connection to the broker costs on
 * the whole path, from a program in the guest to a loopback server on the host and back, driven through the CLI
 * only, so that one bench program measures any build (bench/ab.sh egress A B ... --guest): the path of a build
 * before issue 34 (QEMU's slirp and a socat per connection) and after it (the agent's network link) side by side.
 *
 * <ul>
 *   <li>connection set-up: a Python program in the guest opens a connection to 10.0.2.100:80, sends a small GET
 *       (Host: bench.test, Connection: close) and reads the answer to its end; the time of that, per connection,
 *       one connection after another. Connect alone would flatter the link (the agent accepts inside the guest),
 *       so the row counts until the answer is read: the first moment a program can use a connection;</li>
 *   <li>download: curl in the guest fetches BULK_MB from the server over plain HTTP through the broker's
 *       transparent port 80 (no TLS, whose cost in the guest would hide the path's own), MB/s: once as the fresh
 *       sandbox's first download (its own row: the sandbox's agent and a daemon just started, both cold), then in
 *       each round, after WARM_MB more (default 300: the agent's and the daemon's code on the path compiled, as in a
 *       sandbox an agent has used for a while; the link's path is Java at both ends, slirp's is C, so a short
 *       warm-up measures the JIT rather than the path), and last as the first download of FRESH (default 3) more
 *       new sandboxes, one after another, from the daemon that has now moved those bytes: a user's next sandbox
 *       from a daemon that has been running.</li>
 * </ul>
 * The daemon of the kosa8 home in the environment (KOSA8_HOME, else the XDG default) is stopped first and started
 * again with the egress test settings that map bench.test to the server ({@code KOSA8_EGRESS_TEST_CONFIG}); its
 * sandboxes keep running. One sandbox is made (2 vCPUs, 1 GiB, no workspace) and removed at the end.
 */
final class EgressGuestRows {
    private EgressGuestRows() {
    }

    /**
     * Launched by bench/egress.sh for {@code --guest} on its own (not through EgressBench, which names the host's
     * classes), so that it compiles against the jar of any build, one from before issue 34 included.
     */
    public static void main(String[] args) throws Exception {
        int rounds = 5, requests = 2000, bulkMb = 100, warmMb = 300, fresh = 3;
        for (int i = 0; i < args.length; i++) {
            switch (args[i]) {
                case "--rounds" -> rounds = Integer.parseInt(args[++i]);
                case "--requests" -> requests = Integer.parseInt(args[++i]);
                case "--bulk-mb" -> bulkMb = Integer.parseInt(args[++i]);
                case "--guest", "--curl-only" -> { } // the guest rows are all this measures
                case "--warm-mb" -> warmMb = Integer.parseInt(args[++i]);
                case "--fresh" -> fresh = Integer.parseInt(args[++i]);
                default -> throw new IllegalArgumentException("unknown option " + args[i]);
            }
        }
        BenchResult result = new BenchResult("egress");
        run(result, rounds, requests, bulkMb, warmMb, fresh);
        result.write();
    }

    /**
     * Downloads {@code mb} MB from the bench's own upstream on the host before any sandbox does: the server runs in
     * this JVM, which has just started, and a cold upstream on the guest's 2 cores would count in the fresh
     * sandbox's first download on either path (an agent's upstream is a warm server elsewhere).
     */
    static void warmUpstream(HttpServer server, int mb) throws IOException {
        byte[] sink = new byte[256 * 1024];
        for (int moved = 0; moved < Math.max(mb, 100); moved += 50) {
            var c = (java.net.HttpURLConnection) java.net.URI.create("http://127.0.0.1:" + server.getAddress().getPort()
                    + "/bulk?bytes=50000000").toURL().openConnection(java.net.Proxy.NO_PROXY);
            try (var in = c.getInputStream()) {
                while (in.read(sink) >= 0) {
                    // discarded
                }
            }
        }
    }

    static void run(BenchResult result, int rounds, int connections, int bulkMb, int warmMb, int fresh)
            throws Exception {
        String build = System.getenv().getOrDefault("KOSA8_BENCH_BUILD", ".");
        Path kosa8 = Path.of(build, "kosa8").toAbsolutePath();
        HttpServer server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 64);
        server.setExecutor(Executors.newVirtualThreadPerTaskExecutor());
        server.createContext("/small", x -> {
            byte[] ok = "ok".getBytes(StandardCharsets.US_ASCII);
            x.sendResponseHeaders(200, ok.length);
            try (OutputStream out = x.getResponseBody()) {
                out.write(ok);
            }
        });
        server.createContext("/bulk", x -> {
            long n = Long.parseLong(x.getRequestURI().getQuery().substring("bytes=".length()));
            x.sendResponseHeaders(200, n);
            byte[] chunk = new byte[256 * 1024];
            try (OutputStream out = x.getResponseBody()) {
                for (long left = n; left > 0; left -= chunk.length) {
                    out.write(chunk, 0, (int) Math.min(left, chunk.length));
                }
            }
        });
        server.start();
        warmUpstream(server, warmMb);
        Path config = Files.createTempFile("kosa8-egress-bench", ".json");
        Files.writeString(config, "{\"loopback\": {\"bench.test:80\": " + server.getAddress().getPort() + "}}\n");
        Cli cli = new Cli(kosa8, config);
        String id = null;
        try {
            cli.run(Duration.ofMinutes(1), "daemon", "stop"); // the next one reads the test settings
            id = cli.ok(Duration.ofMinutes(20), "create", "--cpus", "2", "--memory", "1G", "--workspace", "none",
                    "--allow", "bench.test").strip();
            System.err.println("guest rows: sandbox " + id);
            double first = download(cli, id, bulkMb);
            System.err.printf("guest: the fresh sandbox's first download %.1f MB/s%n", first);
            // warm-up: the daemon's and the guest's paths compiled before anything more counts
            setUp(cli, id, Math.max(20, connections / 4));
            for (int moved = 0; moved < warmMb; moved += bulkMb) {
                download(cli, id, Math.min(bulkMb, warmMb - moved));
            }
            List<Double> all = new ArrayList<>();
            List<Double> p50s = new ArrayList<>();
            List<Double> mbps = new ArrayList<>();
            for (int r = 0; r < rounds; r++) {
                List<Double> times = setUp(cli, id, connections);
                all.addAll(times);
                p50s.add(percentile(times, 50));
                mbps.add(download(cli, id, bulkMb));
                System.err.printf("guest round %d: set-up p50 %.2f ms, download %.1f MB/s%n", r + 1,
                        p50s.getLast(), mbps.getLast());
            }
            List<Double> warmDaemon = new ArrayList<>();
            for (int f = 0; f < fresh; f++) {
                warmDaemon.add(freshFirstDownload(cli, bulkMb));
                System.err.printf("guest: fresh sandbox %d of %d, the daemon warm: first download %.1f MB/s%n", f + 1,
                        fresh, warmDaemon.getLast());
            }
            String why = "one path per build: bench/ab.sh egress BASE NEW R N MB --guest puts the two side by side";
            System.out.println();
            System.out.println("| through a guest | p50 | p90 | samples |");
            System.out.println("|---|---|---|---|");
            System.out.printf("| connection set-up and a small GET (ms) | %.2f | %.2f | %d connections |%n",
                    percentile(all, 50), percentile(all, 90), all.size());
            System.out.printf("| %d MB download (MB/s) | %.1f | | %d rounds, after %d MB |%n", bulkMb,
                    BenchResult.median(mbps), mbps.size(), warmMb);
            System.out.printf("| the fresh sandbox's first %d MB download, the daemon just started (MB/s) | %.1f "
                    + "| | 1 |%n", bulkMb, first);
            if (!warmDaemon.isEmpty()) {
                System.out.printf("| a fresh sandbox's first %d MB download, the daemon warm (MB/s) | %.1f | | %d |%n",
                        bulkMb, BenchResult.median(warmDaemon), warmDaemon.size());
            }
            result.add(BenchResult.Row.of("guest: connection set-up and a small GET, p50", "ms",
                    BenchResult.Better.LOWER, percentile(all, 50), p50s).noBaseline(why).goal("no worse than slirp"));
            result.add(BenchResult.Row.of("guest: connection set-up and a small GET, p90", "ms",
                    BenchResult.Better.LOWER, percentile(all, 90), p50s).noBaseline(why).goal("no worse than slirp"));
            result.add(BenchResult.Row.of("guest: " + bulkMb + " MB download, plain HTTP through port 80", "MB/s",
                    BenchResult.Better.HIGHER, mbps).noBaseline(why).goal("no worse than slirp"));
            result.add(BenchResult.Row.of("guest: a fresh sandbox's first " + bulkMb + " MB download", "MB/s",
                    BenchResult.Better.HIGHER, List.of(first)).noBaseline(why).goal("no worse than slirp"));
            if (!warmDaemon.isEmpty()) {
                result.add(BenchResult.Row.of("guest: a fresh sandbox's first " + bulkMb + " MB download, the daemon "
                        + "warm", "MB/s", BenchResult.Better.HIGHER, warmDaemon).noBaseline(why)
                        .goal("no worse than slirp"));
            }
        } finally {
            if (id != null) {
                cli.run(Duration.ofMinutes(2), "rm", "-f", id);
            }
            server.stop(0);
            Files.deleteIfExists(config);
        }
    }

    /**
     * A new sandbox's first download once the daemon has moved the rounds' bytes: what a user's next sandbox gets
     * from a daemon that has been running (the first row's daemon had just started).
     */
    private static double freshFirstDownload(Cli cli, int mb) throws Exception {
        String id = cli.ok(Duration.ofMinutes(5), "create", "--cpus", "2", "--memory", "1G", "--workspace", "none",
                "--allow", "bench.test").strip();
        try {
            return download(cli, id, mb);
        } finally {
            cli.run(Duration.ofMinutes(2), "rm", "-f", id);
        }
    }

    /** Each connection's set-up and small GET, in ms, one after another, timed in the guest. */
    private static List<Double> setUp(Cli cli, String id, int n) throws Exception {
        String out = cli.ok(Duration.ofMinutes(20), "exec", id, "--", "python3", "-c", """
                import socket, sys, time
                req = b"GET /small HTTP/1.1\\r\\nHost: bench.test\\r\\nConnection: close\\r\\n\\r\\n"
                out = []
                for i in range(%d):
                    t0 = time.perf_counter()
                    s = socket.create_connection(("10.0.2.100", 80), timeout=60)
                    s.sendall(req)
                    got = b""
                    while True:
                        c = s.recv(65536)
                        if not c: break
                        got += c
                    s.close()
                    if not got.startswith(b"HTTP/1.1 200") or not got.endswith(b"ok"):
                        sys.exit("unexpected answer: %%r" %% got[:200])
                    out.append((time.perf_counter() - t0) * 1000)
                print(" ".join("%%.3f" %% x for x in out))
                """.formatted(n));
        return Arrays.stream(out.strip().split(" ")).map(Double::parseDouble).toList();
    }

    /** One download of {@code mb} MB with curl in the guest, in MB/s as curl measured it. */
    private static double download(Cli cli, String id, int mb) throws Exception {
        String out = cli.ok(Duration.ofMinutes(30), "exec", id, "--", "curl", "-sS", "--noproxy", "*", "-o",
                "/dev/null", "-w", "%{speed_download} %{size_download}",
                "http://bench.test/bulk?bytes=" + (long) mb * 1_000_000);
        String[] f = out.strip().split(" ");
        if (Long.parseLong(f[1]) != (long) mb * 1_000_000) {
            throw new IllegalStateException("the download was cut short: " + out);
        }
        return Double.parseDouble(f[0]) / 1e6;
    }

    static double percentile(List<Double> values, int p) {
        List<Double> s = new ArrayList<>(values);
        Collections.sort(s);
        return s.get(Math.min(s.size() - 1, (int) Math.ceil(p / 100.0 * s.size()) - 1));
    }

    /** The CLI of the build measured, with the test settings in its environment. */
    record Cli(Path kosa8, Path config) {
        String ok(Duration timeout, String... args) throws Exception {
            Result r = run(timeout, args);
            if (r.exit() != 0) {
                throw new IllegalStateException("kosa8 " + String.join(" ", args) + " failed (" + r.exit() + "): "
                        + r.err());
            }
            return r.out();
        }

        Result run(Duration timeout, String... args) throws Exception {
            List<String> argv = new ArrayList<>(List.of(kosa8.toString()));
            argv.addAll(List.of(args));
            ProcessBuilder pb = new ProcessBuilder(argv);
            pb.environment().put("KOSA8_EGRESS_TEST_CONFIG", config.toString());
            Path err = Files.createTempFile("kosa8-bench-cli", ".err");
            pb.redirectError(err.toFile());
            Process p = pb.start();
            p.getOutputStream().close();
            byte[] out = p.getInputStream().readAllBytes();
            if (!p.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
                p.destroyForcibly();
                throw new IllegalStateException("kosa8 " + String.join(" ", args) + " took over " + timeout);
            }
            String e = Files.readString(err);
            Files.deleteIfExists(err);
            return new Result(p.exitValue(), new String(out, StandardCharsets.UTF_8), e);
        }
    }

    record Result(int exit, String out, String err) {
    }
}
