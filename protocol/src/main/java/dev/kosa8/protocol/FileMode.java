package dev.kosa8.protocol;

import java.nio.file.attribute.PosixFilePermission;
import java.util.EnumSet;
import java.util.Set;

/**
 * The permission bits that {@link Message.PutFile} and {@link Message.FileInfo}
 * carry, converted to and from Java's permission sets, the same way on both
 * sides of the boundary. Only the nine rwx bits: set-id and sticky bits do not
 * travel.
 */
public final class FileMode {
    private FileMode() {
    }

    /** {@link PosixFilePermission}'s order is owner, group, others, each read, write, execute: bit 8 down to 0. */
    public static int of(Set<PosixFilePermission> perms) {
        int m = 0;
        for (PosixFilePermission p : perms) {
            m |= 1 << (8 - p.ordinal());
        }
        return m;
    }

    public static Set<PosixFilePermission> permissions(int mode) {
        Set<PosixFilePermission> set = EnumSet.noneOf(PosixFilePermission.class);
        for (PosixFilePermission p : PosixFilePermission.values()) {
            if ((mode & (1 << (8 - p.ordinal()))) != 0) {
                set.add(p);
            }
        }
        return set;
    }
}
