package dev.kosa8.agent;

import dev.kosa8.protocol.FileOp;
import dev.kosa8.protocol.Limits;
import dev.kosa8.protocol.Message;
import dev.kosa8.protocol.WatchEvent;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.BooleanSupplier;
import java.util.function.Consumer;

/**
 * A {@link FileOp.Watch}: an inotify instance on a directory, and with {@code recursive} on every directory beneath
 * it, directories made later included (what is already in one made is reported as created, since it came before its
 * watch). inotify's events become {@link WatchEvent}s: IN_CREATE and IN_MOVED_TO are CREATE, IN_MODIFY WRITE,
 * IN_DELETE REMOVE, IN_MOVED_FROM RENAME, IN_ATTRIB CHMOD; a run of the same event on the same path in one read is
 * one event. Bounded: at most {@code maxDirs} directories watched (the rest, and a full kernel queue, IN_Q_OVERFLOW,
 * are reported as OVERFLOW); what the guest kernel queues is its own bound (fs.inotify.max_queued_events). Runs until
 * asked to stop or the directory itself goes.
 */
final class DirWatch implements AutoCloseable {
    static final int MASK = Inotify.IN_MODIFY | Inotify.IN_ATTRIB | Inotify.IN_MOVED_FROM | Inotify.IN_MOVED_TO
            | Inotify.IN_CREATE | Inotify.IN_DELETE | Inotify.IN_DELETE_SELF | Inotify.IN_MOVE_SELF
            | Inotify.IN_ONLYDIR | Inotify.IN_DONT_FOLLOW;

    private final String root;
    private final boolean recursive;
    private final int maxDirs;
    private final Inotify inotify = new Inotify();
    private final Map<Integer, String> dirs = new HashMap<>();
    private final Map<String, Integer> wds = new HashMap<>();
    private int rootWd;
    private boolean rootGone;
    private boolean overflowed;
    /** What the first {@link #run} reports before anything read: an overflow while the watch was set up. */
    private final List<WatchEvent> initial = new ArrayList<>();

    /** Watches {@code op}'s directory: in place when this returns. */
    DirWatch(FileOp.Watch op, int maxDirs) {
        this.root = op.path().length() > 1 && op.path().endsWith("/")
                ? op.path().substring(0, op.path().length() - 1) : op.path();
        this.recursive = op.recursive();
        this.maxDirs = maxDirs;
        try {
            int wd = inotify.add(root, MASK & ~Inotify.IN_DONT_FOLLOW);
            if (wd < 0) {
                throw failure(-wd, root);
            }
            rootWd = wd;
            dirs.put(wd, root);
            wds.put(root, wd);
            if (recursive) {
                addBeneath(root, initial, false);
            }
        } catch (RuntimeException e) {
            inotify.close();
            throw e;
        }
    }

    /** Watched directories now: for tests and the bound. */
    int watched() {
        return dirs.size();
    }

    /**
     * Reads and reports events in batches until {@code stop} says so or the directory itself is gone (its removal
     * or move reported first).
     */
    void run(Consumer<List<WatchEvent>> sink, BooleanSupplier stop) {
        if (!initial.isEmpty()) {
            sink.accept(List.copyOf(initial));
            initial.clear();
        }
        while (!stop.getAsBoolean() && !rootGone) {
            List<WatchEvent> batch = new ArrayList<>();
            inotify.read(200, e -> translate(e, batch));
            if (!batch.isEmpty()) {
                sink.accept(batch);
            }
        }
    }

