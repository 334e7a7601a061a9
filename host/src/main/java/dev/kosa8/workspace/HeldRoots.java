package dev.kosa8.workspace;

/**
 * Which of the two roots a path of the folder resolves beneath, for {@link
 * P9Operations} and the request families beside it: the folder itself, or
 * the held layer's tree for a path in a held unit (docs/workspace.md, "What
 * can reach the host"). A change the held policy covers has its unit copied
 * into the held layer first, so it lands there and not in the folder. Paths
 * are resolved beneath either root by the same rules, stated at the top of
 * {@link P9Operations}.
 */
final class HeldRoots {
    private final int rootFd;
    /** The held layer, or null when nothing is held. */
    private final HeldChanges held;

    HeldRoots(int rootFd, HeldChanges held) {
        this.rootFd = rootFd;
        this.held = held;
    }

    /**
     * The root a path is resolved beneath: the held layer's tree for a path in a held unit, else the
     * folder. Both are resolved by the same rules; a path in a unit the guest deleted is simply
     * missing from the tree.
     */
    int rootFor(String path) {
        HeldChanges h = held;
        if (h == null || h.isEmpty() || h.unitOf(path) == null) {
            return rootFd;
        }
        return h.treeFd();
    }

    /**
     * The root for a change at {@code path}: as {@link #rootFor}, but a path the policy holds has
     * its unit copied into the held layer first, so the change lands there and not in the folder.
     *
     * @param directory whether the path is, or is to be made, a directory
     */
    int rootForChange(String path, boolean directory) throws ErrnoException {
        return rootFor(path, directory, true);
    }

    /**
     * The root for removing {@code path} (or moving it away): as {@link #rootForChange}, but a unit held for it is
     * not counted against the held layer's bound: a removal needs no room and is never refused for it.
     */
    int rootForRemoval(String path, boolean directory) throws ErrnoException {
        return rootFor(path, directory, false);
    }

    private int rootFor(String path, boolean directory, boolean bounded) throws ErrnoException {
        HeldChanges h = held;
        if (h == null) {
            return rootFd;
        }
        if (h.unitOf(path) != null) {
            return h.treeFd();
        }
        HeldPolicy.Match m = classify(h, path, directory);
        if (m == null) {
            return rootFd;
        }
        h.hold(rootFd, m.unit(), m.className(), bounded);
        return h.treeFd();
    }

    /**
     * The root for a new entry at {@code path} (made, linked, or renamed to): as {@link #rootForChange}, the entry
     * counted against the held layer's bound when it lands there ({@link HeldSpace}; ENOSPC past it). A removal
     * or a change in place takes {@link #rootForChange}: it never needs room.
     */
    int rootForNew(String path, boolean directory) throws ErrnoException {
        int root = rootForChange(path, directory);
        HeldChanges h = held;
        if (h != null && root == h.treeFd()) {
            h.space().chargeEntry();
        }
        return root;
    }

    /**
     * The policy's unit for a change at {@code path}; a unit held only when it is no directory (a
     * {@code .git} file) is none where the folder has a directory there (its repository, which a
     * file cannot replace: the change fails in the folder as it would).
     */
    private HeldPolicy.Match classify(HeldChanges h, String path, boolean directory) {
        HeldPolicy.Match m = h.policy().classify(path, directory);
        if (m != null && m.onlyNonDirectory()) {
            try {
                LinuxFs.Stat st = TreeCopy.statOrNull(rootFd, m.unit());
                if (st != null && st.isDir()) {
                    return null;
                }
            } catch (ErrnoException e) {
                return m;
            }
        }
        return m;
    }

    /** The held unit a change at {@code path} falls in (held already, or by the policy), or null. */
    String heldUnit(String path, boolean directory) {
        HeldChanges h = held;
        if (h == null) {
            return null;
        }
        HeldChanges.Unit u = h.unitOf(path);
        if (u != null) {
            return u.path();
        }
        HeldPolicy.Match m = classify(h, path, directory);
        return m == null ? null : m.unit();
    }

    /** Holds {@code path} as a unit of {@code className} of its own (a symlink leading out of the folder). */
    void holdAlone(String path, String className) throws ErrnoException {
        if (held != null && held.unitOf(path) == null) {
            held.hold(rootFd, path, className);
        }
    }

    /** Whether the guest's symlink at {@code path} to {@code target} is held ({@link HeldPolicy#holdsLink}). */
    boolean holdsLink(String path, String target) {
        return held != null && held.policy().holdsLink(path, target);
    }

    HeldChanges held() {
        return held;
    }
}
