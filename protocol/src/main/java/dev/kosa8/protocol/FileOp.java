package dev.kosa8.protocol;

/**
 * A file operation in the guest, carried by {@link Message.FileRequest} (docs/api.md, "Files"). Every path is an
 * absolute guest path without NUL, at most {@link Limits#MAX_SHORT_TEXT} bytes ({@link Limits#checkPath}). The
 * agent answers on the request's channel:
 * <ul>
 *   <li>{@link Stat}, {@link MakeDir}, {@link Rename}: one {@link Message.FileEntries} with the file's stat, then
 *       {@link Message.Exited} 0;</li>
 *   <li>{@link ListDir}: {@link Message.FileEntries} in batches, at most {@code maxEntries} entries in all, then
 *       Exited 0;</li>
 *   <li>{@link Remove}: Exited 0;</li>
 *   <li>{@link Watch}: {@link Message.Started} once the watch is in place, then {@link Message.WatchEvents} until the
 *       host sends a {@link Message.Signal} (or hangs up), then Exited 0;</li>
 * </ul>
 * or {@link Message.Failed} with an errno-like {@link Message.ErrorCode} ({@code NOT_FOUND}, {@code EXISTS},
 * {@code NOT_DIRECTORY}, ...).
 */
public sealed interface FileOp {
    /** The most entries one listing may ask for. */
    int MAX_LIST_ENTRIES = 100_000;
    /** The deepest listing: 1 is the directory's own entries. */
    int MAX_DEPTH = 64;

    /** What one file is; {@code follow}: of a symbolic link's target rather than of the link. */
    record Stat(String path, boolean follow) implements FileOp {
        public Stat {
            path = Limits.checkPath(path);
        }
    }

    /**
     * The entries of a directory, each as a stat (links not followed), down to {@code depth} levels (1: its own
     * entries), directories before their contents, at most {@code maxEntries}; symbolic links to directories are
     * not descended into.
     */
    record ListDir(String path, int depth, int maxEntries) implements FileOp {
        public ListDir {
            path = Limits.checkPath(path);
            if (depth < 1 || depth > MAX_DEPTH) {
                throw new ProtocolException("depth " + depth + " is out of range 1.." + MAX_DEPTH);
            }
            if (maxEntries < 1 || maxEntries > MAX_LIST_ENTRIES) {
                throw new ProtocolException("maxEntries " + maxEntries + " is out of range 1.." + MAX_LIST_ENTRIES);
            }
        }
    }

    /**
     * Makes a directory and its missing parents (mkdir -p), each with {@code mode}, owned by the request's user.
     * {@code existOk}: a directory already there is no error (else: {@code EXISTS}).
     */
    record MakeDir(String path, int mode, boolean existOk) implements FileOp {
        public MakeDir {
            path = Limits.checkPath(path);
            checkMode(mode);
        }
    }

    /** Removes a file, a link or an empty directory; {@code recursive}: a directory and all in it (rm -r). */
    record Remove(String path, boolean recursive) implements FileOp {
        public Remove {
            path = Limits.checkPath(path);
        }
    }

    /** Renames (moves) {@code from} to {@code to}; {@code replace}: a file already at {@code to} is replaced. */
    record Rename(String from, String to, boolean replace) implements FileOp {
        public Rename {
            from = Limits.checkPath(from);
            to = Limits.checkPath(to);
        }
    }

    /** Watches a directory (inotify), and with {@code recursive} every directory beneath it, made later too. */
    record Watch(String path, boolean recursive) implements FileOp {
        public Watch {
            path = Limits.checkPath(path);
        }
    }

    static void checkMode(int mode) {
        if ((mode & ~07777) != 0) {
            throw new ProtocolException("mode " + Integer.toOctalString(mode) + " has bits beyond 07777");
        }
    }
}
