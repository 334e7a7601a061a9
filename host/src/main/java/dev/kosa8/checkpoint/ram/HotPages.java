package dev.kosa8.checkpoint.ram;

import dev.kosa8.host.AtomicFile;
import java.io.IOException;
import java.nio.BufferUnderflowException;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashSet;

/**
 * The pages a store's lazy loads were asked for, sent first by its next load
 * ({@link dev.kosa8.vm.Postcopy}), and a pool shared with the store it came
 * from: a sandbox's template ({@link RamStore#adopt(RamStore, String, boolean)}).
 *
 * <p>Why a pool: most of what a guest asks for while it wakes never moves
 * (its kernel's image, the page cache of the agent's JVM files), but two
 * wakes run different code, so one store's list is the union of its wakes
 * and needs about five loads to cover one (bench/history/undo.md, runs 11
 * and 12). Every sandbox made from a template shares those pages, so each of
 * their loads adds to the template's list, and a new sandbox's first load
 * starts from what all of them learned instead of from nothing.
 *
 * <p>Each file is {@code be32(n)} then {@code n} page indices, {@code be32}
 * each, oldest first. A file that is cut, too long or names a page the image
 * does not have is ignored: it is a hint, and a wrong hint costs only pages
 * sent early. Writers replace a file whole ({@link AtomicFile#writeHint}, not
 * synced: a list lost in a crash costs the next load its speed, nothing else);
 * two loads that end at once may lose one's additions, never corrupt it.
 */
final class HotPages {
    /** The most pages a pool keeps (32 MiB): what is learned first (what every wake needs) stays. */
    static final int POOL_MAX = 8192;
    private final Path own;
    private final Path pool;

    /** @param pool the other store's list, or null when this store came from none */
    HotPages(Path own, Path pool) {
        this.own = own;
        this.pool = pool;
    }

    /** This store's list when it has one, else the pool's; indices checked against {@code pages}. */
    int[] read(int pages) {
        int[] mine = read(own, pages);
        return mine.length > 0 || pool == null ? mine : read(pool, pages);
    }

    /** Keeps {@code pages} as this store's list, and adds them to the pool. */
    void remember(int[] pages) throws IOException {
        write(own, pages);
        if (pool != null && Files.isDirectory(pool.getParent())) {
            LinkedHashSet<Integer> all = new LinkedHashSet<>();
            for (int p : read(pool, Integer.MAX_VALUE)) {
                all.add(p);
            }
            for (int p : pages) {
                all.add(p);
            }
            write(pool, all.stream().limit(POOL_MAX).mapToInt(Integer::intValue).toArray());
        }
    }

    static int[] read(Path file, int pages) {
        try {
            if (!Files.isRegularFile(file)) {
                return new int[0];
            }
            ByteBuffer b = ByteBuffer.wrap(Files.readAllBytes(file));
            int n = b.getInt();
            if (n < 0 || n > dev.kosa8.vm.Postcopy.MAX_HOT || b.remaining() != 4 * n) {
                return new int[0];
            }
            int[] hot = new int[n];
            for (int k = 0; k < n; k++) {
                hot[k] = b.getInt();
                if (hot[k] < 0 || hot[k] >= pages) {
                    return new int[0];
                }
            }
            return hot;
        } catch (IOException | BufferUnderflowException e) {
            return new int[0];
        }
    }

    private static void write(Path file, int[] pages) throws IOException {
        ByteBuffer b = ByteBuffer.allocate(4 + 4 * pages.length).putInt(pages.length);
        for (int p : pages) {
            b.putInt(p);
        }
        AtomicFile.writeHint(file, b.array());
    }
}
