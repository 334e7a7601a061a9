package dev.kosa8.workspace;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;

/**
 * The state of a {@link WorkspaceServer} that the guest kernel depends on:
 * the negotiated msize and every fid, with its path in the folder and, for an
 * open fid, the flags it was opened with. A value (a record of records, made
 * for Jackson), taken while the server is paused and idle, and restored into a
 * server serving the same folder after the folder's content has been put
 * back to the same instant: each open fid is opened again by its path.
 *
 * <p>Paths are byte strings (one char per byte) as everywhere in the server.
 * A file that was open but already unlinked at the snapshot has no path to
 * reopen by; its fid comes back stale and answers ESTALE, as NFS does.
 *
 * @param version    format version of this record
 * @param readWindow whether the guest's relay had asked for the read window
 *                   ({@link ReadWindow}); false in a snapshot made before it existed
 * @param cached     whether the guest's mount caches the folder ({@link FolderNotices}): a server
 *                   restored under it tells it what changes; false in a snapshot made before caching
 */
public record WorkspaceSnapshot(int version, int msize, List<FidState> fids, boolean readWindow, boolean cached) {
    /**
     * 2 since quiet clunks ({@link QuietClunks}): the guest a snapshot restores may send Tclunkqs, which a
     * daemon from before them would answer under tags its kernel has reused, so such a daemon refuses the
     * snapshot instead. Format 1 (no quiet clunks yet) restores here as it is.
     */
    public static final int FORMAT = 2;
    /**
     * 4 for a guest that caches the folder: it sends Twalkqs, Tlopenqs and Tsyncs, which a daemon from before
     * would not know, so such a daemon refuses the snapshot instead. Otherwise as 2. Format 3 (a cached guest
     * from before quiet opens) restores here as it is.
     */
    public static final int CACHED_FORMAT = 4;

    /**
     * @param openFlags the guest's 9p open flags, or -1 for a fid that was not open
     */
    public record FidState(int fid, String path, boolean xattr, byte qidType, int openFlags) {
    }

    public WorkspaceSnapshot {
        fids = List.copyOf(fids);
    }

    static WorkspaceSnapshot of(P9Operations ops, boolean readWindow, boolean cached) {
        List<FidState> all = new ArrayList<>();
        for (Map.Entry<Integer, Fid> e : ops.fids().entrySet()) {
            Fid f = e.getValue();
            all.add(new FidState(e.getKey(), f.path(), f.kind == Fid.Kind.XATTR, f.qidType, f.openFlags));
        }
        all.sort(Comparator.comparingInt(FidState::fid));
        return new WorkspaceSnapshot(cached ? CACHED_FORMAT : FORMAT, ops.msize(), all, readWindow, cached);
    }

    void restoreInto(P9Operations ops) {
        if (version != FORMAT && version != 1 && version != 3 && version != CACHED_FORMAT) {
            throw new IllegalArgumentException("workspace snapshot format " + version + " is not " + FORMAT);
        }
        ops.restore(this);
    }
}
