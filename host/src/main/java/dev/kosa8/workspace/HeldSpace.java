package dev.kosa8.workspace;

import java.util.ArrayDeque;
import java.util.Deque;

/**
 * The bound on what a sandbox's held layer keeps on the host: its files' blocks and its entries
 * (docs/limits.md). The guest writes the held layer as it writes the folder, so without a bound a
 * guest writing a large file at a held path ({@code .git/hooks/x}, {@code .envrc}), or making
 * files there without end, would fill the host's disk or its inodes between two checkpoints (the
 * disk budget is checked only at a checkpoint). Past the bound the guest's write, create, or the
 * change that would hold another unit gets ENOSPC, as from a full disk, and nothing else changes.
 *
 * <p>Kept cheaply: each write into the layer counts its length and each new entry one, an estimate
 * of what the tree holds (an overwrite counts again; the file system's own blocks, a directory's or
 * ahead of a growing file, may pass it a little). When the estimate would pass the bound the tree
 * is measured (its blocks by {@code st_blocks}, so a sparse file costs what it takes), at most once
 * a {@link #REMEASURE_AFTER_MILLIS}, so a guest at the bound costs the host one walk of a small tree
 * a second, not one per request. A removal or a change in place is never counted or refused: it
 * needs no room ({@link HeldRoots#rootForNew} against {@link HeldRoots#rootForChange}).
 */
final class HeldSpace {
    /** The defaults: the held layer is made for configuration files and hooks, which are small. */
    static final Bound DEFAULT = new Bound(1L << 30, 65_536);
    static final long REMEASURE_AFTER_MILLIS = 1000;

    /** What the layer may keep: bytes of blocks, and entries (files, directories, links). */
    record Bound(long bytes, long entries) {
        Bound {
            if (bytes <= 0 || entries <= 0) {
                throw new IllegalArgumentException("a held layer's bound must be positive");
            }
        }
    }

    /** What a tree holds. */
    record Usage(long bytes, long entries) {
    }

    private final int treeFd;
    private final Bound bound;
    /** The estimate of what the tree holds; null until first measured. */
    private Usage estimate;
    private long measuredAt;

    HeldSpace(int treeFd, Bound bound) {
        this.treeFd = treeFd;
        this.bound = bound;
    }

    Bound bound() {
        return bound;
    }

    /** Counts {@code n} bytes about to be written into the layer; ENOSPC when they would pass the bound. */
    synchronized void chargeBytes(long n) throws ErrnoException {
        charge(n, 0);
    }

    /** Counts a change of an entry about to be made in the layer; ENOSPC when one more would pass the bound. */
    synchronized void chargeEntry() throws ErrnoException {
        charge(0, 1);
    }

    /**
     * Measures the tree now, after a unit was copied into it: ENOSPC when it is past the bound (the caller
     * removes the copy).
     */
    synchronized void admitCopy() throws ErrnoException {
        remeasure();
        if (over(0, 0)) {
            throw full();
        }
    }

    private void charge(long bytes, long entries) throws ErrnoException {
        if (estimate == null) {
            remeasure();
        }
        if (over(bytes, entries) && System.currentTimeMillis() - measuredAt >= REMEASURE_AFTER_MILLIS) {
            remeasure();
        }
        if (over(bytes, entries)) {
            throw full();
        }
        estimate = new Usage(estimate.bytes() + bytes, estimate.entries() + entries);
    }

    private boolean over(long bytes, long entries) {
        return estimate.bytes() + bytes > bound.bytes() || estimate.entries() + entries > bound.entries();
    }

    private ErrnoException full() {
        return new ErrnoException(ErrnoException.ENOSPC, "the held layer is full (" + estimate.bytes() + " of "
                + bound.bytes() + " bytes, " + estimate.entries() + " of " + bound.entries() + " entries)");
    }

    private void remeasure() throws ErrnoException {
        estimate = measure(treeFd);
        measuredAt = System.currentTimeMillis();
    }

    /** What the tree below {@code root} holds: its entries' blocks and their count, links not followed. */
    static Usage measure(int root) throws ErrnoException {
        long bytes = 0;
        long entries = 0;
        Deque<String> dirs = new ArrayDeque<>();
        dirs.push("");
        while (!dirs.isEmpty()) {
            String dir = dirs.pop();
            java.util.List<String> names;
            try {
                names = TreeCopy.names(root, dir);
            } catch (ErrnoException e) {
                if (e.errno == ErrnoException.ENOENT || e.errno == ErrnoException.ENOTDIR) {
                    continue; // removed while measured
                }
                throw e;
            }
            for (String name : names) {
                String path = Fid.child(dir, name);
                LinuxFs.Stat st = TreeCopy.statOrNull(root, path);
                if (st == null) {
                    continue; // removed while measured
                }
                entries++;
                bytes += st.blocks() * 512;
                if (st.isDir()) {
                    dirs.push(path);
                }
            }
        }
        return new Usage(bytes, entries);
    }
}
