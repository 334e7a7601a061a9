import com.fasterxml.jackson.databind.JsonNode;
import dev.kosa8.cli.DaemonClient;
import dev.kosa8.host.HostPaths;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Random;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/** See bench/wall.sh. Writes its result under bench/results/ (bench/BenchResult.java). */
public class WallBench {
    static String kosa8;
    static String java;
    static final BenchResult result = new BenchResult("wall");
    static final BenchResult.Better LOWER = BenchResult.Better.LOWER;
    static final BenchResult.Ratio OVER = BenchResult.Ratio.FIGURE_OVER_BASELINE;

    public static void main(String[] args) throws Exception {
        kosa8 = args[0];
        java = args[1];
        int runs = Integer.parseInt(args[2]);
        int files = Integer.parseInt(args[3]);
        List<String> rows = List.of(args).subList(4, args.length);
        System.out.println("| command, wall time p50 | kosa8 | baseline (same run) | ratio | goal |");
        System.out.println("|---|---|---|---|---|");
        if (rows.isEmpty() || rows.contains("cli")) {
            cli(runs);
        }
        if (rows.isEmpty() || rows.contains("sandbox")) {
            sandbox(runs, files);
        }
        result.write();
    }

    /** `kosa8 --version` and `kosa8 ls` against a bare JVM start with the launcher's flags, interleaved. */
    static void cli(int runs) throws Exception {
        List<String> bare = List.of(java, "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-Xss512k", "-version");
        timed(List.of(kosa8, "ls")); // the daemon up and current, the launcher's jar and cache in place
        for (int i = 0; i < 2; i++) {
            timed(bare);
            timed(List.of(kosa8, "--version"));
        }
        List<Long> jvm = new ArrayList<>(), version = new ArrayList<>(), ls = new ArrayList<>();
        for (int i = 0; i < runs; i++) {
            jvm.add(timed(bare));
            version.add(timed(List.of(kosa8, "--version")));
            ls.add(timed(List.of(kosa8, "ls")));
        }
        String base = "bare JVM start, the launcher's flags (`java -version`)";
        add(BenchResult.Row.of("`kosa8 --version`", "ms", LOWER, version).baseline(base, jvm, OVER).goal("<= 150 ms"));
        add(BenchResult.Row.of("`kosa8 ls`", "ms", LOWER, ls).baseline(base, jvm, OVER).goal("<= 200 ms"));
    }

    /**
     * A 1 GiB sandbox whose folder holds {@code files} small files: `exec -- true` against the guest's own
     * `true`; `run -- true` against that exec; checkpoints against the pause the daemon reports, and when each
     * committed; rewinds against the rewind the daemon reports.
     */
    static void sandbox(int runs, int files) throws Exception {
        Path ws = Files.createTempDirectory("kosa8-wall-bench");
        Path empty = Files.createTempDirectory("kosa8-wall-bench-run");
        Random r = new Random(1);
        byte[] small = new byte[2048];
        for (int i = 0; i < files; i++) {
            r.nextBytes(small);
            Files.write(Files.createDirectories(ws.resolve("d" + (i / 100))).resolve("f" + i), small);
        }
        DaemonClient d = new DaemonClient(HostPaths.fromEnvironment());
        String id = cli(null, "create", "--memory", "1G", "--workspace", ws.toString()).strip();
        try {
            // exec
            for (int i = 0; i < 3; i++) {
                timed(List.of(kosa8, "exec", id, "--", "true"));
            }
            List<Long> exec = new ArrayList<>();
            for (int i = 0; i < runs; i++) {
                exec.add(timed(List.of(kosa8, "exec", id, "--", "true")));
            }
            int n = 20;
            String loop = "s=$(date +%s%N); for i in $(seq " + n + "); do /bin/true; done; e=$(date +%s%N); "
                    + "echo $(( (e-s)/" + n + "/1000 ))";
            List<Long> guestTrue = new ArrayList<>();
            for (int i = 0; i < 3; i++) {
                guestTrue.add(Long.parseLong(cli(null, "exec", id, "--", "bash", "-c", loop).strip()) / 1000);
            }
            add(BenchResult.Row.of("`kosa8 exec ID -- true`", "ms", LOWER, exec)
                    .baseline("one `true` started by a shell in the guest", guestTrue, OVER)
                    .goal("<= baseline + 150 ms"));

            // run, from the template of a 1 GiB sandbox with a folder (an empty one: the current directory)
            timed(List.of(kosa8, "run", "--", "true"), empty); // the template made if missing
            List<Long> run = new ArrayList<>();
            for (int i = 0; i < runs; i++) {
                run.add(timed(List.of(kosa8, "run", "--", "true"), empty));
            }
            add(BenchResult.Row.of("`kosa8 run -- true`, from the template", "ms", LOWER, run)
                    .baseline("`kosa8 exec ID -- true` in a running sandbox", exec, OVER).goal("<= 1500 ms"));

            // checkpoints, a guest process rewriting 32 MiB all along, 10 files of the folder changed between two
            cli(null, "exec", id, "--", "sh", "-c", "nohup python3 -c '"
                    + "b = bytearray(32 << 20)\ni = 0\nwhile True:\n"
                    + "    for p in range(0, len(b), 4096): b[p] = i & 255\n    i += 1\n' > /dev/null 2>&1 &");
            Thread.sleep(5000);
            List<Long> wall = new ArrayList<>(), pause = new ArrayList<>(), committed = new ArrayList<>(),
                    stored = new ArrayList<>();
            List<String> ids = new ArrayList<>();
            for (int k = 0; k < runs + 1; k++) {
                for (int f = 0; f < 10; f++) {
                    r.nextBytes(small);
                    int i = r.nextInt(files);
                    Files.write(ws.resolve("d" + (i / 100)).resolve("f" + i), small);
                }
                Thread.sleep(3000);
                long t = System.nanoTime();
                Result c = run(null, kosa8, "checkpoint", id, "-m", "bench");
                long ms = (System.nanoTime() - t) / 1_000_000;
                String cp = c.out().strip();
                JsonNode rec = awaitCommitted(d, id, cp);
                System.err.printf("  checkpoint %s: %d ms; the daemon: %s%n", cp, ms, rec);
                if (k == 0) {
                    continue; // the first after boot stores the whole of what the template did not have
                }
                ids.add(cp);
                wall.add(ms);
                pause.add(rec.path("pauseMillis").asLong());
                committed.add(rec.path("savedMillis").asLong());
                stored.add(rec.path("vmStateBytes").asLong() >> 20);
            }
            add(BenchResult.Row.of("`kosa8 checkpoint`, 1 GiB, " + files + "-file folder", "ms", LOWER, wall)
                    .baseline("the pause the daemon reports", pause, OVER).goal("<= 500 ms"));
            add(BenchResult.Row.of("checkpoint committed, from its instant", "ms", LOWER, committed)
                    .baseline("MiB of machine state it stored", stored, OVER).goal("<= 2000 ms when <= 50 MiB changed"));

            // rewinds to those checkpoints, at random
            List<Long> rewind = new ArrayList<>(), inDaemon = new ArrayList<>();
            for (int k = 0; k < runs; k++) {
                Thread.sleep(3000);
                long t = System.nanoTime();
                Result w = run(null, kosa8, "rewind", id, ids.get(r.nextInt(ids.size())));
                rewind.add((System.nanoTime() - t) / 1_000_000);
                Matcher m = Pattern.compile(" in (\\d+) ms").matcher(w.err());
                inDaemon.add(m.find() ? Long.parseLong(m.group(1)) : 0);
                System.err.printf("  rewind: %d ms, in the daemon %d ms%n", rewind.getLast(), inDaemon.getLast());
            }
            add(BenchResult.Row.of("`kosa8 rewind`, 1 GiB, " + files + "-file folder", "ms", LOWER, rewind)
                    .baseline("the rewind the daemon reports", inDaemon, OVER).goal("<= 500 ms"));
        } finally {
            cli(null, "rm", "-f", id);
            for (Path p : List.of(ws, empty)) {
                try (var w = Files.walk(p)) {
                    w.sorted(Collections.reverseOrder()).forEach(f -> f.toFile().delete());
                }
            }
        }
    }

