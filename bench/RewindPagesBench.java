import com.fasterxml.jackson.databind.JsonNode;
import dev.kosa8.checkpoint.ram.RamStore;
import dev.kosa8.cli.DaemonClient;
import dev.kosa8.host.HostPaths;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;

/**
 * See bench/rewind-pages.sh. Shares CheckpointBench's helpers (a source file beside it, found by the launcher) and
 * writes its result under bench/results/ (bench/BenchResult.java).
 */
public class RewindPagesBench {
    public static void main(String[] args) throws Exception {
        CheckpointBench.kosa8 = args[0]; // its cli() runs that launcher
        int rounds = Integer.parseInt(args[1]);
        HostPaths paths = HostPaths.fromEnvironment();
        BenchResult result = new BenchResult("rewind-pages");
        DaemonClient d = new DaemonClient(paths);
        System.out.println("| guest | rewind from pages (lazily), load p50 | from the whole stream file (whole), load p50"
                + " | pages / whole | rewind from pages, p50 | from the whole stream, p50 | pages / whole |");
        System.out.println("|---|---|---|---|---|---|---|");
        for (int i = 2; i < args.length; i++) {
            int mib = Integer.parseInt(args[i]);
            String id = CheckpointBench.cli("create", "--memory", mib + "M", "--workspace", "none").strip();
            try {
                CheckpointBench.cli("exec", id, "--", "sh", "-c", "nohup python3 -c '"
                        + "b = bytearray(" + (mib / 2) + " << 20)\n"
                        + "i = 0\n"
                        + "while True:\n"
                        + "    for p in range(0, len(b), 4096): b[p] = i & 255\n"
                        + "    i += 1\n' > /dev/null 2>&1 &");
                Thread.sleep(15_000);
                String c = d.post("/v1/sandboxes/" + id + "/checkpoints?message=ab&wait=true").path("id").asText(); // its files are read below
                Path dir = paths.data().resolve("sandboxes").resolve(id).resolve("checkpoints");
                Path whole = dir.resolve(c + ".vmstate.whole");
                try (FileChannel out = FileChannel.open(whole, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE)) {
                    new RamStore(dir).open(c).writeTo(out);
                }
                List<Long> pagesLoad = new ArrayList<>(), wholeLoad = new ArrayList<>();
                List<Long> pagesAll = new ArrayList<>(), wholeAll = new ArrayList<>();
                // in pairs, AABBAABB..., the first of each pair not counted: a rewind after one of the other kind
                // pays for what that one left (after a lazy load, RAM in small pages, so a whole load right after
                // it waited for the kernel to make huge pages again: 2.7 s against 0.46 s)
                for (int k = 0; k < 4 * rounds; k++) {
                    boolean fromPages = k / 2 % 2 == 0;
                    boolean counted = k % 2 == 1;
                    if (!fromPages) {
                        Files.move(dir.resolve(c + ".ram"), dir.resolve(c + ".ram.aside"));
                        Files.move(whole, dir.resolve(c + ".vmstate"));
                    }
                    Thread.sleep(3000);
                    JsonNode w;
                    long t = System.nanoTime();
                    try {
                        w = d.post("/v1/sandboxes/" + id + "/rewind?checkpoint=" + c);
                        t = System.nanoTime() - t;
                    } finally {
                        if (!fromPages) {
                            Files.move(dir.resolve(c + ".vmstate"), whole);
                            Files.move(dir.resolve(c + ".ram.aside"), dir.resolve(c + ".ram"));
                        }
                    }
                    long all = t / 1_000_000; // the rewind as the caller waits for it
                    long load = w.path("rewindStepMillis").path("load").asLong();
                    if (counted) {
                        (fromPages ? pagesLoad : wholeLoad).add(load);
                        (fromPages ? pagesAll : wholeAll).add(all);
                    }
                    System.err.printf("  %d MiB, from %s%s: %d ms (in the daemon %d ms), %s%n", mib,
                            fromPages ? "pages" : "the whole stream", counted ? "" : " (not counted)", all, w.path("rewindMillis").asLong(),
                            w.path("rewindStepMillis"));
                }
                Files.delete(whole);
                long pl = CheckpointBench.p50(pagesLoad), wl = CheckpointBench.p50(wholeLoad);
                long pa = CheckpointBench.p50(pagesAll), wa = CheckpointBench.p50(wholeAll);
                System.out.printf("| %d MiB | %.2f s | %.2f s | %.2f | %.2f s | %.2f s | %.2f |%n", mib, pl / 1e3,
                        wl / 1e3, (double) pl / wl, pa / 1e3, wa / 1e3, (double) pa / wa);
                String wholeFile = "the same checkpoint loaded whole from one stream file";
                result.add(BenchResult.Row.of("rewind's load p50 from pages (lazily), " + mib + " MiB", "ms",
                        BenchResult.Better.LOWER, pl, pagesLoad).baseline(wholeFile, wl, wholeLoad,
                        BenchResult.Ratio.FIGURE_OVER_BASELINE));
                result.add(BenchResult.Row.of("rewind p50 from pages (lazily), as the caller waits, " + mib + " MiB",
                        "ms", BenchResult.Better.LOWER, pa, pagesAll).baseline(wholeFile, wa, wholeAll,
                        BenchResult.Ratio.FIGURE_OVER_BASELINE));
            } finally {
                CheckpointBench.cli("rm", "-f", id);
            }
        }
        result.write();
    }
}
