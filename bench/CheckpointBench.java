import com.fasterxml.jackson.databind.JsonNode;
import dev.kosa8.cli.DaemonClient;
import dev.kosa8.host.HostPaths;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Random;

/** See bench/checkpoint.sh. Writes its result under bench/results/ (bench/BenchResult.java). */
public class CheckpointBench {
    static String kosa8;
    static final List<String> suspendRows = new ArrayList<>();
    static final BenchResult result = new BenchResult("checkpoint");

    public static void main(String[] args) throws Exception {
        kosa8 = args[0];
        int rounds = Integer.parseInt(args[1]);
        DaemonClient d = new DaemonClient(HostPaths.fromEnvironment());
        System.out.println("| guest | checkpoint pause p50 (first after boot) | stored p50 (RAM written while the guest "
                + "runs) | rewind p50 | of which load p50 | cold start (baseline) | cold start / rewind "
                + "| VM state stored per checkpoint (first; later, p50) | of which the workload rewrites "
                + "| workspace stored per checkpoint (first; later, p50) |");
        System.out.println("|---|---|---|---|---|---|---|---|---|---|");
        for (int i = 2; i < args.length; i++) {
            int mib = Integer.parseInt(args[i]);
            row(d, mib, rounds);
        }
        System.out.println();
        System.out.println("| guest | `stop` (pause to disk) | `start` (resume) | `start` after `stop --shutdown` (cold "
                + "boot, baseline) | cold / resume | first `create` of a shape (template made) | `create` from the "
                + "template | cold / create |");
        System.out.println("|---|---|---|---|---|---|---|---|");
        suspendRows.forEach(System.out::println);
        result.write();
    }

