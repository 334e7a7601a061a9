package dev.kosa8.checkpoint;

import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * A snapshot against a folder as it is now ({@code kosa8 diff}, {@code kosa8 adopt}): the folder scanned as a
 * capture would scan it (the copies the scan makes of changed files taken back after), again if a file changed
 * while it was read, three times at most; each path that differs ({@link FolderDiff}) made into what the caller
 * wants. The caller holds the store's lock (its methods are synchronized) and the sandbox's.
 */
final class SnapshotComparison {
    /** What one path that differs becomes. */
    interface PairTo<T> {
        T of(FolderDiff.Pair p) throws IOException;
    }

    private SnapshotComparison() {
    }

    static <T> List<T> compare(FolderSnapshots store, String id, Path folder, PairTo<T> to) throws IOException {
        Manifest before = store.load(id);
        for (int attempt = 1; ; attempt++) {
            FolderSnapshots.Pending now;
            try {
                now = store.scan(folder, "diff-" + Long.toHexString(System.nanoTime()));
            } catch (IOException e) {
                if (attempt < 3) {
                    continue; // a file changed or went while it was read
                }
                throw new IOException("the folder kept changing while it was read (" + e.getMessage() + ")", e);
            }
            try {
                List<T> out = new ArrayList<>();
                for (FolderDiff.Pair p : FolderDiff.compare(before, now.manifest())) {
                    out.add(to.of(p));
                }
                return out;
            } finally {
                store.abandon(now);
            }
        }
    }
}
