/*
 * The Java SDK's figures for the operations bench/e2b.sh times through the E2B SDK: `exec("true")` round trips,
 * and a file written into the sandbox and read back out (SandboxFiles over the agent's file channels), on one
 * running sandbox, from one warm JVM.
 *
 *   java -cp host/target/kosa8.jar bench/SdkOps.java SANDBOX_ID RUNS ROUNDS FILE
 *
 * Prints "run SAMPLES", "up SAMPLES" and "down SAMPLES" lines (milliseconds).
 */
import dev.kosa8.client.Kosa8;
import dev.kosa8.client.Sandbox;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Locale;

public class SdkOps {
    public static void main(String[] args) throws Exception {
        Sandbox s = Kosa8.connect().sandbox(args[0]);
        int runs = Integer.parseInt(args[1]);
        int rounds = Integer.parseInt(args[2]);
        Path file = Path.of(args[3]);
        long size = Files.size(file);
        for (int i = 0; i < 5; i++) {
            s.exec("true");
        }
        StringBuilder run = new StringBuilder("run");
        for (int i = 0; i < runs; i++) {
            long t0 = System.nanoTime();
            s.exec("true");
            run.append(String.format(Locale.ROOT, " %.1f", (System.nanoTime() - t0) / 1e6));
        }
        StringBuilder up = new StringBuilder("up");
        StringBuilder down = new StringBuilder("down");
        for (int r = 0; r < rounds; r++) {
            long t0 = System.nanoTime();
            try (InputStream in = Files.newInputStream(file)) {
                s.files().write("/tmp/sdk-big", in, 0644);
            }
            long t1 = System.nanoTime();
            long[] got = {0};
            s.files().read("/tmp/sdk-big", new OutputStream() {
                @Override
                public void write(int b) {
                    got[0]++;
                }

                @Override
                public void write(byte[] b, int off, int len) {
                    got[0] += len;
                }
            });
            long t2 = System.nanoTime();
            if (got[0] != size) {
                throw new IllegalStateException("read back " + got[0] + " bytes of " + size);
            }
            up.append(String.format(Locale.ROOT, " %.0f", (t1 - t0) / 1e6));
            down.append(String.format(Locale.ROOT, " %.0f", (t2 - t1) / 1e6));
        }
        System.out.println(run);
        System.out.println(up);
        System.out.println(down);
    }
}
