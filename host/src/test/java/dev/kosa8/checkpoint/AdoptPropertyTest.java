package dev.kosa8.checkpoint;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kosa8.checkpoint.FolderSnapshotsPropertyTest.Op;
import dev.kosa8.workspace.FolderAdopter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.SortedMap;
import java.util.TreeMap;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Assume;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;

/**
 * {@code kosa8 adopt} against a model: a random folder is kept as the instant, copied twice (the fork's folder
 * and the target's), each copy changed at random, then the fork's changes adopted into the target. Read back
 * independently of the code under test ({@link TreeState}), every path of the target must then be what the fork
 * has if the plan applied the fork's change to it, and what the target had otherwise (a conflict, a change left
 * for the user, a path the fork did not touch); times aside. Nothing fails on the way.
 */
class AdoptPropertyTest {
    /** A path as compared: kind, permission bits, content; not the time. */
    record Shape(String kind, int mode, String content) {
        static Shape of(TreeState.Node n) {
            return new Shape(n.kind(), n.kind().equals("symlink") ? 0 : n.mode(), n.content());
        }
    }

    @Property(tries = 60)
    void everyPathEndsAsTheForkHasItWhereItsChangeWasAppliedAndAsTheTargetHadItElsewhere(
            @ForAll("changes") List<Op> base, @ForAll("changes") List<Op> forkChanges,
            @ForAll("changes") List<Op> targetChanges) throws Exception {
        Assume.that(Posix.AVAILABLE);
        Path tmp = Files.createTempDirectory("kosa8-adopt");
        try {
            Path instant = Files.createDirectory(tmp.resolve("instant"));
            FolderSnapshotsPropertyTest.apply(base, instant);
            FolderSnapshots store = new FolderSnapshots(tmp.resolve("store"));
            store.capture(instant, FolderSnapshots.START);
            Path fork = tmp.resolve("fork");
            Path target = tmp.resolve("target");
            store.copyTo(FolderSnapshots.START, Files.createDirectory(fork));
            store.copyTo(FolderSnapshots.START, Files.createDirectory(target));
            FolderSnapshotsPropertyTest.apply(forkChanges, fork);
            FolderSnapshotsPropertyTest.apply(targetChanges, target);
            SortedMap<String, Shape> was = shapes(instant);
            SortedMap<String, Shape> forkHas = shapes(fork);
            SortedMap<String, Shape> targetHad = shapes(target);
            SortedMap<String, Shape> expected = new TreeMap<>(targetHad);

            AdoptPlan plan = AdoptPlan.of(store.edits(FolderSnapshots.START, fork),
                    store.edits(FolderSnapshots.START, target));
            FolderAdopter.Outcome dry = FolderAdopter.apply(fork, target, plan.steps(), null, true);
            assertThat(shapes(target)).as("a dry run changes nothing").isEqualTo(expected);
            FolderAdopter.Outcome done = FolderAdopter.apply(fork, target, plan.steps(), null, false);

            assertThat(done.skipped()).as("no step failed").isEmpty();
            assertThat(done.applied()).as("the dry run said what was done").isEqualTo(dry.applied());
            for (FolderAdopter.Step s : plan.steps()) {
                String path = new String(s.path().getBytes(StandardCharsets.ISO_8859_1), StandardCharsets.UTF_8);
                if (forkHas.containsKey(path)) {
                    expected.put(path, forkHas.get(path));
                } else {
                    expected.remove(path);
                    expected.keySet().removeIf(p -> p.startsWith(path + "/"));
                }
            }
            assertThat(shapes(target)).as("the target after adopting %s (conflicts %s, skipped %s)",
                    plan.steps(), plan.conflicts(), plan.skipped()).isEqualTo(expected);
            for (String p : plan.already()) {
                assertThat(expected.get(p)).as("already there: " + p).isEqualTo(forkHas.get(p));
            }
            // and, judged from the trees alone: the target's own work is never lost (a path it changed ends as it
            // had it, unless it is the folder's mode), every change of the fork's is in the target unless the plan
            // says why not, and a conflict is one: the target changed that path, one above it or one under it, or
            // it lies under a conflict
            SortedMap<String, Shape> after = shapes(target);
            for (String p : changed(was, targetHad)) {
                assertThat(after.get(p)).as("the target's own change to '%s' kept", p).isEqualTo(targetHad.get(p));
            }
            for (String p : changed(was, forkHas)) {
                boolean explained = plan.conflicts().contains(p) || plan.skipped().stream().anyMatch(
                        x -> x.startsWith(p + ":") || p.isEmpty());
                if (!explained) {
                    assertThat(after.get(p)).as("the fork's change to '%s' adopted", p).isEqualTo(forkHas.get(p));
                }
            }
            List<String> targetChanged = changed(was, targetHad);
            for (String c : plan.conflicts()) {
                if (plan.conflicts().stream().noneMatch(above -> c.startsWith(above + "/"))) {
                    assertThat(targetChanged).as("conflict '%s' has a change of the target's at, above or under it",
                            c).anyMatch(t -> t.equals(c) || c.startsWith(t + "/") || t.startsWith(c + "/"));
                }
            }
        } finally {
            FolderSnapshotsTest.deleteTree(tmp);
        }
    }

    @Provide
    Arbitrary<List<Op>> changes() {
        return FolderSnapshotsPropertyTest.ops().list().ofMaxSize(10);
    }

    /** The paths whose shape differs between two trees (present in one only, or different). */
    private static List<String> changed(SortedMap<String, Shape> a, SortedMap<String, Shape> b) {
        java.util.TreeSet<String> all = new java.util.TreeSet<>(a.keySet());
        all.addAll(b.keySet());
        return all.stream().filter(p -> !p.isEmpty() && !java.util.Objects.equals(a.get(p), b.get(p))).toList();
    }

    private static SortedMap<String, Shape> shapes(Path root) throws Exception {
        SortedMap<String, Shape> out = new TreeMap<>();
        for (Map.Entry<String, TreeState.Node> e : TreeState.describe(root).entrySet()) {
            out.put(e.getKey(), Shape.of(e.getValue()));
        }
        return out;
    }
}
