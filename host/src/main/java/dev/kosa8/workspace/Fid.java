package dev.kosa8.workspace;

import java.util.concurrent.locks.ReentrantReadWriteLock;

/**
 * One fid of the 9p session: a name the guest kernel holds for a file of the
 * folder. A fid is its path relative to the folder's root, never a host file
 * descriptor kept across requests: every request resolves the path afresh
 * from the root with {@link LinuxFs#openBeneath}, so a directory the guest
 * swaps for a symlink between two requests is refused by the kernel, not
 * followed. Only an opened fid holds a descriptor (of the file it opened,
 * which may since have been renamed or unlinked, as POSIX wants).
 *
 * <p>That descriptor is used under {@link #withFd}, and closed only by
 * {@link #drop} once no request is using it. Requests on one fid run
 * concurrently (a read beside a clunk), and a descriptor closed under a
 * request still holding its number could be reused by any other open in the
 * daemon, another sandbox's folder included, before the request's system call
 * runs: the request would then read, write or truncate that file.
 *
 * <p>Paths are byte strings (one char per byte, see {@link LinuxFs}):
 * {@code ""} is the root, {@code "a/b"} a file two levels down.
 */
final class Fid {
    /** What kind of fid this is. */
    enum Kind { FILE, XATTR }

    /** A system call on the fid's open descriptor. */
    @FunctionalInterface
    interface FdCall<T> {
        T apply(int fd) throws ErrnoException;
    }

    private volatile String path;
    final Kind kind;
    /** Guards {@link #fd}: requests use it under the read lock, {@link #drop} closes it under the write lock. */
    private final ReentrantReadWriteLock fdLock = new ReentrantReadWriteLock();
    /** Open file descriptor, or -1 while the fid is only a name. */
    private int fd = -1;
    /** Once dropped (clunked, removed, replaced) a fid never holds a descriptor again. */
    private boolean dropped;
    /** The open flags the guest opened the fid with, in 9P's own encoding (not the host's), or -1. */
    volatile int openFlags = -1;
    /** The qid type of the file when the fid was made (a directory or not). */
    final byte qidType;
    /** Restored from a snapshot but its file could not be reopened: every use answers ESTALE. */
    volatile boolean stale;
    /**
     * Opened in the held layer: its writes count against the layer's bound ({@link HeldSpace}) wherever its path
     * goes later (removed, moved out: the descriptor still writes the layer's file).
     */
    volatile boolean inHeldLayer;
    /**
     * Restored from a snapshot: the guest may have clunked it quietly just before the checkpoint
     * ({@link QuietClunks}), so a new fid of the same number replaces it instead of being refused.
     */
    volatile boolean restored;
    /**
     * Opened quietly ({@code Tlopenq}: the guest was answered before the host opened it) and the host's open
     * failed with this errno: each use of the descriptor answers it. 0 otherwise.
     */
    volatile int openError;

    Fid(String path, Kind kind, byte qidType) {
        this.path = path;
        this.kind = kind;
        this.qidType = qidType;
    }

    String path() {
        return path;
    }

    /** Follows a rename the server carried out: {@code from} (or a file under it) is now {@code to}. */
    void renamed(String from, String to) {
        String p = path;
        if (p.equals(from)) {
            path = to;
        } else if (p.startsWith(from + "/")) {
            path = to + p.substring(from.length());
        }
    }

    boolean isOpen() {
        fdLock.readLock().lock();
        try {
            return fd >= 0;
        } finally {
            fdLock.readLock().unlock();
        }
    }

    /** Runs {@code call} on the open descriptor, which stays open until it returns; EBADF if not open. */
    <T> T withFd(FdCall<T> call) throws ErrnoException {
        fdLock.readLock().lock();
        try {
            if (fd < 0) {
                int e = openError;
                throw new ErrnoException(e != 0 ? e : ErrnoException.EBADF, "fid not open");
            }
            return call.apply(fd);
        } finally {
            fdLock.readLock().unlock();
        }
    }

    /** Like {@link #withFd}, but null, calling nothing, if the fid is not open; {@code call} must not return null. */
    <T> T withFdIfOpen(FdCall<T> call) throws ErrnoException {
        fdLock.readLock().lock();
        try {
            return fd < 0 ? null : call.apply(fd);
        } finally {
            fdLock.readLock().unlock();
        }
    }

    /**
     * Makes the fid open on {@code newFd}.
     *
     * @return false, leaving {@code newFd} to the caller to close, if the fid is already open or dropped
     */
    boolean open(int newFd, int flags) {
        fdLock.writeLock().lock();
        try {
            if (dropped || fd >= 0) {
                return false;
            }
            fd = newFd;
            openFlags = flags;
            return true;
        } finally {
            fdLock.writeLock().unlock();
        }
    }

    /**
     * Forgets the fid: closes its descriptor once no request uses it. Idempotent.
     *
     * @return whether this call closed a descriptor
     */
    boolean drop() {
        fdLock.writeLock().lock();
        try {
            dropped = true;
            if (fd >= 0) {
                int old = fd;
                fd = -1;
                try {
                    LinuxFs.close(old);
                } catch (ErrnoException ignored) {
                    // nothing to do about a failed close
                }
                return true;
            }
            return false;
        } finally {
            fdLock.writeLock().unlock();
        }
    }

    boolean isDirectory() {
        return (qidType & Qid.QTDIR) != 0;
    }

    static String child(String dir, String name) {
        return dir.isEmpty() ? name : dir + "/" + name;
    }

    static String parent(String path) {
        int slash = path.lastIndexOf('/');
        return slash < 0 ? "" : path.substring(0, slash);
    }

    static String lastName(String path) {
        return path.substring(path.lastIndexOf('/') + 1);
    }
}
