package dev.kosa8.image.debian;

import dev.kosa8.host.KosaException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.CyclicBarrier;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The last accepted Release date per mirror and suite: two builds accepting
 * Releases at once (one older, fetched a moment before a newer one appeared)
 * never leave the older date recorded over the newer one.
 */
class ReleaseDatesTest {
    static final Instant BASE = Instant.parse("2026-07-11T10:16:37Z");
    static final Source SOURCE = new Source("debian", new Mirror(URI.create("http://mirror.example/debian")),
            "bookworm", "main");

    @TempDir
    Path tmp;

    static ReleaseFile release(Instant date) {
        String d = DateTimeFormatter.RFC_1123_DATE_TIME.withLocale(Locale.ROOT).withZone(ZoneOffset.UTC).format(date);
        return ReleaseFile.parse("Codename: bookworm\nDate: " + d.replace("GMT", "UTC") + "\nSHA256:\n");
    }

    @Test
    void anOlderReleaseIsRefusedAndTheNewerDateKept() throws Exception {
        ReleaseDates dates = new ReleaseDates(tmp.resolve("releases"));
        dates.accept(SOURCE, release(BASE.plusSeconds(86_400)));
        assertThatThrownBy(() -> dates.accept(SOURCE, release(BASE))).isInstanceOf(KosaException.class)
                .hasMessageContaining("older than the one of " + BASE.plusSeconds(86_400));
        assertThat(Files.readString(dates.file(SOURCE))).startsWith("Date: " + BASE.plusSeconds(86_400) + "\n");
    }

    @Test
    void concurrentAcceptsNeverRecordAnOlderDateOverANewerOne() throws Exception {
        int threads = 8;
        for (int round = 0; round < 30; round++) {
            Path dir = tmp.resolve("round-" + round);
            // each thread its own ReleaseDates, as two builds have
            CyclicBarrier start = new CyclicBarrier(threads);
            List<Thread> all = new ArrayList<>();
            for (int i = 0; i < threads; i++) {
                ReleaseFile r = release(BASE.plusSeconds(3600L * i));
                ReleaseDates dates = new ReleaseDates(dir);
                all.add(Thread.ofPlatform().start(() -> {
                    try {
                        start.await();
                        dates.accept(SOURCE, r);
                    } catch (KosaException refusedAsOlder) {
                        // a newer one got there first: refusing this one is right
                    } catch (Exception e) {
                        throw new IllegalStateException(e);
                    }
                }));
            }
            for (Thread t : all) {
                t.join();
            }
            Instant newest = BASE.plusSeconds(3600L * (threads - 1));
            assertThat(Files.readString(new ReleaseDates(dir).file(SOURCE))).as("round " + round)
                    .startsWith("Date: " + newest + "\n");
        }
    }
}
