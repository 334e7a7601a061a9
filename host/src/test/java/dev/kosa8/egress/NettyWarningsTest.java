package dev.kosa8.egress;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.util.ResourceLeakDetector;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.logging.Level;
import java.util.logging.Logger;
import org.junit.jupiter.api.Test;

/** The fixture the egress tests rely on to see Netty's warnings and leaks: it sees them, and lets go when closed. */
class NettyWarningsTest {
    @Test
    void aLeakedBufferAndAWarningInNettysLogAreProblemsUntilClosed() throws Exception {
        Queue<String> problems = new ConcurrentLinkedQueue<>();
        ResourceLeakDetector.Level before = ResourceLeakDetector.getLevel();
        Logger log = Logger.getLogger("io.netty.test");
        try (NettyWarnings watch = NettyWarnings.into(problems)) {
            assertThat(ResourceLeakDetector.getLevel()).isEqualTo(ResourceLeakDetector.Level.PARANOID);
            log.log(Level.INFO, "not a problem");
            log.log(Level.WARNING, "a warning", new IllegalStateException("its cause"));
            assertThat(problems).containsExactly("io.netty.test: a warning java.lang.IllegalStateException: its cause");
            problems.clear();
            leakOne();
            long deadline = System.nanoTime() + 10_000_000_000L;
            while (problems.isEmpty() && System.nanoTime() < deadline) {
                System.gc();
                // the detector reports a collected, unreleased buffer at a later allocation
                PooledByteBufAllocator.DEFAULT.directBuffer(16).release();
                Thread.sleep(20);
            }
            assertThat(problems).as("the leak, reported by Netty's detector").isNotEmpty()
                    .allMatch(p -> p.contains("LEAK"));
        }
        problems.clear();
        log.log(Level.WARNING, "after close");
        assertThat(problems).isEmpty();
        assertThat(ResourceLeakDetector.getLevel()).isEqualTo(before);
    }

    @Test
    void recordsItIsToldToIgnoreAreLeftOut() {
        Queue<String> problems = new ConcurrentLinkedQueue<>();
        try (NettyWarnings watch = NettyWarnings.into(problems, r -> r.getLoggerName().startsWith("io.netty.quiet"))) {
            Logger.getLogger("io.netty.quiet.x").warning("left out");
            Logger.getLogger("io.netty.loud").warning("kept");
        }
        assertThat(problems).containsExactly("io.netty.loud: kept");
    }

    private static void leakOne() {
        ByteBuf leaked = PooledByteBufAllocator.DEFAULT.directBuffer(64);
        leaked.writeInt(1); // never released
    }
}
