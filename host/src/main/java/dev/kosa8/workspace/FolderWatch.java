package dev.kosa8.workspace;

import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.BooleanSupplier;
import java.util.function.ToLongFunction;

/**
 * What changes in the folder on the host, as names the guest's cache must catch up with: every
 * directory of the folder is watched with inotify, and each event on a name becomes the directory's
 * qid path and the name ({@link Name}), as the guest's kernel knows them. New directories (made or
 * moved in) are watched as they come, and what they already hold is named too (it was made before
 * their watch). Where not every directory could be watched (the bound, the user's inotify watch
 * limit, a failure), {@link #complete()} says so and why: the caller then falls back to dropping
 * everything now and then.
 *
 * <p>Directories are opened beneath the folder's root by the confinement rule, as every path the
 * server opens, and watched by descriptor, so a symlink swapped in on the host leads nowhere. Each
 * watched directory is kept as its parent's watch and its name, so a move changes one entry, not the
 * paths of everything beneath it. One thread uses an instance; {@link #wake} may be called from any.
 */
final class FolderWatch implements AutoCloseable {
    static final int MASK = Inotify.IN_MODIFY | Inotify.IN_ATTRIB | Inotify.IN_MOVED_FROM | Inotify.IN_MOVED_TO
            | Inotify.IN_CREATE | Inotify.IN_DELETE | Inotify.IN_ONLYDIR | Inotify.IN_EXCL_UNLINK;
    // no IN_DONT_FOLLOW: a directory is watched through its descriptor's /proc/self/fd link, which must be followed
    private static final int NAME_CHANGES = Inotify.IN_CREATE | Inotify.IN_DELETE | Inotify.IN_MOVED_FROM
            | Inotify.IN_MOVED_TO;

    /**
     * The most directories one folder's watch takes (and at most a quarter of the user's inotify watch
     * limit): that limit is the user's, shared with every program of theirs that watches files (an
     * editor, a build tool), and the guest makes directories.
     */
    static final int MAX_DIRECTORIES = 65_536;
    /** The most names a newly watched directory tree is reported by, one by one; past it, everything. */
    static final int MAX_REPORTED = 10_000;

    /**
     * A name in a directory that changed: the directory's qid path (as the guest knows it) and its path
     * in the folder (to look at what is there now); {@link #EVERYTHING} for all at once.
     */
    record Name(long dir, String dirPath, String name) {
        String path() {
            return Fid.child(dirPath, name);
        }
    }

    /** Everything: the events overflowed, or a notice could not say what changed. */
    static final Name EVERYTHING = new Name(0, "", "");

    /** A watched directory: its parent's watch (-1 for the root) and its name there, and its qid path. */
    private record Dir(int parent, String name, long qid) {
    }

    private final Inotify inotify;
    private final int rootFd;
    private final ToLongFunction<LinuxFs.Stat> qidPath;
    private final Map<Integer, Dir> dirs = new HashMap<>();
    private final ByteBuffer listing = ByteBuffer.allocateDirect(64 << 10);
    private final int maxDirectories;
    /** True once the watch is being closed: a walk stops. */
    private final BooleanSupplier stopping;
    /** Why not every directory is watched, or null while every one is. */
    private String incomplete;

    private FolderWatch(Inotify inotify, int rootFd, ToLongFunction<LinuxFs.Stat> qidPath, int maxDirectories,
                        BooleanSupplier stopping) {
        this.inotify = inotify;
        this.rootFd = rootFd;
        this.qidPath = qidPath;
        this.maxDirectories = Math.min(maxDirectories, userLimit() / 4);
        this.stopping = stopping;
    }

    /**
     * Watches every directory beneath {@code rootFd} (at most {@code maxDirectories}); {@code qidPath}
     * is the server's qid path of a stat. Fails if the root itself cannot be watched.
     */
    static FolderWatch open(int rootFd, ToLongFunction<LinuxFs.Stat> qidPath, int maxDirectories,
                            BooleanSupplier stopping) throws ErrnoException {
        Inotify inotify = Inotify.open();
        try {
            FolderWatch w = new FolderWatch(inotify, rootFd, qidPath, maxDirectories, stopping);
            w.watchTree(-1, "", null);
            if (w.dirs.isEmpty() && w.incomplete == null) {
                throw new ErrnoException(ErrnoException.EIO, "watch of the folder's root");
            }
            return w;
        } catch (ErrnoException | RuntimeException e) {
            inotify.close();
            throw e;
        }
    }

