package dev.kosa8.daemon;

import dev.kosa8.checkpoint.Undo;
import java.io.IOException;
import java.nio.file.Path;
import java.util.function.Consumer;

/**
 * The copy of a sandbox's folder as it starts, which {@code kosa8 diff}
 * compares with by default. Taken before the guest can write to the folder, in
 * the checkpoints' content-addressed store, so the first checkpoint stores
 * only what changed since. A convenience, never a reason to refuse a sandbox:
 * a folder that cannot be read whole (a file the user cannot read) is logged
 * and `kosa8 diff` then asks for a checkpoint instead.
 */
final class Baseline {
    private Baseline() {
    }

    static void capture(Undo undo, Path folder, String id, Consumer<String> log) {
        long t0 = System.nanoTime();
        try {
            undo.captureStart(folder);
            log.accept("sandbox " + id + ": kept its folder as it starts, for kosa8 diff ("
                    + (System.nanoTime() - t0) / 1_000_000 + " ms)");
        } catch (IOException | RuntimeException e) {
            log.accept("sandbox " + id + ": cannot keep its folder as it starts (" + e.getMessage()
                    + "); kosa8 diff will need a checkpoint to compare with");
        }
    }
}
