package dev.kosa8.workspace;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;

/**
 * Applies one folder's changes to another ({@code kosa8 adopt}: a fork's, into the folder it was forked from),
 * step by step, with the rules the folder's server applies to a guest's changes: every path resolved beneath its
 * root with no symlink followed ({@link LinuxFs#openBeneath}), and a change to a path the target's held policy
 * covers put in its held layer to be reviewed, not in the folder ({@link HeldRoots}, docs/workspace.md). Each
 * file or symlink is put in place whole or not at all ({@link TreeCopy#replace}).
 *
 * <p>The caller chooses the steps (which changes, in which order: {@code checkpoint.AdoptPlan}) and keeps both
 * folders still meanwhile (their servers paused).
 */
public final class FolderAdopter {
    /** What one step does at its path. */
    public enum Op {
        /** removes what is there, a directory with everything under it */
        REMOVE,
        /** puts the source's file or symlink there, in place of whatever is there */
        PLACE,
        /** makes a directory there (in place of a file or symlink) with the mode given */
        MKDIR,
        /** sets the permission bits of what is there */
        CHMOD
    }

    /**
     * One change: {@code path} relative to both folders, as bytes (one char per byte, as every path of this
     * package); {@code mode} for {@link Op#MKDIR} and {@link Op#CHMOD}.
     */
    public record Step(String path, Op op, int mode) {
    }

    /**
     * What was done: the paths applied to the folder, the held units that received a change (each to be
     * reviewed with {@code kosa8 review}), and the paths left alone, each with why; paths as text, for people.
     */
    public record Outcome(List<String> applied, List<String> held, List<String> skipped) {
    }

    private FolderAdopter() {
    }

    /**
     * Applies {@code steps} from folder {@code source} to folder {@code target}, holding what {@code held} (the
     * target's held layer; null for none) covers; with {@code dryRun}, changes nothing and says what it would do.
     */
    public static Outcome apply(Path source, Path target, List<Step> steps, HeldChanges held, boolean dryRun) {
        int from = HeldChanges.openFolder(source);
        try {
            int to = HeldChanges.openFolder(target);
            try {
                return apply(from, to, steps, new HeldRoots(to, held), held, dryRun);
            } finally {
                LinuxFs.closeQuietly(to);
                if (held != null) {
                    held.space().forget(); // the user's adopt wrote the layer: measured again at the next need
                }
            }
        } finally {
            LinuxFs.closeQuietly(from);
        }
    }

    private static Outcome apply(int from, int to, List<Step> steps, HeldRoots roots, HeldChanges held,
                                 boolean dryRun) {
        List<String> applied = new ArrayList<>();
        Set<String> heldUnits = new LinkedHashSet<>();
        Set<String> ours = new java.util.HashSet<>(); // units this adoption holds (a held unit of the target's is not)
        List<String> skipped = new ArrayList<>();
        List<String> heldPaths = new ArrayList<>(); // changed in the held layer, which no watch sees
        for (Step s : steps) {
            String path = s.path();
            try {
                if (!validPath(path)) {
                    skipped.add(text(path) + ": not a path inside the folder");
                    continue;
                }
                LinuxFs.Stat src = s.op() == Op.PLACE ? TreeCopy.statOrNull(from, path) : null;
                if (s.op() == Op.PLACE && (src == null || !(src.isRegular() || src.isSymlink()))) {
                    skipped.add(text(path) + ": changed in the source while adopting (no longer a file or symlink)");
                    continue;
                }
                HeldChanges.Unit own = held == null ? null : held.unitOf(path);
                if (own != null && !ours.contains(own.path())) {
                    // the target holds this unit already (its guest's change, or an earlier adopt's): the fork's
                    // version would replace it unseen
                    skipped.add(text(path) + ": the target already holds a change at " + text(own.path())
                            + " (its guest's, or an earlier adopt's); review that first (kosa8 review)");
                    continue;
                }
                boolean escaping = src != null && src.isSymlink()
                        && roots.holdsLink(path, TreeCopy.readlink(from, path))
                        && roots.heldUnit(path, false) == null;
                if (dryRun) {
                    String unit = escaping ? path : roots.heldUnit(path, s.op() == Op.MKDIR);
                    if (unit == null) {
                        applied.add(text(path));
                    } else {
                        ours.add(unit);
                        heldUnits.add(text(unit));
                    }
                    continue;
                }
                if (escaping) {
                    roots.holdAlone(path, HeldPolicy.SYMLINKS); // a host program following it would leave the folder
                }
                int root = s.op() == Op.REMOVE ? roots.rootForRemoval(path, false)
                        : roots.rootForChange(path, s.op() == Op.MKDIR);
                step(from, root, s);
                if (root == to) {
                    applied.add(text(path));
                } else {
                    ours.add(held.unitOf(path).path());
                    heldUnits.add(text(held.unitOf(path).path()));
                    heldPaths.add(path);
                }
            } catch (ErrnoException e) {
                skipped.add(text(path) + ": " + e.getMessage());
            }
        }
        if (held != null) {
            held.tellChanged(heldPaths); // a caching guest sees the held versions, as it sees the folder's changes
        }
        return new Outcome(applied, List.copyOf(heldUnits), skipped);
    }

    private static void step(int from, int root, Step s) throws ErrnoException {
        String path = s.path();
        switch (s.op()) {
            case REMOVE -> TreeCopy.remove(root, path);
            case PLACE -> TreeCopy.replace(from, root, path, ".kosa8-adopt-");
            case MKDIR -> {
                LinuxFs.Stat there = TreeCopy.statOrNull(root, path);
                if (there != null && !there.isDir()) {
                    TreeCopy.remove(root, path);
                    there = null;
                }
                if (there == null) {
                    TreeCopy.makeParents(root, path);
                    int d = LinuxFs.openBeneath(root, Fid.parent(path), LinuxFs.O_PATH | LinuxFs.O_DIRECTORY, 0);
                    try {
                        NameCalls.mkdirAt(d, Fid.lastName(path), 0700);
                    } finally {
                        LinuxFs.close(d);
                    }
                }
                TreeCopy.chmod(root, path, s.mode() & 07777);
            }
            case CHMOD -> TreeCopy.chmod(root, path, s.mode() & 07777);
        }
    }

    /** A relative path of names, none empty, "." or "..": what the folder's own paths look like. */
    static boolean validPath(String path) {
        if (path == null || path.isEmpty() || path.startsWith("/")) {
            return false;
        }
        for (String name : path.split("/", -1)) {
            if (name.isEmpty() || name.equals(".") || name.equals("..") || name.indexOf('\0') >= 0) {
                return false;
            }
        }
        return true;
    }

    /** A byte-string path as text: its UTF-8, any byte that is not shown as U+FFFD. */
    static String text(String bytes) {
        return new String(bytes.getBytes(StandardCharsets.ISO_8859_1), StandardCharsets.UTF_8);
    }
}