    /** The user's inotify watch limit, or a large number where it cannot be read. */
    private static int userLimit() {
        // (not Files.readString: a /proc file says it is empty, and Java 25 read one byte of it here)
        try (java.io.InputStream in = Files.newInputStream(Path.of("/proc/sys/fs/inotify/max_user_watches"))) {
            return Integer.parseInt(new String(in.readAllBytes(), java.nio.charset.StandardCharsets.US_ASCII).strip());
        } catch (java.io.IOException | NumberFormatException e) {
            return Integer.MAX_VALUE;
        }
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
                // events were lost, new directories' among them: everything, and every directory watched again
                names.add(EVERYTHING);
                watchTree(-1, "", null);
                continue;
            }
            if (e.is(Inotify.IN_IGNORED)) {
                dirs.remove(e.wd()); // the directory is gone
                continue;
            }
            Dir dir = dirs.get(e.wd());
            String path = dir == null ? null : path(e.wd());
            if (path == null || e.name().isEmpty()) {
                continue; // an event on a directory itself (its parent's watch names it), or one no longer ours
            }
            boolean nameChange = e.is(NAME_CHANGES);
            names.add(new Name(dir.qid(), path, e.name()));
            if (nameChange && dir.parent() >= 0) {
                // a name made or gone changes the directory's own times and link count: named in its parent
                Dir parent = dirs.get(dir.parent());
                String parentPath = path(dir.parent());
                if (parent != null && parentPath != null) {
                    names.add(new Name(parent.qid(), parentPath, dir.name()));
                }
            }
            if (e.is(Inotify.IN_ISDIR) && e.is(Inotify.IN_CREATE | Inotify.IN_MOVED_TO)) {
                // a new directory, or one moved here: what it holds was made before its watch, and is named
                List<Name> held = new ArrayList<>();
                watchTree(e.wd(), e.name(), held);
                names.addAll(held.size() > MAX_REPORTED ? List.of(EVERYTHING) : held);
            }
        }
        return names;
    }

    /** The path of the directory watched as {@code wd} in the folder; null if its chain is broken (gone). */
    private String path(int wd) {
        StringBuilder b = new StringBuilder();
        for (int at = wd, depth = 0; at >= 0; depth++) {
            Dir d = dirs.get(at);
            if (d == null || depth > 4096) {
                return null;
            }
            if (d.parent() >= 0) {
                b.insert(0, b.isEmpty() ? d.name() : d.name() + "/");
            }
            at = d.parent();
        }
        return b.toString();
    }

    /**
     * Watches the directory {@code name} in the one watched as {@code parent} (-1 and "" for the root)
     * and every directory beneath it that is not watched yet; a directory watched already (moved here)
     * gets its new place. With {@code report}, every name found in a directory newly watched is added.
     */
    private void watchTree(int parent, String name, List<Name> report) {
        Deque<Dir> todo = new ArrayDeque<>();
        todo.push(new Dir(parent, name, 0));
        while (!todo.isEmpty() && incomplete == null && !stopping.getAsBoolean()) {
            Dir next = todo.pop();
            String parentPath = next.parent() < 0 ? "" : path(next.parent());
            if (parentPath == null) {
                continue;
            }
            String path = Fid.child(parentPath, next.name());
            int fd;
            try {
                fd = LinuxFs.openBeneath(rootFd, path.isEmpty() ? "." : path,
                        LinuxFs.O_RDONLY | LinuxFs.O_DIRECTORY | LinuxFs.O_NOFOLLOW, 0);
            } catch (ErrnoException e) {
                missed(e, path);
                continue;
            }
            try {
                int wd = inotify.watch(fd, MASK);
                long qid = qidPath.applyAsLong(FdCalls.stat(fd));
                Dir was = dirs.put(wd, new Dir(next.parent(), next.name(), qid));
                if (was != null && report != null) {
                    continue; // watched already, moved here: what is beneath it is watched too
                }
                // (a walk after lost events goes through watched directories too: new ones may be beneath)
                for (LinuxFs.DirEntry d : list(fd, report == null ? 0 : MAX_REPORTED + 1 - report.size())) {
                    boolean directory = d.type() == LinuxFs.DT_DIR || d.type() == LinuxFs.DT_UNKNOWN;
                    if (report != null) {
                        report.add(new Name(qid, path, d.name()));
                    }
                    if (directory) {
                        if (dirs.size() + todo.size() >= maxDirectories) {
                            incomplete = "the folder has more than " + maxDirectories + " directories, the most kosa8"
                                    + " watches for one sandbox";
                            break;
                        }
                        todo.push(new Dir(wd, d.name(), 0));
                    }
                }
            } catch (ErrnoException e) {
                if (e.errno == ErrnoException.ENOSPC) {
                    incomplete = "the folder has more directories than this user's inotify watch limit allows ("
                            + dirs.size() + " watched; raise fs.inotify.max_user_watches)";
                } else {
                    missed(e, path);
                }
            } finally {
                LinuxFs.closeQuietly(fd);
            }
        }
    }

    /**
     * A directory that could not be watched: gone meanwhile, not a directory, or not the server's to
     * read either (then the guest cannot read it through the server) changes nothing; anything else
     * leaves a hole, and the watch is incomplete.
     */
    private void missed(ErrnoException e, String path) {
        int errno = e.errno;
        if (errno != ErrnoException.ENOENT && errno != ErrnoException.ENOTDIR && errno != ErrnoException.ELOOP
                && errno != ErrnoException.EACCES && errno != ErrnoException.ENAMETOOLONG) {
            incomplete = "a directory of the folder could not be watched (" + path + ": " + e.getMessage() + ")";
        }
    }

    /** The entries of the directory open as {@code fd}: its directories, and others while {@code others} > 0. */
    private List<LinuxFs.DirEntry> list(int fd, int others) throws ErrnoException {
        List<LinuxFs.DirEntry> all = new ArrayList<>();
        int kept = 0;
        while (true) {
            listing.clear();
            int n = FdCalls.getdents(fd, listing);
            if (n == 0) {
                return all;
            }
            for (LinuxFs.DirEntry d : FdCalls.parseDirents(listing, n)) {
                if (d.name().equals(".") || d.name().equals("..")) {
                    continue;
                }
                boolean directory = d.type() == LinuxFs.DT_DIR || d.type() == LinuxFs.DT_UNKNOWN;
                if (directory || kept++ < others) {
                    all.add(d);
                }
            }
        }
    }


    @Override
    public void close() {
        inotify.close();
    }
}
