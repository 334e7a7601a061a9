package dev.kosa8.workspace;

/**
 * The one check every name from the guest passes before it reaches a system
 * call: a single path component. A name with a '/' would be a path, "." and
 * ".." would step in place or out of the directory, and an empty name or one
 * longer than NAME_MAX means nothing on Linux. (The decoder has already
 * refused NUL bytes.)
 */
final class Names {
    static final int NAME_MAX = 255;

    private Names() {
    }

    /** @throws ErrnoException EINVAL for a bad name, ENAMETOOLONG for a long one */
    static String component(String name) throws ErrnoException {
        if (name.isEmpty() || name.equals(".") || name.equals("..") || name.indexOf('/') >= 0
                || name.indexOf('\0') >= 0) {
            throw new ErrnoException(ErrnoException.EINVAL, "name");
        }
        if (name.length() > NAME_MAX) {
            throw new ErrnoException(ErrnoException.ENAMETOOLONG, "name");
        }
        return name;
    }
}