    private void translate(Inotify.Event e, List<WatchEvent> out) {
        int m = e.mask();
        if ((m & Inotify.IN_Q_OVERFLOW) != 0) {
            add(out, WatchEvent.Kind.OVERFLOW, root);
            return;
        }
        if ((m & Inotify.IN_IGNORED) != 0) {
            String dir = dirs.remove(e.wd());
            if (dir != null) {
                wds.remove(dir, e.wd());
            }
            if (e.wd() == rootWd) {
                rootGone = true;
            }
            return;
        }
        String dir = dirs.get(e.wd());
        if (dir == null) {
            return;
        }
        if ((m & (Inotify.IN_DELETE_SELF | Inotify.IN_MOVE_SELF)) != 0) {
            if (e.wd() == rootWd) {
                add(out, (m & Inotify.IN_DELETE_SELF) != 0 ? WatchEvent.Kind.REMOVE : WatchEvent.Kind.RENAME, root);
                rootGone = true;
            }
            return;
        }
        String path = dir.equals("/") ? "/" + e.name() : dir + "/" + e.name();
        boolean isDir = (m & Inotify.IN_ISDIR) != 0;
        if ((m & Inotify.IN_CREATE) != 0) {
            add(out, WatchEvent.Kind.CREATE, path);
            if (isDir && recursive) {
                addTree(path, out, true);
            }
        } else if ((m & Inotify.IN_MOVED_TO) != 0) {
            add(out, WatchEvent.Kind.CREATE, path);
            if (isDir && recursive) {
                addTree(path, out, false);
            }
        } else if ((m & Inotify.IN_MOVED_FROM) != 0) {
            add(out, WatchEvent.Kind.RENAME, path);
            if (isDir && recursive) {
                dropTree(path);
            }
        } else if ((m & Inotify.IN_DELETE) != 0) {
            add(out, WatchEvent.Kind.REMOVE, path);
        } else if ((m & Inotify.IN_MODIFY) != 0) {
            add(out, WatchEvent.Kind.WRITE, path);
        } else if ((m & Inotify.IN_ATTRIB) != 0) {
            add(out, WatchEvent.Kind.CHMOD, path);
        }
    }

    /** Adds an event unless it repeats the last one, or its path is beyond what the protocol carries. */
    private static void add(List<WatchEvent> out, WatchEvent.Kind kind, String path) {
        if (path.getBytes(StandardCharsets.UTF_8).length > Limits.MAX_SHORT_TEXT) {
            return;
        }
        if (!out.isEmpty() && out.getLast().kind() == kind && out.getLast().path().equals(path)) {
            return;
        }
        out.add(new WatchEvent(kind, path));
    }

    private void addTree(String dir, List<WatchEvent> out, boolean reportContents) {
        if (!watch(dir, out)) {
            return;
        }
        addBeneath(dir, out, reportContents);
    }

    private void addBeneath(String dir, List<WatchEvent> out, boolean reportContents) {
        try (DirectoryStream<Path> entries = Files.newDirectoryStream(Path.of(dir))) {
            for (Path p : entries) {
                if (reportContents) {
                    add(out, WatchEvent.Kind.CREATE, p.toString());
                }
                if (Files.isDirectory(p, LinkOption.NOFOLLOW_LINKS)) {
                    addTree(p.toString(), out, reportContents);
                }
            }
        } catch (IOException | RuntimeException gone) {
            // gone or closed since it was made: its own events say so
        }
    }

    /** Watches one more directory, within the bound; false when it is not watched. */
    private boolean watch(String dir, List<WatchEvent> out) {
        if (wds.containsKey(dir)) {
            return true;
        }
        if (dirs.size() >= maxDirs) {
            overflow(out);
            return false;
        }
        int wd = inotify.add(dir, MASK);
        if (wd == -Inotify.ENOSPC) {
            overflow(out);
            return false;
        }
        if (wd < 0) {
            return false;
        }
        dirs.put(wd, dir);
        wds.put(dir, wd);
        return true;
    }

    /** Reported once per watch: directories beyond the bound are not watched, so their events are lost. */
    private void overflow(List<WatchEvent> out) {
        if (!overflowed) {
            overflowed = true;
            add(out, WatchEvent.Kind.OVERFLOW, root);
        }
    }

    /** A directory moved away: its watches (and its subdirectories') go, their paths no longer being theirs. */
    private void dropTree(String dir) {
        String prefix = dir + "/";
        for (var it = wds.entrySet().iterator(); it.hasNext();) {
            var e = it.next();
            if (e.getKey().equals(dir) || e.getKey().startsWith(prefix)) {
                inotify.remove(e.getValue());
                dirs.remove(e.getValue());
                it.remove();
            }
        }
    }

    static FileOps.Failure failure(int errno, String path) {
        return switch (errno) {
            case Inotify.ENOENT -> new FileOps.Failure(Message.ErrorCode.NOT_FOUND, path + " does not exist");
            case Inotify.ENOTDIR -> new FileOps.Failure(Message.ErrorCode.NOT_DIRECTORY, path + " is not a directory");
            case Inotify.EACCES -> new FileOps.Failure(Message.ErrorCode.PERMISSION, "permission denied: " + path);
            case Inotify.ENAMETOOLONG -> new FileOps.Failure(Message.ErrorCode.TOO_LONG, path + " is too long");
            default -> new FileOps.Failure(Message.ErrorCode.LIMIT, "the guest allows no more inotify watches "
                    + "(fs.inotify.max_user_watches)");
        };
    }

    @Override
    public void close() {
        inotify.close();
    }
}
