package dev.kosa8.egress;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The sandbox's DNS rate: a token bucket, and the broker's DNS listener keeping to it. */
class QueryRateTest {

    @Test
    void aBurstPassesThenQueriesPassAtTheRateAndRefusalsAreSaidOnceASecond() {
        AtomicLong now = new AtomicLong(1_000_000_000L);
        QueryRate rate = new QueryRate(now::get);
        for (int i = 0; i < QueryRate.BURST; i++) {
            assertThat(rate.take()).as("query %d of the burst", i).isTrue();
        }
        assertThat(rate.take()).isFalse();
        assertThat(rate.sayRefusal()).isTrue();
        assertThat(rate.sayRefusal()).as("within the second").isFalse();
        now.addAndGet(1_000_000_000L / QueryRate.PER_SECOND);
        assertThat(rate.take()).as("one query's worth of time later").isTrue();
        assertThat(rate.take()).isFalse();
        now.addAndGet(1_000_000_000L);
        assertThat(rate.sayRefusal()).as("a second later").isTrue();
        int passed = 0;
        for (int i = 0; i < 1000; i++) {
            if (rate.take()) {
                passed++;
            }
        }
        assertThat(passed).as("a second refills a second's worth").isEqualTo(QueryRate.PER_SECOND);
        now.addAndGet(3_600_000_000_000L);
        passed = 0;
        for (int i = 0; i < 1000; i++) {
            if (rate.take()) {
                passed++;
            }
        }
        assertThat(passed).as("an idle hour refills the burst, no more").isEqualTo(QueryRate.BURST);
    }

    @Test
    void aSandboxsBrokerAnswersAFloodOfQueriesRefusedPastItsRateAndLogsThatOnce(@TempDir Path dir) throws Exception {
        EgressService egress = new EgressService(() -> new EgressTestSettings(Map.of(), Map.of(), Optional.empty()),
                NetPresets.load(dir.resolve("no-presets.json")), () -> NetworkSettings.NONE, m -> { });
        Broker b = egress.start("sbx-dns", dir.resolve("run"), dir, new SandboxNetwork(NetMode.CLOSED,
                List.of("api.test")), Map.of());
        try {
            int answered = 0;
            int refused = 0;
            long t0 = System.nanoTime();
            for (int i = 0; i < QueryRate.BURST + 300; i++) {
                int rcode = BrokerTest.dns(b, "api.test", 1).rcode();
                if (rcode == 0) {
                    answered++;
                } else {
                    assertThat(rcode).as("REFUSED").isEqualTo(5);
                    refused++;
                }
            }
            double seconds = (System.nanoTime() - t0) / 1e9;
            assertThat(refused).as("refused past the rate").isPositive();
            assertThat(answered).as("the burst and the rate over %.1f s", seconds)
                    .isBetween(QueryRate.BURST, QueryRate.BURST + (int) Math.ceil(seconds * QueryRate.PER_SECOND) + 1);
            String log = Files.readString(dir.resolve("net.log"));
            long said = log.lines().filter(l -> l.contains("DNS queries a second: REFUSED")).count();
            assertThat(said).as("said at most once a second").isBetween(1L, (long) Math.ceil(seconds) + 1);
        } finally {
            b.close();
            egress.close();
        }
    }
}
