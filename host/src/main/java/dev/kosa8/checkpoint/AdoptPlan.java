package dev.kosa8.checkpoint;

import dev.kosa8.workspace.FolderAdopter;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * What adopting a fork's changes into another folder does ({@code kosa8 adopt}): a pure function of two lists of
 * {@link FolderEdit}s against the same instant (the fork's folder as it was forked), the fork's and the target's.
 *
 * <p>A fork's change to a path is applied when the target still has that path as it was at the instant. It is
 * already there when the target made the same change itself. It is a conflict, shown and not applied, when the
 * target changed the path otherwise; when the target removed or replaced a directory above it; when it deletes or
 * replaces a directory under which the target changed something (the target's work would be lost); and when a
 * change above it is a conflict. Left for the user, with why ({@link #skipped}): a FIFO, and the folder's own
 * mode.
 *
 * <p>The steps are ordered so that each can be applied on its own: deletions deepest first (a directory is empty
 * when its own turn comes), then every other change parents first.
 *
 * @param steps     the fork's changes to apply, in order
 * @param conflicts the paths (for display) not applied because the target changed them or around them
 * @param already   the paths the target already has as the fork does
 * @param skipped   the changes left for the user: the path (for display), a colon, and why
 */
public record AdoptPlan(List<FolderAdopter.Step> steps, List<String> conflicts, List<String> already,
                        List<String> skipped) {

    public AdoptPlan {
        steps = List.copyOf(steps);
        conflicts = List.copyOf(conflicts);
        already = List.copyOf(already);
        skipped = List.copyOf(skipped);
    }

    public static AdoptPlan of(List<FolderEdit> fork, List<FolderEdit> target) {
        Map<String, FolderEdit> theirs = new HashMap<>();
        for (FolderEdit t : target) {
            theirs.put(t.display(), t);
        }
        List<FolderEdit> sorted = new ArrayList<>(fork);
        sorted.sort(Comparator.comparing(FolderEdit::display, AdoptPlan::pathOrder));
        List<String> conflicts = new ArrayList<>();
        List<String> already = new ArrayList<>();
        List<String> skipped = new ArrayList<>();
        List<FolderEdit> apply = new ArrayList<>();
        for (FolderEdit e : sorted) {
            String p = e.display();
            FolderEdit t = theirs.get(p);
            if (t != null && Objects.equals(t.after(), e.after())) {
                already.add(p);
            } else if (t != null || underConflict(p, conflicts) || underRemoval(p, theirs)
                    || (removesDirectory(e) && targetChangedUnder(p, target))) {
                conflicts.add(p);
            } else if (e.path().isEmpty()) {
                skipped.add("the folder's own mode: set it by hand if you want it");
            } else if (e.after() != null && e.after().kind().equals("fifo")) {
                skipped.add(p + ": a FIFO is not copied (only files, symlinks and directories are)");
            } else {
                apply.add(e);
            }
        }
        List<FolderAdopter.Step> steps = new ArrayList<>();
        apply.stream().filter(e -> e.change() == FolderChange.Change.DELETED)
                .sorted(Comparator.comparing(FolderEdit::display, AdoptPlan::pathOrder).reversed())
                .forEach(e -> steps.add(step(e)));
        apply.stream().filter(e -> e.change() != FolderChange.Change.DELETED).forEach(e -> steps.add(step(e)));
        return new AdoptPlan(steps, conflicts, already, skipped);
    }

    /** The step that makes the target's path what the fork has there. */
    private static FolderAdopter.Step step(FolderEdit e) {
        if (e.change() == FolderChange.Change.DELETED) {
            return new FolderAdopter.Step(e.path(), FolderAdopter.Op.REMOVE, 0);
        }
        FolderAdopter.Op op = e.after().kind().equals("dir") ? FolderAdopter.Op.MKDIR
                : e.change() == FolderChange.Change.MODE ? FolderAdopter.Op.CHMOD : FolderAdopter.Op.PLACE;
        return new FolderAdopter.Step(e.path(), op, e.after().mode());
    }

    /** Paths in tree order: a parent before everything under it, siblings by name. */
    static int pathOrder(String a, String b) {
        return a.replace('/', '\0').compareTo(b.replace('/', '\0'));
    }

    private static boolean underConflict(String path, List<String> conflicts) {
        for (String c : conflicts) {
            if (path.startsWith(c + "/")) {
                return true;
            }
        }
        return false;
    }

    /** Whether the target deleted a directory above {@code path}, or made it something else. */
    private static boolean underRemoval(String path, Map<String, FolderEdit> theirs) {
        for (int i = path.lastIndexOf('/'); i > 0; i = path.lastIndexOf('/', i - 1)) {
            FolderEdit t = theirs.get(path.substring(0, i));
            if (t != null && (t.change() == FolderChange.Change.DELETED || t.change() == FolderChange.Change.TYPE)) {
                return true;
            }
        }
        return false;
    }

    private static boolean removesDirectory(FolderEdit e) {
        return e.before() != null && e.before().kind().equals("dir")
                && (e.change() == FolderChange.Change.DELETED || e.change() == FolderChange.Change.TYPE);
    }

    private static boolean targetChangedUnder(String path, List<FolderEdit> target) {
        for (FolderEdit t : target) {
            if (t.display().startsWith(path + "/")) {
                return true;
            }
        }
        return false;
    }
}
