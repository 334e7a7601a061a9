package dev.kosa8.workspace;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.IntFunction;

/**
 * The files the guest has just changed through the server, each with its change time and size
 * right after: a host event on such a file that shows nothing newer is the echo of the guest's own
 * change (inotify cannot say who changed a file), and {@link FolderNotices} does not send it. The
 * guest's cache already holds what it wrote; told again, it would drop pages it still needs, and a
 * notice whose attributes were read before the guest's latest write, applied after it, would take
 * the guest's size back. A host change after the guest's has a newer change time and is sent; one
 * within the same tick of the host's clock as the guest's, of the same size, is not (the limit
 * docs/workspace.md names). At most {@link #MAX} files are kept, the least recently changed
 * forgotten first: forgetting one only sends its echo.
 */
final class GuestChanges {
    static final int MAX = 65_536;

    private record Mark(long ctimeSec, long ctimeNsec, long size) {
    }

    private final Map<Long, Mark> marks = new LinkedHashMap<>(256, 0.75f, true) {
        @Override
        protected boolean removeEldestEntry(Map.Entry<Long, Mark> eldest) {
            return size() > MAX;
        }
    };

    /** The guest changed the file of qid path {@code qidPath}; {@code st} is it right after. */
    synchronized void note(long qidPath, LinuxFs.Stat st) {
        marks.put(qidPath, new Mark(st.ctimeSec(), st.ctimeNsec(), st.size()));
    }

    /** Whether {@code now} is the file just as the guest's last change left it. */
    synchronized boolean isGuestsOwn(P9Reply.Getattr now) {
        Mark m = marks.get(now.qid().path());
        return m != null && m.equals(new Mark(now.ctimeSec(), now.ctimeNsec(), now.size()));
    }

    /**
     * The paths a request changes, worked out before it is served (a remove forgets its fid): the file
     * whose attributes it sets (a write is noted by its open descriptor instead: its name may be another
     * file's by now), a name it makes, moves or links and the directories it
     * changes. Empty for a request that changes nothing or names a fid {@code pathOf} does not know
     * (null): it will fail.
     */
    static List<String> changedBy(P9Request request, IntFunction<String> pathOf) {
        return switch (request) {
            case P9Request.Setattr s -> file(pathOf.apply(s.fid()));
            case P9Request.Lcreate c -> withChild(pathOf.apply(c.fid()), c.name());
            case P9Request.Mkdir m -> withChild(pathOf.apply(m.dfid()), m.name());
            case P9Request.Symlink s -> withChild(pathOf.apply(s.fid()), s.name());
            case P9Request.Mknod m -> withChild(pathOf.apply(m.dfid()), m.name());
            case P9Request.Link l -> withChild(pathOf.apply(l.dfid()), l.name());
            case P9Request.UnlinkAt u -> file(pathOf.apply(u.dirFid()));
            case P9Request.RenameAt r -> moved(pathOf.apply(r.oldDirFid()), pathOf.apply(r.newDirFid()), r.newName());
            case P9Request.Rename r -> {
                String from = pathOf.apply(r.fid());
                yield from == null ? List.of() : moved(Fid.parent(from), pathOf.apply(r.dfid()), r.name());
            }
            case P9Request.Remove r -> {
                String gone = pathOf.apply(r.fid());
                yield gone == null ? List.of() : List.of(Fid.parent(gone));
            }
            default -> List.of();
        };
    }

    private static List<String> file(String path) {
        return path == null ? List.of() : List.of(path);
    }

    private static List<String> moved(String fromDir, String toDir, String name) {
        return fromDir == null || toDir == null ? List.of() : List.of(fromDir, toDir, Fid.child(toDir, name));
    }

    private static List<String> withChild(String dir, String name) {
        return dir == null ? List.of() : List.of(dir, Fid.child(dir, name));
    }
}
