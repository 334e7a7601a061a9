package dev.kosa8.daemon;

import java.lang.management.GarbageCollectorMXBean;
import java.lang.management.ManagementFactory;
import java.lang.management.MemoryUsage;
import java.time.Duration;
import java.util.function.Consumer;

/**
 * Gives the heap a busy spell grew back to the system once the daemon is
 * quiet. The daemon runs on the serial collector, which shrinks the heap
 * only after a full collection ({@code MaxHeapFreeRatio}) and never below
 * {@code -Xms} ({@link dev.kosa8.cli.DaemonLauncher} starts it at 32 MiB
 * instead of the JVM's default, 1/64 of the machine's memory, and turns off
 * {@code ShrinkHeapInSteps}, which would shrink by nothing at the first
 * collection, 10 % at the second, 40 % at the third); a daemon that goes
 * quiet after a burst of sandboxes makes no collection at all, and kept the
 * grown heap for good (a soak's daemon: 16 MiB of objects in use, 385 MiB
 * resident, with no sandbox left; docs/limits.md, "The daemon's own
 * memory").
 *
 * <p>Every {@link #PERIOD} it looks: when no collection ran in the whole
 * period (the daemon allocated less than its young generation: quiet) and
 * the heap holds more than {@link #SLACK} and more than three times its use
 * free, it asks for one full collection, which shrinks the heap. What that
 * leaves free is at most {@code 0.7/0.3} of what is in use (the JVM's
 * {@code MaxHeapFreeRatio} of 70), under the three times, so a quiet
 * daemon is trimmed once per burst, not every period. The collection stops
 * the daemon for as long as it takes to copy what is in use (tens of
 * milliseconds at the daemon's 10-60 MiB) at a moment nothing is asking.
 */
final class HeapTrim {
    static final Duration PERIOD = Duration.ofSeconds(60);
    static final long SLACK = 64L << 20;

    /** What the heap and its collectors said at one look. */
    record Look(long collections, long committed, long used) {
        static Look now() {
            long n = 0;
            for (GarbageCollectorMXBean gc : ManagementFactory.getGarbageCollectorMXBeans()) {
                n += Math.max(0, gc.getCollectionCount());
            }
            MemoryUsage heap = ManagementFactory.getMemoryMXBean().getHeapMemoryUsage();
            return new Look(n, heap.getCommitted(), heap.getUsed());
        }
    }

    private HeapTrim() {
    }

    /** Whether the daemon was quiet since {@code before} and holds enough free heap to be worth a collection. */
    static boolean worthIt(Look before, Look now) {
        long free = now.committed() - now.used();
        return now.collections() == before.collections() && free > SLACK && free > 3 * now.used();
    }

    /** Starts the daemon thread that looks every period; {@code log} hears each trim. */
    static void start(Consumer<String> log) {
        Thread.ofPlatform().daemon().name("heap-trim").start(() -> {
            Look before = Look.now();
            while (true) {
                try {
                    Thread.sleep(PERIOD);
                } catch (InterruptedException e) {
                    return;
                }
                Look now = Look.now();
                if (worthIt(before, now)) {
                    long started = System.nanoTime();
                    System.gc();
                    Look after = Look.now();
                    log.accept(String.format("quiet: the heap went from %d to %d MiB (%d MiB in use), a collection of %d ms",
                            now.committed() >> 20, after.committed() >> 20, after.used() >> 20,
                            (System.nanoTime() - started) / 1_000_000));
                    now = after;
                }
                before = now;
            }
        });
    }
}
