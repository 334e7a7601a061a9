package dev.kosa8.workspace;

import java.nio.ByteBuffer;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.ToLongFunction;

/**
 * What changes in the folder on the host, as names the guest's cache must forget: every directory
 * of the folder is watched with inotify, and each event on a name becomes the directory's qid path
 * and the name ({@link Name}), as the guest's kernel knows them. New directories (made or moved in)
 * are watched as they come. Where not every directory could be watched (the user's inotify watch
 * limit), {@link #complete()} says so and why: the caller then falls back to dropping everything
 * now and then.
 *
 * <p>Directories are opened beneath the folder's root by the confinement rule, as every path the
 * server opens, and watched by descriptor, so a symlink swapped in on the host leads nowhere.
 * One thread uses an instance.
 */
final class FolderWatch implements AutoCloseable {
    static final int MASK = Inotify.IN_MODIFY | Inotify.IN_ATTRIB | Inotify.IN_MOVED_FROM | Inotify.IN_MOVED_TO
            | Inotify.IN_CREATE | Inotify.IN_DELETE | Inotify.IN_ONLYDIR | Inotify.IN_EXCL_UNLINK;
    // no IN_DONT_FOLLOW: a directory is watched through its descriptor's /proc/self/fd link, which must be followed

    /**
     * The most directories one folder's watch takes: the watch limit is the user's, shared with every
     * program of theirs that watches files (an editor, a build tool), and the guest makes directories.
     */
    static final int MAX_DIRECTORIES = 65_536;

    /**
     * A name in a directory that changed: the directory's qid path (as the guest knows it) and its
     * path in the folder (to look at what is there now); {@link #EVERYTHING} for all at once.
     */
    record Name(long dir, String dirPath, String name) {
        String path() {
            return Fid.child(dirPath, name);
        }
    }

    /** Everything: the events overflowed, or a notice could not say what changed. */
    static final Name EVERYTHING = new Name(0, "", "");

    private record Dir(String path, long qid) {
    }

    private final Inotify inotify;
    private final int rootFd;
    private final ToLongFunction<LinuxFs.Stat> qidPath;
    private final Map<Integer, Dir> dirs = new HashMap<>();
    /** The qid path of each watched directory by its path, to name a directory in its parent. */
    private final Map<String, Long> qidByPath = new HashMap<>();
    private final ByteBuffer listing = ByteBuffer.allocateDirect(64 << 10);
    private final int maxDirectories;
    /** Why not every directory is watched, or null while every one is. */
    private String incomplete;

    private FolderWatch(Inotify inotify, int rootFd, ToLongFunction<LinuxFs.Stat> qidPath, int maxDirectories) {
        this.maxDirectories = maxDirectories;
        this.inotify = inotify;
        this.rootFd = rootFd;
        this.qidPath = qidPath;
    }

    /** Watches every directory beneath {@code rootFd}; {@code qidPath} is the server's qid path of a stat. */
    static FolderWatch open(int rootFd, ToLongFunction<LinuxFs.Stat> qidPath) throws ErrnoException {
        return open(rootFd, qidPath, MAX_DIRECTORIES);
    }

    /** As above, watching at most {@code maxDirectories} (tests take a small number). */
    static FolderWatch open(int rootFd, ToLongFunction<LinuxFs.Stat> qidPath, int maxDirectories)
            throws ErrnoException {
        FolderWatch w = new FolderWatch(Inotify.open(), rootFd, qidPath, maxDirectories);
        w.watchTree("");
        return w;
    }

    /** Whether every directory of the folder is watched. */
    boolean complete() {
        return incomplete == null;
    }

    /** Why not every directory is watched; null while every one is. */
    String incomplete() {
        return incomplete;
    }

    /** Ends a {@link #poll}'s wait now, from any thread. */
    void wake() {
        inotify.wake();
    }

    int directories() {
        return dirs.size();
    }

