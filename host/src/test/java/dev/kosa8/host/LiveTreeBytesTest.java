package dev.kosa8.host;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class LiveTreeBytesTest {
    @TempDir
    Path dir;

    @Test
    void countsRegularFilesBeneathAndSkipsLinksAndSharedFilesWhenAsked() throws Exception {
        Files.write(dir.resolve("a"), new byte[100]);
        Files.createDirectories(dir.resolve("sub/deeper"));
        Files.write(dir.resolve("sub/deeper/b"), new byte[23]);
        Files.createSymbolicLink(dir.resolve("link"), dir.resolve("a"));
        Path shared = dir.resolve("sub/shared");
        Files.write(shared, new byte[1000]);
        Files.createLink(dir.resolve("shared-too"), shared);

        assertThat(LiveTreeBytes.of(dir)).isEqualTo(100 + 23 + 1000 + 1000);
        assertThat(LiveTreeBytes.of(dir, true)).isEqualTo(123);
        assertThat(LiveTreeBytes.of(dir.resolve("not-there"))).isZero();
    }

    /**
     * A directory whose files and subdirectories are made and removed as fast
     * as one thread can, measured over and over from another: no measure
     * fails. ({@code Files.walk} failed here within a few hundred rounds,
     * with an UncheckedIOException of a NoSuchFileException.)
     */
    @Test
    void aTreeChangingWhileItIsMeasuredNeverFailsTheMeasure() throws Exception {
        AtomicBoolean stop = new AtomicBoolean();
        AtomicReference<Throwable> churnFailed = new AtomicReference<>();
        Thread churn = Thread.ofPlatform().start(() -> {
            try {
                for (int i = 0; !stop.get(); i++) {
                    Path d = dir.resolve("d" + (i % 7));
                    Files.createDirectories(d);
                    Path f = d.resolve("f" + (i % 13) + ".tmp");
                    Files.write(f, new byte[i % 512]);
                    Files.move(f, d.resolve("f" + (i % 13)), java.nio.file.StandardCopyOption.REPLACE_EXISTING);
                    if (i % 5 == 0) {
                        TreeRemovalForTest.remove(d);
                    }
                }
            } catch (Throwable t) {
                churnFailed.set(t);
            }
        });
        try {
            long until = System.nanoTime() + 3_000_000_000L;
            int rounds = 0;
            while (System.nanoTime() < until) {
                assertThat(LiveTreeBytes.of(dir, rounds % 2 == 0)).isNotNegative();
                rounds++;
            }
            assertThat(rounds).isPositive();
        } finally {
            stop.set(true);
            churn.join();
        }
        assertThat(churnFailed.get()).isNull();
    }

    /** Removes a directory and what is in it, tolerating nothing but its absence. */
    private static final class TreeRemovalForTest {
        static void remove(Path d) throws java.io.IOException {
            try (var s = Files.list(d)) {
                for (Path p : s.toList()) {
                    Files.deleteIfExists(p);
                }
            }
            Files.deleteIfExists(d);
        }
    }
}
