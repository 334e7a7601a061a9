import dev.kosa8.checkpoint.FolderSnapshots;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;

/**
 * The workspace scan a checkpoint makes inside its pause, alone: one full capture of FOLDER, then SCANS scans of
 * it (each a stat of every entry; nothing changed, so nothing is read), each abandoned. Prints the p50 of the
 * scans after the first ten (the JIT's) and the first one. bench/folder-scan.sh runs it in a fresh JVM per run.
 */
public class FolderScanBench {
    public static void main(String[] args) throws Exception {
        Path folder = Path.of(args[0]);
        int scans = args.length > 1 ? Integer.parseInt(args[1]) : 40;
        Path store = Files.createTempDirectory("kosa8-scan-bench");
        FolderSnapshots snapshots = new FolderSnapshots(store);
        snapshots.capture(folder, "c0");
        long[] nanos = new long[scans];
        for (int i = 0; i < scans; i++) {
            long t0 = System.nanoTime();
            var pending = snapshots.scan(folder, "c" + (i + 1));
            nanos[i] = System.nanoTime() - t0;
            snapshots.abandon(pending);
        }
        try (var walk = Files.walk(store)) { // the store's copy of the folder: leave nothing behind
            walk.sorted(java.util.Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
        }
        long[] steady = Arrays.copyOfRange(nanos, Math.min(10, scans - 1), scans);
        Arrays.sort(steady);
        System.out.printf("%.1f %.1f%n", steady[steady.length / 2] / 1e6, nanos[0] / 1e6);
    }
}
