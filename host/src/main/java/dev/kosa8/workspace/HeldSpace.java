package dev.kosa8.workspace;

import java.util.ArrayDeque;
import java.util.Deque;

/**
 * The bound on what a sandbox's held layer keeps on the host: its files' blocks and its entries
 * (docs/limits.md). The guest writes the held layer as it writes the folder, so without a bound a
 * guest writing a large file at a held path ({@code .git/hooks/x}, {@code .envrc}), or making
 * files there without end, would fill the host's disk or its inodes between two checkpoints (the
 * disk budget is checked only at a checkpoint). Past the bound the guest's write, new entry, or the
 * change that would hold another unit gets ENOSPC, as from a full disk, and nothing else changes.
 *
 * <p>Kept cheaply: each write into the layer counts its length and each new entry one, an estimate
 * of what the tree holds (an overwrite counts again; the file system's own blocks, a directory's or
 * ahead of a growing file, may pass it a little). When the estimate would pass the bound the tree
 * is measured (its blocks by {@code st_blocks}, so a sparse file costs what it takes), at most once
 * a {@link #REMEASURE_AFTER_MILLIS}, so a guest at the bound costs the host one walk of a small tree
 * a second, not one per request. A copy into the layer (a unit newly held, a file moved in) is
 * measured first and refused before anything is copied. A removal, a rename within the layer or a
 * change in place adds no entry and is never counted ({@link HeldRoots#rootForNew} against
 * {@link HeldRoots#rootForChange} and {@link HeldRoots#rootForRemoval}).
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
    private long loggedAt = Long.MIN_VALUE / 2;

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
     * Counts a copy about to be made into the layer, of what {@code path} below {@code root} holds (a unit the
     * folder has, or a file moved into the layer), measured first: ENOSPC, before anything is copied, when it
     * would pass the bound.
     */
    synchronized void chargeCopyOf(int root, String path) throws ErrnoException {
        chargeCopyOf(root, path, 0);
    }

    /** As {@link #chargeCopyOf(int, String)}, with {@code directories} more to be made above it in the layer. */
    synchronized void chargeCopyOf(int root, String path, int directories) throws ErrnoException {
        // the walk stops once past the whole bound: a guest cannot make each refused try walk a huge folder
        Usage u = measure(root, path, new Usage(bound.bytes(), bound.entries()), true);
        charge(u.bytes(), u.entries() + directories);
    }

    /** Forgets the estimate, after the tree was replaced (a rewind's held layer, an adopt): measured again at need. */
    synchronized void forget() {
        estimate = null;
    }

    /** Whether a refusal may be logged now: at most one line a minute, so a guest at the bound cannot flood the log. */
    synchronized boolean mayLogRefusal() {
        long now = System.currentTimeMillis();
        if (now - loggedAt < 60_000) {
            return false;
        }
        loggedAt = now;
        return true;
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
        return measure(root, "", new Usage(Long.MAX_VALUE, Long.MAX_VALUE), false);
    }

    /**
     * What {@code path} below {@code root} holds, itself included (nothing for "" itself, the root): its entries'
     * blocks and their count, links not followed; nothing when it is not there. The walk stops as soon as either
     * passes {@code enough} (what it returns is then past it too). {@code copying}: what a copy of it will take,
     * where a file's holes are written out whole ({@link TreeCopy#copy}), so a file costs its size where that is more
     * than its blocks.
     */
    static Usage measure(int root, String path, Usage enough, boolean copying) throws ErrnoException {
        long bytes = 0;
        long entries = 0;
        Deque<String> dirs = new ArrayDeque<>();
        if (!path.isEmpty()) {
            LinuxFs.Stat st = statQuietly(root, path);
            if (st == null) {
                return new Usage(0, 0);
            }
            entries++;
            bytes += cost(st, copying);
            if (!st.isDir()) {
                return new Usage(bytes, entries);
            }
        }
        dirs.push(path);
        while (!dirs.isEmpty()) {
            String dir = dirs.pop();
            java.util.List<String> names;
            try {
                names = TreeCopy.names(root, dir);
            } catch (ErrnoException e) {
                if (e.errno == ErrnoException.ENOENT || e.errno == ErrnoException.ENOTDIR
                        || e.errno == ErrnoException.ELOOP) {
                    continue; // removed while measured, or replaced by a link
                }
                throw e;
            }
            for (String name : names) {
                String child = Fid.child(dir, name);
                LinuxFs.Stat st = statQuietly(root, child);
                if (st == null) {
                    continue; // removed while measured, or replaced by a link
                }
                entries++;
                bytes += cost(st, copying);
                if (entries > enough.entries() || bytes > enough.bytes()) {
                    return new Usage(bytes, entries);
                }
                if (st.isDir()) {
                    dirs.push(child);
                }
            }
        }
        return new Usage(bytes, entries);
    }

    /** The stat of {@code path}, or null when it is gone or a link now stands in its way. */
    private static LinuxFs.Stat statQuietly(int root, String path) throws ErrnoException {
        try {
            return TreeCopy.statOrNull(root, path);
        } catch (ErrnoException e) {
            if (e.errno == ErrnoException.ELOOP) {
                return null;
            }
            throw e;
        }
    }

    /** What one entry takes: its blocks, or for a copy of a regular file its size where that is more. */
    private static long cost(LinuxFs.Stat st, boolean copying) {
        long blocks = st.blocks() * 512;
        return copying && st.isRegular() ? Math.max(blocks, st.size()) : blocks;
    }
}
