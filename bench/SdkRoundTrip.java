/*
 * Exec round trip through the Java SDK (`Sandbox.exec("true")`) against the thinnest client the daemon has: the
 * same exec as raw agent-protocol frames on the upgraded socket (ExecRoundTrip's loop), alternated round by round
 * in one warm JVM so both see the same machine.
 *
 *   java -cp host/target/kosa8.jar bench/SdkRoundTrip.java SANDBOX_ID [N]
 *
 * Prints "sdk SAMPLES" and "raw SAMPLES" lines (milliseconds) for bench/sdk.sh.
 */
import dev.kosa8.client.DaemonConnection;
import dev.kosa8.client.Kosa8;
import dev.kosa8.client.Sandbox;
import dev.kosa8.protocol.FrameReader;
import dev.kosa8.protocol.FrameWriter;
import dev.kosa8.protocol.Message;
import java.util.List;
import java.util.Locale;
import java.util.Map;

public class SdkRoundTrip {
    public static void main(String[] args) throws Exception {
        String id = args[0];
        int n = args.length > 1 ? Integer.parseInt(args[1]) : 50;
        Kosa8 kosa8 = Kosa8.connect();
        Sandbox s = kosa8.sandbox(id);
        DaemonConnection raw = kosa8.connection();
        for (int i = 0; i < 10; i++) {
            s.exec("true");
            raw(raw, id);
        }
        StringBuilder sdk = new StringBuilder("sdk");
        StringBuilder base = new StringBuilder("raw");
        for (int i = 0; i < n; i++) {
            long t0 = System.nanoTime();
            if (s.exec("true").exitCode() != 0) {
                throw new IllegalStateException("true failed");
            }
            long t1 = System.nanoTime();
            raw(raw, id);
            long t2 = System.nanoTime();
            sdk.append(String.format(Locale.ROOT, " %.2f", (t1 - t0) / 1e6));
            base.append(String.format(Locale.ROOT, " %.2f", (t2 - t1) / 1e6));
        }
        System.out.println(sdk);
        System.out.println(base);
    }

    static void raw(DaemonConnection client, String id) throws Exception {
        try (DaemonConnection.Stream st = client.upgrade("/v1/sandboxes/" + id + "/exec")) {
            FrameWriter w = new FrameWriter(st.out());
            FrameReader r = new FrameReader(st.in());
            w.write(new Message.Exec(1, new Message.ExecSpec(List.of("true"), Map.of(), "", "", false, 0, 0)));
            w.write(new Message.Eof(1, Message.Stream.STDIN));
            Message m;
            while ((m = r.read()) != null) {
                if (m instanceof Message.Exited) {
                    return;
                }
                if (m instanceof Message.Failed f) {
                    throw new IllegalStateException(f.message());
                }
            }
            throw new IllegalStateException("stream ended early");
        }
    }
}
