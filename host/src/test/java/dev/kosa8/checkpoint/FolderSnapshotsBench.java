package dev.kosa8.checkpoint;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Random;

/**
 * Measures capture and restore on a workspace of 10,000 small files and a few
 * large ones, about 200 MB in all. Not a test (nothing is asserted on time);
 * run by hand, figures go to docs/checkpoints.md:
 *
 * <pre>
 * java --enable-native-access=ALL-UNNAMED -cp host/target/classes:host/target/test-classes:JACKSON_JARS \
 *     dev.kosa8.checkpoint.FolderSnapshotsBench [DIR]
 * </pre>
 */
public final class FolderSnapshotsBench {
    private FolderSnapshotsBench() {
    }

    public static void main(String[] args) throws Exception {
        Path base = Files.createTempDirectory(args.length > 0 ? Path.of(args[0]) : Path.of("/tmp"), "kosa8-bench");
        try {
            run(base);
        } finally {
            FolderSnapshotsTest.deleteTree(base);
        }
    }

    private static void run(Path base) throws Exception {
        Path folder = Files.createDirectory(base.resolve("ws"));
        Random random = new Random(42);
        long total = 0;
        for (int i = 0; i < 10_000; i++) {
            Path dir = folder.resolve("src/d" + i / 100);
            Files.createDirectories(dir);
            byte[] b = new byte[256 + random.nextInt(8 * 1024)];
            random.nextBytes(b);
            Files.write(dir.resolve("f" + i + ".txt"), b);
            total += b.length;
        }
        Files.createDirectories(folder.resolve("data"));
        for (int i = 0; i < 5; i++) {
            byte[] b = new byte[31 * 1024 * 1024];
            random.nextBytes(b);
            Files.write(folder.resolve("data/big" + i + ".bin"), b);
            total += b.length;
        }
        System.out.printf("folder: 10,005 files, %.1f MB%n", total / 1e6);
        // Let the files settle beyond the racy margin, as a workspace's files have by the time of a checkpoint.
        Thread.sleep(KnownContent.RACY_MARGIN.toMillis() + 500);

        FolderSnapshots snapshots = new FolderSnapshots(base.resolve("store"));
        print("first capture", snapshots.capture(folder, "c1"));
        for (int i = 0; i < 3; i++) {
            print("nothing changed", snapshots.capture(folder, "c2-" + i));
        }
        for (int i = 0; i < 10; i++) {
            Files.writeString(folder.resolve("src/d" + i + "/f" + i * 100 + ".txt"), "changed " + i);
        }
        print("10 files changed just now", snapshots.capture(folder, "c3-racy"));
        Thread.sleep(KnownContent.RACY_MARGIN.toMillis() + 500);
        print("same, 2.5 s later", snapshots.capture(folder, "c3"));
        System.out.printf("store: %.1f MB on disk; only in c3: %.1f KB%n", snapshots.bytesOnDisk() / 1e6,
                snapshots.bytesOnlyIn("c3") / 1e3);

        for (int i = 0; i < 5; i++) {
            Files.writeString(folder.resolve("src/d" + (50 + i) + "/f" + (5000 + i * 100) + ".txt"), "edited");
            Files.delete(folder.resolve("src/d" + (60 + i) + "/f" + (6000 + i * 100) + ".txt"));
        }
        print("5 changed, 5 deleted", snapshots.restore("c3", folder));
        print("again, nothing changed", snapshots.restore("c3", folder));
        print("back to c1 (10 differ)", snapshots.restore("c1", folder));
        FolderSnapshotsTest.deleteTree(folder);
        Files.createDirectory(folder);
        print("into an empty folder", snapshots.restore("c1", folder));

        Manifest m = snapshots.load("c1");
        int runs = 20;
        byte[] json = ManifestCodec.write(m);
        long t0 = System.nanoTime();
        for (int i = 0; i < runs; i++) {
            json = ManifestCodec.write(m);
        }
        long t1 = System.nanoTime();
        for (int i = 0; i < runs; i++) {
            ManifestCodec.read(json);
        }
        long t2 = System.nanoTime();
        System.out.printf("manifest: %d entries, %.1f MB of JSON; write %.1f ms, read %.1f ms (warm, mean of %d)%n",
                m.entries().size(), json.length / 1e6, (t1 - t0) / 1e6 / runs, (t2 - t1) / 1e6 / runs, runs);
    }

    private static void print(String what, Capture c) {
        System.out.printf("capture %s, %s: %d entries, read %d files (%.1f MB) of %.1f MB, %s%n", c.id(), what,
                c.entries(), c.filesCopied(), c.bytesCopied() / 1e6, c.bytesTotal() / 1e6, ms(c.took()));
    }

    private static void print(String what, Restore r) {
        System.out.printf("restore, %s: wrote %d, removed %d, %s%n", what, r.filesWritten(), r.entriesRemoved(),
                ms(r.took()));
    }

    private static String ms(Duration d) {
        return d.toMillis() + " ms";
    }
}
