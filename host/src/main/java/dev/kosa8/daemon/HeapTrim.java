package dev.kosa8.daemon;

import java.lang.management.GarbageCollectorMXBean;
import java.lang.management.ManagementFactory;
import java.lang.management.MemoryPoolMXBean;
import java.lang.management.MemoryType;
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
 * <p>Every {@link #PERIOD} it looks at the old generation, the part a
 * full collection sizes (to at most {@code 0.7/0.3} of what it holds, the
 * JVM's {@code MaxHeapFreeRatio} of 70; the young generation is emptied and
 * sized after it). When no collection ran in the whole period (the daemon
 * allocated less than its young generation: quiet), none ran since its own
 * last one either (nothing can have grown since), and the old generation
 * holds more than {@link #SLACK} and more than two and a half times its use
 * free, it asks for one full collection. What that leaves free is under
 * that (2.33 times), and without a collection between no second one is
 * asked for: a quiet daemon is trimmed once per burst, and a daemon whose
 * heap cannot shrink (one run in the foreground by {@code kosa8 daemon run},
 * in the CLI's JVM and its default floor) is asked once after each busy
 * spell, not every period. The collection stops the daemon for as long as
 * it takes to copy what is in use (about 50 ms at the daemon's 10-60 MiB) at
 * a moment nothing is asking.
 */
final class HeapTrim {
    static final Duration PERIOD = Duration.ofSeconds(60);
    static final long SLACK = 64L << 20;

    /**
     * What the collectors and the old generation said at one look.
     *
     * @param committed the old generation's committed bytes (the heap's, where the JVM names no old generation)
     * @param used      the old generation's bytes in use (likewise)
     */
    record Look(long collections, long committed, long used) {
        static Look now() {
            long n = 0;
            for (GarbageCollectorMXBean gc : ManagementFactory.getGarbageCollectorMXBeans()) {
                n += Math.max(0, gc.getCollectionCount());
            }
            MemoryUsage old = null;
            for (MemoryPoolMXBean pool : ManagementFactory.getMemoryPoolMXBeans()) {
                // the serial collector's "Tenured Gen"; "PS Old Gen", "G1 Old Gen" for others
                if (pool.getType() == MemoryType.HEAP && (pool.getName().contains("Old")
                        || pool.getName().contains("Tenured"))) {
                    old = pool.getUsage();
                }
            }
            MemoryUsage heap = old != null ? old : ManagementFactory.getMemoryMXBean().getHeapMemoryUsage();
            return new Look(n, heap.getCommitted(), heap.getUsed());
        }
    }

    private HeapTrim() {
    }

    /**
     * Whether the daemon was quiet since {@code before}, made no collection since the one this class asked for
     * last ({@code lastTrim}, the count right after it; -1 before any), and holds enough free old generation to be
     * worth a collection.
     */
    static boolean worthIt(Look before, Look now, long lastTrim) {
        long free = now.committed() - now.used();
        return now.collections() == before.collections() && now.collections() != lastTrim && free > SLACK
                && free > 5 * now.used() / 2;
    }

    /** Starts the daemon thread that looks every period; {@code log} hears each trim. */
    static void start(Consumer<String> log) {
        Thread.ofPlatform().daemon().name("heap-trim").start(() -> {
            Look before = Look.now();
            long lastTrim = -1;
            while (true) {
                try {
                    Thread.sleep(PERIOD);
                } catch (InterruptedException e) {
                    return;
                }
                Look now = Look.now();
                if (worthIt(before, now, lastTrim)) {
                    long heapBefore = ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getCommitted();
                    long started = System.nanoTime();
                    System.gc();
                    MemoryUsage heap = ManagementFactory.getMemoryMXBean().getHeapMemoryUsage();
                    now = Look.now();
                    lastTrim = now.collections();
                    log.accept(String.format("quiet: the heap went from %d to %d MiB (%d MiB in use), a collection of %d ms",
                            heapBefore >> 20, heap.getCommitted() >> 20, heap.getUsed() >> 20,
                            (System.nanoTime() - started) / 1_000_000));
                }
                before = now;
            }
        });
    }
}
