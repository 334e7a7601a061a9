package dev.kosa8.protocol;

/**
 * What one guest file is, as {@link FileOp.Stat} and {@link FileOp.ListDir} report it.
 *
 * @param path          the file's absolute path in the guest
 * @param type          what kind of file
 * @param size          its size in bytes (a link's: its target's length)
 * @param mode          its permission bits, set-id and sticky bits included ({@code st_mode & 07777})
 * @param uid           its owner's id
 * @param gid           its group's id
 * @param owner         its owner's name from the guest's {@code /etc/passwd}; empty when it has none
 * @param group         its group's name from the guest's {@code /etc/group}; empty when it has none
 * @param mtimeMillis   its modification time, milliseconds since the epoch
 * @param symlinkTarget a symbolic link's target as written in the link; empty for anything else
 */
public record FileStat(String path, Type type, long size, int mode, int uid, int gid, String owner, String group,
                       long mtimeMillis, String symlinkTarget) {
    /** A name: a user's or a group's. */
    public static final int MAX_NAME = 256;

    public FileStat {
        path = Limits.checkPath(path);
        if (size < 0) {
            throw new ProtocolException("negative file size");
        }
        FileOp.checkMode(mode);
        owner = Limits.checkText("owner", owner, MAX_NAME);
        group = Limits.checkText("group", group, MAX_NAME);
        symlinkTarget = Limits.checkText("symlink target", symlinkTarget, Limits.MAX_SHORT_TEXT);
        Limits.checkNoNul("symlink target", symlinkTarget);
        if (type == null) {
            throw new ProtocolException("no file type");
        }
    }

    /** The last part of the path ("/" for the root). */
    public String name() {
        int slash = path.lastIndexOf('/', path.length() - 2);
        String n = path.substring(slash + 1);
        return n.endsWith("/") && n.length() > 1 ? n.substring(0, n.length() - 1) : (n.isEmpty() ? "/" : n);
    }

    /** What kind of file. */
    public enum Type {
        FILE, DIRECTORY, SYMLINK, FIFO, SOCKET, CHAR_DEVICE, BLOCK_DEVICE, OTHER
    }
}
