package dev.kosa8.workspace;

/**
 * One fid of the 9p session: a name the guest kernel holds for a file of the
 * folder. A fid is its path relative to the folder's root, never a host file
 * descriptor kept across requests: every request resolves the path afresh
 * from the root with {@link LinuxFs#openBeneath}, so a directory the guest
 * swaps for a symlink between two requests is refused by the kernel, not
 * followed. Only an opened fid holds a descriptor (of the file it opened,
 * which may since have been renamed or unlinked, as POSIX wants).
 *
 * <p>Paths are byte strings (one char per byte, see {@link LinuxFs}):
 * {@code ""} is the root, {@code "a/b"} a file two levels down.
 */
final class Fid {
    /** What kind of fid this is. */
    enum Kind { FILE, XATTR }

    private volatile String path;
    final Kind kind;
    /** Open file descriptor, or -1 while the fid is only a name. */
    volatile int fd = -1;
    /** The Linux open flags the guest opened the fid with, or -1. */
    volatile int openFlags = -1;
    /** The qid type of the file when the fid was made (a directory or not). */
    final byte qidType;
    /** Restored from a snapshot but its file could not be reopened: every use answers ESTALE. */
    volatile boolean stale;

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
        return fd >= 0;
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
