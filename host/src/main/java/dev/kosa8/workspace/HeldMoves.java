package dev.kosa8.workspace;

/**
 * Which renames the server carries out as renames once paths are held ({@link HeldPolicy}): a rename
 * is one system call in one layer, so one that would carry a file across the held layer's edge (into
 * a held unit from the folder or out of one), or carry a directory whose contents the policy would
 * then see differently, is refused with EXDEV. Programs treat EXDEV as "another file system" and
 * copy and delete instead ({@code mv} does), and each file so copied is then classified on its own.
 *
 * <p>The cases refused, each a way around the layer otherwise:
 * <ul>
 *   <li>a file or directory moved into a held unit, or out of one, across layers;</li>
 *   <li>a directory moved with held units beneath it, or onto a directory with held units beneath it
 *       (the units would be left behind, or hidden);</li>
 *   <li>a directory whose path, before or after, has a name the patterns look at above a unit
 *       ({@link HeldPolicy#guards}: {@code evil/ -> .git/} would make {@code evil/hooks} git's hooks);</li>
 *   <li>a symlink moved to where its target leads out of the folder, and a directory moved nearer the
 *       root with such a symlink beneath it (its leading ".."s would then climb further).</li>
 * </ul>
 */
final class HeldMoves {
    private final P9Operations ops;

    HeldMoves(P9Operations ops) {
        this.ops = ops;
    }

    /**
     * Checks the move of {@code from} to {@code to} (paths of the guest's view).
     *
     * @return whether {@code from} is a directory
     * @throws ErrnoException EXDEV for a move refused above, or what looking at {@code from} failed with
     */
    boolean check(String from, String to) throws ErrnoException {
        LinuxFs.Stat st = ops.statPath(from);
        boolean dir = st.isDir();
        String fromUnit = ops.heldUnit(from, dir);
        String toUnit = ops.heldUnit(to, dir);
        if (st.isSymlink() && toUnit == null && ops.holdsSymlinks()
                && HeldPolicy.escapes(to, TreeCopy.readlink(ops.rootFor(from), from))) {
            if (fromUnit == null) {
                throw exdev("a symlink moved to where it leads out of the folder");
            }
            ops.holdAlone(to, HeldPolicy.SYMLINKS);
            return false;
        }
        if (fromUnit != null && toUnit != null) {
            return dir; // both in the held layer: parentFd holds each unit, and the rename happens there
        }
        if (fromUnit != null || toUnit != null) {
            throw exdev("a move across the held layer's edge");
        }
        if (!dir) {
            return false;
        }
        HeldChanges held = ops.held();
        if (held.anyUnder(from) || held.anyUnder(to)) {
            throw exdev("a directory with held files beneath it");
        }
        HeldPolicy policy = held.policy();
        if (policy.guards(from) || policy.guards(to)) {
            throw exdev("a directory the held patterns look into");
        }
        if (policy.holdsSymlinks() && depth(to) < depth(from) && escapingLinkUnder(from, to)) {
            throw exdev("a directory with a symlink that would lead out of the folder from there");
        }
        return true;
    }

    private boolean escapingLinkUnder(String dir, String newDir) throws ErrnoException {
        for (String name : TreeCopy.names(ops.rootFor(dir), dir)) {
            String path = Fid.child(dir, name);
            LinuxFs.Stat st = TreeCopy.statOrNull(ops.rootFor(path), path);
            if (st == null) {
                continue;
            }
            if (st.isSymlink() && HeldPolicy.escapes(Fid.child(newDir, name),
                    TreeCopy.readlink(ops.rootFor(path), path))) {
                return true;
            }
            if (st.isDir() && escapingLinkUnder(path, Fid.child(newDir, name))) {
                return true;
            }
        }
        return false;
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