    static void row(DaemonClient d, int mib, int rounds) throws Exception {
        Path ws = Files.createTempDirectory("kosa8-ckpt-bench");
        Random r = new Random(1);
        byte[] small = new byte[2048];
        byte[] big = new byte[18 << 20];
        for (int i = 0; i < 9990; i++) {
            r.nextBytes(small);
            Path dir = Files.createDirectories(ws.resolve("d" + (i / 100)));
            Files.write(dir.resolve("f" + i), small);
        }
        for (int i = 0; i < 10; i++) {
            r.nextBytes(big);
            Files.write(ws.resolve("big" + i), big);
        }
        long c0 = System.nanoTime();
        String id = cli("create", "--memory", mib + "M", "--workspace", ws.toString()).strip();
        long firstCreate = (System.nanoTime() - c0) / 1_000_000;
        System.err.printf("%d MiB: sandbox %s, created in %d ms (the first of its shape: the template is made)%n",
                mib, id, firstCreate);
        // a second sandbox of the same shape restores the template
        Path ws2 = Files.createTempDirectory("kosa8-ckpt-bench");
        c0 = System.nanoTime();
        String other = cli("create", "--memory", mib + "M", "--workspace", ws2.toString()).strip();
        long fromTemplate = (System.nanoTime() - c0) / 1_000_000;
        System.err.printf("  second sandbox %s, created from the template in %d ms%n", other, fromTemplate);
        cli("rm", "-f", other);
        Files.delete(ws2);
        try {
            // a guest process that keeps dirtying half the guest's memory
            cli("exec", id, "--", "sh", "-c", "nohup python3 -c '"
                    + "b = bytearray(" + (mib / 2) + " << 20)\n"
                    + "i = 0\n"
                    + "while True:\n"
                    + "    for p in range(0, len(b), 4096): b[p] = i & 255\n"
                    + "    i += 1\n' > /dev/null 2>&1 &");
            Thread.sleep(15_000);
            List<Long> pause = new ArrayList<>();
            List<Long> saved = new ArrayList<>();
            List<Long> vmBytes = new ArrayList<>();
            List<Long> wsBytes = new ArrayList<>();
            List<String> ids = new ArrayList<>();
            for (int k = 0; k < rounds; k++) {
                for (int f = 0; f < 10; f++) {
                    r.nextBytes(small);
                    int n = r.nextInt(9990);
                    Files.write(ws.resolve("d" + (n / 100)).resolve("f" + n), small);
                }
                Thread.sleep(3000);
                // --wait: committed when it answers, so its stored time and size are known (the CLI's own wall time, which
                // returns at the instant, is bench/wall.sh's)
                JsonNode c = d.post("/v1/sandboxes/" + id + "/checkpoints?message=bench&wait=true");
                ids.add(c.path("id").asText());
                pause.add(c.path("pauseMillis").asLong());
                saved.add(c.path("savedMillis").asLong());
                vmBytes.add(c.path("vmStateBytes").asLong());
                wsBytes.add(c.path("workspaceBytesCopied").asLong());
                System.err.printf("  checkpoint %d: pause %d ms, stored after %d ms, %s%n", k + 1,
                        c.path("pauseMillis").asLong(), c.path("savedMillis").asLong(), c.path("stepMillis"));
            }
            List<Long> rewind = new ArrayList<>();
            List<Long> load = new ArrayList<>();
            for (int k = 0; k < rounds; k++) {
                Thread.sleep(3000);
                // the rewind as its caller waits for it (the folder is put back beside the load, so the steps
                // no longer add up to it)
                long t = System.nanoTime();
                JsonNode w = d.post("/v1/sandboxes/" + id + "/rewind?checkpoint=" + ids.get(r.nextInt(ids.size())));
                long wall = (System.nanoTime() - t) / 1_000_000;
                rewind.add(wall);
                load.add(w.path("rewindStepMillis").path("load").asLong());
                System.err.printf("  rewind %d: %d ms (in the daemon %d ms), %s%n", k + 1, wall,
                        w.path("rewindMillis").asLong(), w.path("rewindStepMillis"));
            }
            // the baseline, in the same run: what getting a machine back costs without a checkpoint, a cold start
            // of the same sandbox (boot, agent, workspace mount)
            // pause to disk and resume, then the cold baseline
            long t0 = System.nanoTime();
            cli("stop", id);
            long toDisk = (System.nanoTime() - t0) / 1_000_000;
            t0 = System.nanoTime();
            cli("start", id);
            long resume = (System.nanoTime() - t0) / 1_000_000;
            System.err.printf("  stop (pause to disk): %d ms, start (resume): %d ms%n", toDisk, resume);
            cli("stop", "--shutdown", id);
            t0 = System.nanoTime();
            cli("start", id);
            long cold = (System.nanoTime() - t0) / 1_000_000;
            System.err.printf("  cold start: %d ms%n", cold);
            suspendRows.add(String.format("| %d MiB | %.1f s | %.1f s | %.1f s | %.1f× | %.1f s | %.1f s | %.1f× |",
                    mib, toDisk / 1e3, resume / 1e3, cold / 1e3, (double) cold / resume, firstCreate / 1e3,
                    fromTemplate / 1e3, (double) cold / fromTemplate));
            long cp = p50(pause), st = p50(saved), rw = p50(rewind), ld = p50(load);
            record(mib, pause, saved, rewind, load, vmBytes, wsBytes, cold, toDisk, resume, firstCreate, fromTemplate);
            System.out.printf("| %d MiB | %.3f s (%.3f s) | %.2f s | %.2f s | %.2f s | %.1f s | %.1f× | %.0f MiB; %.0f MiB "
                    + "| %d MiB | %.0f MiB; %.0f KiB |%n",
                    mib, cp / 1e3, pause.getFirst() / 1e3, st / 1e3, rw / 1e3, ld / 1e3, cold / 1e3, (double) cold / rw,
                    vmBytes.getFirst() / 1048576.0, p50(vmBytes.subList(1, vmBytes.size())) / 1048576.0, mib / 2,
                    wsBytes.getFirst() / 1048576.0,
                    p50(wsBytes.subList(1, wsBytes.size())) / 1024.0);
        } finally {
            cli("rm", "-f", id);
            try (var w = Files.walk(ws)) {
                w.sorted(Collections.reverseOrder()).forEach(p -> p.toFile().delete());
            }
        }
    }

