/*
 * Exec round trip through the daemon on a running sandbox, from a warm JVM:
 * open the exec stream, start `true`, wait for its exit. Also the agent's own
 * floor in the same run: the same number of `true` starts timed inside the
 * guest by one shell loop (the process start cost the guest itself pays).
 *
 *   java -cp host/target/kosa8.jar bench/ExecRoundTrip.java SANDBOX_ID [N]
 *
 * Prints p50/p90/p99 in milliseconds, the ratio to the in-guest baseline, and every round trip's time (the
 * samples bench/foundation.sh puts in its result).
 */
import dev.kosa8.client.DaemonConnection;
import dev.kosa8.protocol.FrameReader;
import dev.kosa8.protocol.FrameWriter;
import dev.kosa8.protocol.Message;
import java.io.ByteArrayOutputStream;
import java.util.Arrays;
import java.util.List;
import java.util.Map;

public class ExecRoundTrip {
    public static void main(String[] args) throws Exception {
        String id = args[0];
        int n = args.length > 1 ? Integer.parseInt(args[1]) : 50;
        DaemonConnection client = new DaemonConnection(DaemonConnection.defaultSocket(), "");
        for (int i = 0; i < 5; i++) {
            exec(client, id, List.of("true"));
        }
        double[] ms = new double[n];
        for (int i = 0; i < n; i++) {
            long t0 = System.nanoTime();
            exec(client, id, List.of("true"));
            ms[i] = (System.nanoTime() - t0) / 1e6;
        }
        Arrays.sort(ms);
        String loop = "s=$(date +%s%N); for i in $(seq " + n + "); do /bin/true; done; e=$(date +%s%N); echo $(( (e-s)/" + n + " ))";
        double guestSpawnMs = Long.parseLong(exec(client, id, List.of("bash", "-c", loop)).strip()) / 1e6;
        System.out.printf("exec round trip (true), %d runs: p50 %.1f ms, p90 %.1f ms, p99 %.1f ms%n",
                n, ms[n / 2], ms[(int) (n * 0.9)], ms[Math.min(n - 1, (int) (n * 0.99))]);
        System.out.printf("baseline, one `true` started by a shell inside the guest: %.1f ms%n", guestSpawnMs);
        System.out.printf("ratio p50 / baseline: %.2f%n", ms[n / 2] / guestSpawnMs);
        StringBuilder samples = new StringBuilder("samples (ms):");
        for (double m : ms) {
            samples.append(String.format(java.util.Locale.ROOT, " %.2f", m));
        }
        System.out.println(samples);
    }

    static String exec(DaemonConnection client, String id, List<String> argv) throws Exception {
        try (DaemonConnection.Stream s = client.upgrade("/v1/sandboxes/" + id + "/exec")) {
            FrameWriter w = new FrameWriter(s.out());
            FrameReader r = new FrameReader(s.in());
            w.write(new Message.Exec(1, new Message.ExecSpec(argv, Map.of(), "", "", false, 0, 0)));
            w.write(new Message.Eof(1, Message.Stream.STDIN));
            ByteArrayOutputStream out = new ByteArrayOutputStream();
            Message m;
            while ((m = r.read()) != null) {
                switch (m) {
                    case Message.Data d -> {
                        out.writeBytes(d.bytes());
                        w.write(new Message.Credit(1, d.stream(), d.bytes().length));
                    }
                    case Message.Exited x -> {
                        return out.toString();
                    }
                    case Message.Failed f -> throw new IllegalStateException(f.message());
                    default -> { }
                }
            }
            throw new IllegalStateException("stream ended early");
        }
    }
}
