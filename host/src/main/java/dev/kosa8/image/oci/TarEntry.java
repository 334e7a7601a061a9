package dev.kosa8.image.oci;

import java.util.Map;

/**
 * One member of a tar archive as {@link TarReader} read it, its long names and
 * PAX records applied.
 *
 * @param path     as written in the archive (not yet checked: {@link RootTree} refuses what escapes the root)
 * @param type     what the member is
 * @param mode     permission bits with set-uid, set-gid and sticky ({@code 07777})
 * @param uid      owner
 * @param gid      group
 * @param size     bytes of content that follow (regular files only; 0 for every other type)
 * @param linkName a symbolic link's target, or the member a hard link names
 * @param devMajor a device node's major number
 * @param devMinor a device node's minor number
 * @param xattrs   extended attributes by name, their values as bytes, from PAX {@code SCHILY.xattr.*} or
 *                 {@code LIBARCHIVE.xattr.*} records ({@link PaxHeader})
 */
public record TarEntry(String path, Type type, int mode, long uid, long gid, long size, String linkName,
                       int devMajor, int devMinor, Map<String, byte[]> xattrs) {
    /** The member types an image layer may hold. */
    public enum Type { FILE, DIRECTORY, SYMLINK, HARDLINK, CHAR_DEVICE, BLOCK_DEVICE, FIFO }

    public TarEntry {
        xattrs = Map.copyOf(xattrs);
        if (size < 0 || uid < 0 || gid < 0) {
            throw new IllegalArgumentException("negative size or owner in " + path);
        }
    }
}