    /** The checkpoint's record once it is committed (a minute at most). */
    static JsonNode awaitCommitted(DaemonClient d, String id, String checkpoint) throws Exception {
        long until = System.nanoTime() + Duration.ofMinutes(1).toNanos();
        while (true) {
            for (JsonNode c : d.get("/v1/sandboxes/" + id + "/checkpoints")) {
                if (c.path("id").asText().equals(checkpoint) && !c.path("state").asText("committed").equals("pending")) {
                    if (!c.path("state").asText("committed").equals("committed")) {
                        throw new IllegalStateException("checkpoint " + checkpoint + " failed: " + c);
                    }
                    return c;
                }
            }
            if (System.nanoTime() > until) {
                throw new IllegalStateException("checkpoint " + checkpoint + " still pending after a minute");
            }
            Thread.sleep(50);
        }
    }

    static void add(BenchResult.Row row) {
        result.add(row);
        System.out.printf("| %s | %.0f ms | %s: %.0f | %.2f | %s |%n", row.name(), row.figure(), row.baselineName(),
                row.baseline(), row.ratio(), row.goal());
    }

    record Result(String out, String err) {
    }

    /** Wall milliseconds of a command, which must succeed. */
    static long timed(List<String> cmd) throws Exception {
        return timed(cmd, null);
    }

    static long timed(List<String> cmd, Path dir) throws Exception {
        long t = System.nanoTime();
        run(dir, cmd.toArray(String[]::new));
        return (System.nanoTime() - t) / 1_000_000;
    }

    static String cli(Path dir, String... args) throws Exception {
        List<String> cmd = new ArrayList<>(List.of(kosa8));
        cmd.addAll(List.of(args));
        return run(dir, cmd.toArray(String[]::new)).out();
    }

    static Result run(Path dir, String... cmd) throws Exception {
        ProcessBuilder pb = new ProcessBuilder(cmd);
        if (dir != null) {
            pb.directory(dir.toFile());
        }
        Path err = Files.createTempFile("kosa8-wall", ".err");
        try {
            Process p = pb.redirectError(err.toFile()).start();
            p.getOutputStream().close();
            String out = new String(p.getInputStream().readAllBytes());
            if (p.waitFor() != 0) {
                throw new IllegalStateException(String.join(" ", cmd) + " failed: " + Files.readString(err));
            }
            return new Result(out, Files.readString(err));
        } finally {
            Files.delete(err);
        }
    }
}