    /** The run's rows for one guest size; the baseline of each is the same sandbox's cold start in this run. */
    static void record(int mib, List<Long> pause, List<Long> saved, List<Long> rewind, List<Long> load,
                       List<Long> vmBytes, List<Long> wsBytes, long cold, long toDisk, long resume, long firstCreate,
                       long fromTemplate) {
        String size = mib + " MiB";
        String coldStart = "cold start of the same sandbox (`stop --shutdown`, `start`)";
        boolean issueSize = mib == 1024;
        var lower = BenchResult.Better.LOWER;
        var coldOverFigure = BenchResult.Ratio.BASELINE_OVER_FIGURE;
        BenchResult.Row p = BenchResult.Row.of("checkpoint pause p50, " + size, "ms", lower, p50(pause), pause)
                .noBaseline("none: the goal is absolute");
        result.add(issueSize ? p.goal("<= 350 ms") : p);
        result.add(BenchResult.Row.of("first checkpoint's pause after boot, " + size, "ms", lower, pause.getFirst(),
                List.of(pause.getFirst())).noBaseline("none"));
        result.add(BenchResult.Row.of("checkpoint stored p50 (RAM written while the guest runs), " + size, "ms", lower,
                p50(saved), saved).noBaseline("none"));
        BenchResult.Row r = BenchResult.Row.of("rewind p50 as the caller waits, " + size, "ms", lower, p50(rewind),
                rewind).baseline(coldStart, cold, List.of(cold), coldOverFigure);
        result.add(issueSize ? r.goal("<= 350 ms") : r);
        result.add(BenchResult.Row.of("rewind's load step p50, " + size, "ms", lower, p50(load), load)
                .noBaseline("none"));
        List<Long> laterVm = vmBytes.subList(1, vmBytes.size()).stream().map(b -> b >> 20).toList();
        if (!laterVm.isEmpty()) {
            result.add(BenchResult.Row.of("VM state stored per checkpoint after the first, p50, " + size, "MiB", lower,
                            p50(laterVm), laterVm)
                    .baseline("what the workload rewrites between checkpoints", mib / 2.0, List.of(),
                            BenchResult.Ratio.FIGURE_OVER_BASELINE)
                    .goal("close to what changed"));
        }
        List<Long> laterWs = wsBytes.subList(1, wsBytes.size()).stream().map(b -> b >> 10).toList();
        if (!laterWs.isEmpty()) {
            result.add(BenchResult.Row.of("workspace stored per checkpoint after the first (10 files changed), p50, "
                    + size, "KiB", lower, p50(laterWs), laterWs).noBaseline("none"));
        }
        result.add(BenchResult.Row.of("`stop` (pause to disk), " + size, "ms", lower, toDisk, List.of(toDisk))
                .noBaseline("none"));
        result.add(BenchResult.Row.of("`start` (resume), " + size, "ms", lower, resume, List.of(resume))
                .baseline(coldStart, cold, List.of(cold), coldOverFigure));
        result.add(BenchResult.Row.of("first `create` of a shape (template made), " + size, "ms", lower, firstCreate,
                List.of(firstCreate)).noBaseline("none"));
        result.add(BenchResult.Row.of("`create` from the template, " + size, "ms", lower, fromTemplate,
                List.of(fromTemplate)).baseline(coldStart, cold, List.of(cold), coldOverFigure));
    }

    static long p50(List<Long> v) {
        List<Long> s = new ArrayList<>(v);
        Collections.sort(s);
        return s.get((s.size() - 1) / 2);
    }

    static String cli(String... args) throws Exception {
        List<String> cmd = new ArrayList<>(List.of(kosa8));
        cmd.addAll(List.of(args));
        Process p = new ProcessBuilder(cmd).redirectError(ProcessBuilder.Redirect.INHERIT).start();
        String out = new String(p.getInputStream().readAllBytes());
        if (p.waitFor() != 0) {
            throw new IllegalStateException("kosa8 " + String.join(" ", args) + " failed");
        }
        return out;
    }
}
