package dev.kosa8.daemon;

import dev.kosa8.host.KosaException;

/**
 * Keeps a sandbox within its disk {@link Budget}: a checkpoint is taken only
 * when, after it, everything the guest can still make the host keep fits —
 * its whole disk written anew (each block once, the checkpoint keeping the
 * old one), its RAM in a checkpoint and again in a pause to disk, its logs
 * at their limits. So what the sandbox keeps never passes its budget
 * however the guest writes: between checkpoints the overlay grows at most by
 * the disk's size, which the last checkpoint kept room for. A workspace
 * snapshot, whose size only the capture finds out, is checked after it: a
 * checkpoint that took the sandbox past its budget is removed again. The
 * held layer (what the guest wrote to held paths, kept beside the sandbox
 * rather than in the folder) counts as kept and is checked at each
 * checkpoint; what the guest writes there between checkpoints is not
 * refused as it is written (docs/limits.md, "Not bounded here yet").
 */
final class DiskBudget {
    private DiskBudget() {
    }

    /** The room a checkpoint keeps free for what may follow it. */
    static long room(DiskUsage u, Budget b, int memoryMiB) {
        return u.diskVirtual() + 2 * ((long) memoryMiB << 20) + DiskUsage.logRoom(b);
    }

    /**
     * What a sandbox's guest can make the host keep before its first
     * checkpoint: its whole disk written, a pause to disk of its RAM, its
     * logs at their limits. A budget smaller than that could not be kept.
     */
    static long least(long diskVirtual, int memoryMiB, Budget b) {
        return diskVirtual + ((long) memoryMiB << 20) + DiskUsage.logRoom(b);
    }

    /** Refuses a new sandbox, before it is made, whose budget is smaller than {@link #least}. */
    static void admitSandbox(int memoryMiB, Budget b, long diskVirtual) {
        long least = least(diskVirtual, memoryMiB, b);
        if (least > b.diskBytes()) {
            long gib = (least + (1L << 30) - 1) >> 30;
            throw new KosaException(KosaException.Kind.USAGE, "a disk budget of " + gib(b.diskBytes())
                    + " cannot hold what the sandbox's guest can make the host keep: " + gib(least) + " (its "
                    + gib(diskVirtual) + " disk written in full, a pause to disk of its " + memoryMiB
                    + " MiB of RAM, its logs)", "give --disk-budget " + gib + "G or more (or less --memory)");
        }
    }

    /** Refuses a checkpoint, before anything stops, when what the guest can still write would not fit after it. */
    static void admitCheckpoint(String id, int memoryMiB, Budget b, DiskUsage u) {
        long kept = u.keptBeyondLogs();
        long need = room(u, b, memoryMiB);
        if (kept + need > b.diskBytes()) {
            throw new KosaException(KosaException.Kind.LIMIT, "sandbox " + id + " would pass its disk budget of "
                    + gib(b.diskBytes()) + ": it keeps " + gib(u.total()) + " (disk " + gib(u.disk())
                    + ", checkpoints " + gib(u.checkpoints()) + ", held changes " + gib(u.held()) + ", logs "
                    + gib(u.logs()) + (u.spool() > 0 ? ", request bodies being judged " + gib(u.spool()) : "")
                    + "), and after a checkpoint"
                    + " it needs room for " + gib(need) + " more (its " + gib(u.diskVirtual()) + " disk written anew, "
                    + memoryMiB + " MiB of RAM twice, its logs)",
                    "remove checkpoints with `kosa8 checkpoint rm " + id + " ID` (`kosa8 checkpoints " + id
                            + "` lists their sizes; `kosa8 df` shows every sandbox's use)"
                            + (u.held() > 0 ? ", accept or reject its held changes (`kosa8 review " + id + "`)" : "")
                            + ", or give a new sandbox a larger --disk-budget");
        }
    }

    /**
     * Whether a sandbox that just took a checkpoint still has room for its
     * disk written anew, a pause to disk and its logs (the checkpoint's own
     * RAM was kept room for): false, and the checkpoint must go again.
     */
    static boolean fits(DiskUsage u, Budget b, int memoryMiB) {
        return u.keptBeyondLogs() + room(u, b, memoryMiB) - ((long) memoryMiB << 20)
                <= b.diskBytes();
    }

    static String gib(long bytes) {
        return String.format(java.util.Locale.ROOT, "%.2f GiB", bytes / (double) (1L << 30));
    }
}
