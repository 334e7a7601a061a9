package dev.kosa8.checkpoint;

import static dev.kosa8.checkpoint.Posix.EACCES;
import static dev.kosa8.checkpoint.Posix.O_DIRECTORY;
import static dev.kosa8.checkpoint.Posix.O_NOFOLLOW;
import static dev.kosa8.checkpoint.Posix.O_NONBLOCK;
import static dev.kosa8.checkpoint.Posix.O_PATH;
import static dev.kosa8.checkpoint.Posix.O_RDONLY;

/**
 * Opening a directory or file in the folder even when its owner has taken
 * away their own read or search permission (a guest may {@code chmod 000}
 * anything it made, and everything in the folder belongs to the daemon's
 * user): on EACCES the owner's bits are added for the moment through an
 * {@code O_PATH} descriptor of that very inode, never by name again. A
 * directory's mode is put back by the caller when it is done inside; a file's
 * at once, as an open descriptor keeps its read access. Entries that belong to
 * someone else stay refused (chmod fails with EPERM; the EACCES is reported).
 *
 * <p>{@code O_NOFOLLOW} everywhere: a symlink is never opened, and with
 * {@code O_DIRECTORY} nothing but a real directory is entered.
 */
final class Access {
    private Access() {
    }

    /**
     * An open descriptor and, for a directory whose mode had to be changed to open it, the mode to put back
     * ({@code -1} if untouched). {@code touched} says a chmod happened (and moved the ctime).
     */
    record Opened(int fd, int modeToRestore, boolean touched) {
    }

    /** Opens directory {@code name} of {@code parentFd} for listing and for *at calls inside. */
    static Opened openDir(int parentFd, String name) throws PosixException {
        try {
            return new Opened(Posix.openAt(parentFd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW, 0), -1, false);
        } catch (PosixException e) {
            if (e.errno != EACCES) {
                throw e;
            }
            int p = Posix.openAt(parentFd, name, O_PATH | O_DIRECTORY | O_NOFOLLOW, 0);
            try {
                return reopenDirWithPermission(p, e);
            } finally {
                Posix.close(p);
            }
        }
    }

    /** Opens the directory an {@code O_PATH} descriptor refers to (the folder itself), as {@link #openDir}. */
    static Opened reopenDir(int pathFd) throws PosixException {
        try {
            return new Opened(Posix.reopen(pathFd, O_RDONLY | O_DIRECTORY), -1, false);
        } catch (PosixException e) {
            if (e.errno != EACCES) {
                throw e;
            }
            return reopenDirWithPermission(pathFd, e);
        }
    }

    private static Opened reopenDirWithPermission(int pathFd, PosixException refused) throws PosixException {
        int mode = Posix.stat(pathFd).permissions();
        try {
            Posix.chmodPathFd(pathFd, mode | 0700);
        } catch (PosixException e) {
            throw refused;
        }
        try {
            return new Opened(Posix.reopen(pathFd, O_RDONLY | O_DIRECTORY), mode, true);
        } catch (PosixException e) {
            putBack(pathFd, mode);
            throw e;
        }
    }

    /**
     * Opens regular file {@code name} for reading. {@code O_NONBLOCK} so that a FIFO swapped in since the stat
     * is not waited on; the caller checks the type on the descriptor.
     */
    static Opened openFile(int parentFd, String name) throws PosixException {
        try {
            return new Opened(Posix.openAt(parentFd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK, 0), -1, false);
        } catch (PosixException e) {
            if (e.errno != EACCES) {
                throw e;
            }
            int p = Posix.openAt(parentFd, name, O_PATH | O_NOFOLLOW, 0);
            try {
                Posix.Stat st = Posix.stat(p);
                if (!st.isRegular()) {
                    throw e;
                }
                int mode = st.permissions();
                try {
                    Posix.chmodPathFd(p, mode | 0400);
                } catch (PosixException chmod) {
                    throw e;
                }
                int fd;
                try {
                    fd = Posix.reopen(p, O_RDONLY | O_NONBLOCK);
                } catch (PosixException reopen) {
                    putBack(p, mode);
                    throw reopen;
                }
                try {
                    putBack(p, mode);
                } catch (PosixException chmod) {
                    Posix.close(fd);
                    throw chmod;
                }
                return new Opened(fd, -1, true);
            } finally {
                Posix.close(p);
            }
        }
    }

    private static void putBack(int pathFd, int mode) throws PosixException {
        Posix.chmodPathFd(pathFd, mode);
    }
}
