package dev.kosa8.workspace;

/**
 * How renames are carried out once paths are held ({@link HeldPolicy}): a rename is one system call
 * in one layer. A file or symlink moved across the held layer's edge (into a held unit from the
 * folder, or out of one) is copied to the other layer and removed from its own ({@link #across}):
 * {@code sed -i} and Python's {@code os.replace} write a file beside it and rename it into place.
 * A directory that would cross the edge, or whose contents the policy would then see differently,
 * is refused with EXDEV. Programs treat EXDEV as "another file system" and copy and delete
 * instead ({@code mv} does), and each file so copied is then classified on its own.
 *
 * <p>The cases refused, each a way around the layer otherwise:
 * <ul>
 *   <li>a directory moved into a held unit, or out of one, across layers;</li>
 *   <li>a directory moved with held units beneath it, or onto a directory with held units beneath it
 *       (the units would be left behind, or hidden), or with a path beneath it that the policy holds
 *       (the user's own hooks would leave their place: {@code mv proj aside && git init proj});</li>
 *   <li>a directory whose path, before or after, has a name the patterns look at above a unit
 *       ({@link HeldPolicy#guards}: {@code evil/ -> .git/} would make {@code evil/hooks} git's hooks), or
 *       that moves out from under an unless-under name or in under one ({@code node_modules});</li>
 *   <li>a directory moved nearer the root with a symlink beneath it whose leading ".."s would then
 *       climb out of the folder (a symlink moved on its own to such a place is held there).</li>
 * </ul>
 */
final class HeldMoves {
    private final P9Operations ops;

    HeldMoves(P9Operations ops) {
        this.ops = ops;
    }

    /** How a move is carried out. */
    enum Way {
        /** renameat(2) of a file or symlink in one layer */
        RENAME_FILE,
        /** renameat(2) of a directory in one layer */
        RENAME_DIRECTORY,
        /** a file or symlink into a held unit or out of one: copied to the other layer, then removed ({@link #across}) */
        ACROSS
    }

    /**
     * Checks the move of {@code from} to {@code to} (paths of the guest's view).
     *
     * @throws ErrnoException EXDEV for a move refused above, or what looking at {@code from} failed with
     */
    Way check(String from, String to) throws ErrnoException {
        LinuxFs.Stat st = ops.statPath(from);
        boolean dir = st.isDir();
        String fromUnit = ops.roots().heldUnit(from, dir);
        String toUnit = ops.roots().heldUnit(to, dir);
        if (st.isSymlink() && toUnit == null
                && ops.roots().holdsLink(to, TreeCopy.readlink(ops.roots().rootFor(from), from))) {
            ops.roots().holdAlone(to, HeldPolicy.SYMLINKS);
            return fromUnit == null ? Way.ACROSS : Way.RENAME_FILE;
        }
        if (fromUnit != null && toUnit != null) {
            // both in the held layer: parentFd holds each unit, and the rename happens there
            return dir ? Way.RENAME_DIRECTORY : Way.RENAME_FILE;
        }
        if (fromUnit != null || toUnit != null) {
            if (dir || !(st.isRegular() || st.isSymlink())) {
                throw exdev("a directory moved across the held layer's edge");
            }
            return Way.ACROSS; // a file: sed -i and os.replace rename into place, and know no EXDEV
        }
        if (!dir) {
            return Way.RENAME_FILE;
        }
        HeldChanges held = ops.roots().held();
        if (held.anyUnder(from) || held.anyUnder(to)) {
            throw exdev("a directory with held files beneath it");
        }
        HeldPolicy policy = held.policy();
        if (policy.guards(from, to)) {
            throw exdev("a directory the held patterns look into");
        }
        String why = blocker(from, to, policy, policy.holdsSymlinks() && depth(to) < depth(from));
        if (why != null) {
            throw exdev(why);
        }
        return Way.RENAME_DIRECTORY;
    }

    /**
     * Why the directory {@code dir} may not be moved to {@code newDir} as a whole, or null: a path
     * beneath it that the policy holds (moving it would take the user's own held file from its
     * place: a repository moved aside with its hooks, for a new one the guest makes there), or,
     * with {@code links}, a symlink whose target would lead out of the folder from its new place.
     */
    private String blocker(String dir, String newDir, HeldPolicy policy, boolean links) throws ErrnoException {
        for (String name : TreeCopy.names(ops.roots().rootFor(dir), dir)) {
            String path = Fid.child(dir, name);
            LinuxFs.Stat st = TreeCopy.statOrNull(ops.roots().rootFor(path), path);
            if (st == null) {
                continue;
            }
            if (policy.classify(path, st.isDir()) != null) {
                return "a directory with a held path beneath it (" + path + ")";
            }
            if (links && st.isSymlink() && HeldPolicy.escapes(Fid.child(newDir, name),
                    TreeCopy.readlink(ops.roots().rootFor(path), path))) {
                return "a directory with a symlink that would lead out of the folder from there";
            }
            if (st.isDir()) {
                String why = blocker(path, Fid.child(newDir, name), policy, links);
                if (why != null) {
                    return why;
                }
            }
        }
        return null;
    }

    /**
     * Moves file or symlink {@code from} to {@code to} across the held layer's edge: copied under a
     * temporary name beside {@code to} in its layer, renamed over it there (so {@code to} is the old
     * file or the new one, as after a rename), then {@code from} removed from its layer. A file the
     * folder gets this way is one at a path nothing holds; one the layer gets is held.
     */
    void across(String from, String to) throws ErrnoException {
        int fromRoot = ops.roots().rootForRemoval(from, false);
        int toRoot = ops.roots().rootForChange(to, false);
        String temp = Fid.child(Fid.parent(to), ".kosa8-move-" + Long.toHexString(System.nanoTime()));
        HeldChanges held = ops.roots().held();
        if (held != null && toRoot == held.treeFd()) {
            held.space().chargeCopyOf(fromRoot, from); // a file moved into the held layer is written there: ENOSPC first
        }
        if (!TreeCopy.copy(fromRoot, from, toRoot, temp)) {
            throw new ErrnoException(ErrnoException.ENOENT, "move");
        }
        int d = ops.parentFd(to, false);
        try {
            NameCalls.renameAt(d, Fid.lastName(temp), d, Fid.lastName(to));
        } catch (ErrnoException e) {
            TreeCopy.remove(toRoot, temp);
            throw e;
        } finally {
            LinuxFs.close(d);
        }
        int s = ops.parentFdForRemoval(from, false); // the move's end: never refused for room
        try {
            NameCalls.unlinkAt(s, Fid.lastName(from), 0);
        } finally {
            LinuxFs.close(s);
        }
    }

    private static int depth(String path) {
        if (path.isEmpty()) {
            return 0;
        }
        int d = 1;
        for (int i = 0; i < path.length(); i++) {
            if (path.charAt(i) == '/') {
                d++;
            }
        }
        return d;
    }

    private static ErrnoException exdev(String why) {
        return new ErrnoException(ErrnoException.EXDEV, "rename refused: " + why);
    }
}
