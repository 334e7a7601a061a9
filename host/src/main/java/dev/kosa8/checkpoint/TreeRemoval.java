package dev.kosa8.checkpoint;

import static dev.kosa8.checkpoint.Posix.AT_REMOVEDIR;
import static dev.kosa8.checkpoint.Posix.O_DIRECTORY;
import static dev.kosa8.checkpoint.Posix.O_RDONLY;

import java.io.IOException;
import java.nio.file.Path;

/**
 * Removing a tree a guest may have arranged: by directory descriptor, every entry opened with {@code
 * O_NOFOLLOW} ({@link Access}), so a symlink is removed itself and nothing it points to is touched, and a
 * directory its owner made unreadable or unsearchable ({@code chmod 000} through the folder) is opened all
 * the same through an {@code O_PATH} descriptor of that very inode. A rewind removes what a checkpoint did
 * not have with it ({@link Restorer}); a fork that failed takes its folder back with it ({@code
 * daemon.ForkFolder}).
 */
public final class TreeRemoval {
    private TreeRemoval() {
    }

    /**
     * Deletes everything in {@code folder}, and {@code folder} itself if {@code itself}. The folder is named by
     * its real path (the caller resolved it when it made or chose it); it is opened without following a symlink
     * in its last component, so a folder swapped for a link since is refused (ELOOP or ENOTDIR), not followed.
     * A folder that is gone is nothing to do.
     *
     * @return how many entries were removed
     */
    public static long empty(Path folder, boolean itself) throws IOException {
        Path abs = folder.toAbsolutePath();
        int parent = Posix.open(abs.getParent().toString(), O_RDONLY | O_DIRECTORY);
        try {
            String name = abs.getFileName().toString();
            Posix.Stat st = Posix.statAtOrNull(parent, name);
            if (st == null) {
                return 0;
            }
            if (!st.isDir()) {
                throw new IOException(folder + " is no longer a directory; left as it is");
            }
            long removed = emptyDirectory(parent, name);
            if (itself) {
                Posix.unlinkAt(parent, name, AT_REMOVEDIR);
                removed++;
            }
            return removed;
        } finally {
            Posix.close(parent);
        }
    }

    /** Removes one entry of {@code dirFd}: a directory with all it holds; a symlink itself. Returns how many. */
    static long remove(int dirFd, String name, Posix.Stat st) throws PosixException {
        if (!st.isDir()) {
            Posix.unlinkAt(dirFd, name, 0);
            return 1;
        }
        long removed = emptyDirectory(dirFd, name);
        Posix.unlinkAt(dirFd, name, AT_REMOVEDIR);
        return removed + 1;
    }

    /** Removes all that directory {@code name} of {@code dirFd} holds, made readable and writable first. */
    private static long emptyDirectory(int dirFd, String name) throws PosixException {
        Access.Opened d = Access.openDir(dirFd, name);
        long removed = 0;
        try {
            Posix.Stat self = Posix.stat(d.fd());
            if ((self.permissions() & 0700) != 0700) {
                Posix.fchmod(d.fd(), self.permissions() | 0700);
            }
            for (String child : Posix.list(d.fd())) {
                Posix.Stat c = Posix.statAtOrNull(d.fd(), child);
                if (c != null) {
                    removed += remove(d.fd(), child, c);
                }
            }
        } finally {
            Posix.close(d.fd());
        }
        return removed;
    }
}
