import com.fasterxml.jackson.databind.JsonNode;
import dev.kosa8.cli.DaemonClient;
import dev.kosa8.host.HostPaths;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Random;

/** See bench/checkpoint.sh. */
public class CheckpointBench {
    static String kosa8;

    public static void main(String[] args) throws Exception {
        kosa8 = args[0];
        int rounds = Integer.parseInt(args[1]);
        DaemonClient d = new DaemonClient(HostPaths.fromEnvironment());
        System.out.println("| guest | checkpoint p50 (pause) | of which savevm p50 | kosa8's own share | rewind p50 "
                + "| of which loadvm p50 | kosa8's own share | VM state per checkpoint | workspace stored per checkpoint "
                + "(first; later, p50) |");
        System.out.println("|---|---|---|---|---|---|---|---|---|");
        for (int i = 2; i < args.length; i++) {
            int mib = Integer.parseInt(args[i]);
            row(d, mib, rounds);
        }
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
        String id = cli("create", "--memory", mib + "M", "--workspace", ws.toString()).strip();
        System.err.printf("%d MiB: sandbox %s%n", mib, id);
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
            List<Long> savevm = new ArrayList<>();
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
                JsonNode c = d.post("/v1/sandboxes/" + id + "/checkpoints?message=bench");
                ids.add(c.path("id").asText());
                pause.add(c.path("pauseMillis").asLong());
                savevm.add(c.path("stepMillis").path("savevm").asLong());
                vmBytes.add(c.path("vmStateBytes").asLong());
                wsBytes.add(c.path("workspaceBytesCopied").asLong());
                System.err.printf("  checkpoint %d: %s%n", k + 1, c.path("stepMillis"));
            }
            List<Long> rewind = new ArrayList<>();
            List<Long> loadvm = new ArrayList<>();
            for (int k = 0; k < rounds; k++) {
                Thread.sleep(3000);
                JsonNode w = d.post("/v1/sandboxes/" + id + "/rewind?checkpoint=" + ids.get(r.nextInt(ids.size())));
                long steps = 0;
                for (JsonNode v : w.path("rewindStepMillis")) {
                    steps += v.asLong();
                }
                rewind.add(steps);
                loadvm.add(w.path("rewindStepMillis").path("loadvm").asLong());
                System.err.printf("  rewind %d: %s%n", k + 1, w.path("rewindStepMillis"));
            }
            long cp = p50(pause), sv = p50(savevm), rw = p50(rewind), lv = p50(loadvm);
            System.out.printf("| %d MiB | %.2f s | %.2f s | %.2f s | %.2f s | %.2f s | %.2f s | %.0f MiB | %.0f MiB; %.0f KiB |%n",
                    mib, cp / 1e3, sv / 1e3, (cp - sv) / 1e3, rw / 1e3, lv / 1e3, (rw - lv) / 1e3,
                    p50(vmBytes) / 1048576.0, wsBytes.getFirst() / 1048576.0,
                    p50(wsBytes.subList(1, wsBytes.size())) / 1024.0);
        } finally {
            cli("rm", "-f", id);
            try (var w = Files.walk(ws)) {
                w.sorted(Collections.reverseOrder()).forEach(p -> p.toFile().delete());
            }
        }
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
