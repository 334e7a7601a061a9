package dev.kosa8.files;

/**
 * How {@link GuestFiles#write} writes a file.
 *
 * @param mode        the file's permission bits (only rwx travel, as {@code kosa8 cp}'s)
 * @param user        who owns the file (and the parents made): a name or uid in the guest; empty for root, and then a
 *                    file replaced keeps its owner
 * @param makeParents whether missing parent directories are made (mkdir -p), owned by {@code user}
 */
public record WriteOptions(int mode, String user, boolean makeParents) {
    public static final WriteOptions DEFAULT = new WriteOptions(0644, "", true);

    public WriteOptions {
        user = user == null ? "" : user;
        if ((mode & ~0777) != 0) {
            throw new FileOpException(dev.kosa8.protocol.Message.ErrorCode.INVALID,
                    "mode " + Integer.toOctalString(mode) + " has bits beyond 0777");
        }
    }
}