    /** The names that changed, waiting up to {@code timeoutMillis} for the first event. */
    List<Name> poll(int timeoutMillis) throws ErrnoException {
        List<Name> names = new ArrayList<>();
        for (Inotify.Event e : inotify.read(timeoutMillis)) {
            if (e.is(Inotify.IN_Q_OVERFLOW)) {
                names.add(EVERYTHING);
                continue;
            }
            if (e.is(Inotify.IN_IGNORED)) {
                Dir gone = dirs.remove(e.wd()); // the directory is gone (or moved out and unwatched)
                if (gone != null) {
                    qidByPath.remove(gone.path(), gone.qid());
                }
                continue;
            }
            Dir dir = dirs.get(e.wd());
            if (dir == null || e.name().isEmpty()) {
                continue; // an event on a directory itself: its parent's watch names it too
            }
            names.add(new Name(dir.qid(), dir.path(), e.name()));
            if (!dir.path().isEmpty() && e.is(Inotify.IN_CREATE | Inotify.IN_DELETE | Inotify.IN_MOVED_FROM
                    | Inotify.IN_MOVED_TO)) {
                // a name made or gone changes the directory's own times and link count: named in its parent
                Long parent = qidByPath.get(Fid.parent(dir.path()));
                if (parent != null) {
                    names.add(new Name(parent, Fid.parent(dir.path()), Fid.lastName(dir.path())));
                }
            }
            if (e.is(Inotify.IN_ISDIR) && e.is(Inotify.IN_CREATE | Inotify.IN_MOVED_TO)) {
                // a new directory, or one moved here (its watches stay; their paths are renewed)
                watchTree(Fid.child(dir.path(), e.name()));
            }
        }
        return names;
    }

    /** Watches the directory at {@code start} (relative to the root) and every directory beneath it. */
    private void watchTree(String start) {
        Deque<String> todo = new ArrayDeque<>();
        todo.push(start);
        while (!todo.isEmpty() && incomplete == null) {
            String path = todo.pop();
            if (dirs.size() >= maxDirectories) {
                incomplete = "the folder has more than " + maxDirectories + " directories, the most kosa8 watches"
                        + " for one sandbox";
                return;
            }
            int fd;
            try {
                fd = LinuxFs.openBeneath(rootFd, path.isEmpty() ? "." : path,
                        LinuxFs.O_RDONLY | LinuxFs.O_DIRECTORY | LinuxFs.O_NOFOLLOW, 0);
            } catch (ErrnoException e) {
                continue; // gone meanwhile, not a directory, or not ours to read
            }
            try {
                int wd = inotify.watch(fd, MASK);
                long qid = qidPath.applyAsLong(FdCalls.stat(fd));
                dirs.put(wd, new Dir(path, qid));
                qidByPath.put(path, qid);
                for (LinuxFs.DirEntry d : list(fd)) {
                    if (d.type() == LinuxFs.DT_DIR || d.type() == LinuxFs.DT_UNKNOWN) {
                        todo.push(Fid.child(path, d.name()));
                    }
                }
            } catch (ErrnoException e) {
                if (e.errno == ErrnoException.ENOSPC) {
                    incomplete = "the folder has more directories than this user's inotify watch limit allows ("
                            + dirs.size() + " watched; raise fs.inotify.max_user_watches)";
                }
            } finally {
                closeQuietly(fd);
            }
        }
    }

    private List<LinuxFs.DirEntry> list(int fd) throws ErrnoException {
        List<LinuxFs.DirEntry> all = new ArrayList<>();
        while (true) {
            listing.clear();
            int n = FdCalls.getdents(fd, listing);
            if (n == 0) {
                return all;
            }
            for (LinuxFs.DirEntry d : FdCalls.parseDirents(listing, n)) {
                if (!d.name().equals(".") && !d.name().equals("..")) {
                    all.add(d);
                }
            }
        }
    }


    private static void closeQuietly(int fd) {
        try {
            LinuxFs.close(fd);
        } catch (ErrnoException e) {
            // nothing to do
        }
    }

    @Override
    public void close() {
        inotify.close();
    }
}
