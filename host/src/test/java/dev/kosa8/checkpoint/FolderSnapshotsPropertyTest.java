package dev.kosa8.checkpoint;

import static java.nio.file.LinkOption.NOFOLLOW_LINKS;
import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.AccessDeniedException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.BasicFileAttributeView;
import java.nio.file.attribute.FileTime;
import java.time.Clock;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.SortedMap;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Assume;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.Tuple;
import net.jqwik.api.Tuple.Tuple2;
import net.jqwik.api.constraints.CharRange;
import net.jqwik.api.constraints.IntRange;

/**
 * Random histories of a folder: rounds of random changes (create, modify,
 * delete, rename, chmod, a directory replaced by a file or a symlink and back,
 * FIFOs, mtimes), a capture after each, then the snapshots restored in a random
 * order, each over a folder changed at random again (or not at all), and compared with what
 * was captured: kind, content, mode, mtime, symlink target of every entry.
 *
 * <p>{@code trusted} runs it once with the real clock (every file is too young
 * to be trusted by identity: everything is read and rewritten) and once with a
 * clock an hour ahead (every identity is trusted: the incremental paths of
 * capture and restore run). With the clock ahead, the racy margin no longer
 * protects a change made in the same clock tick as a capture, so the test then
 * waits a little after each capture and restore, as time passes in reality.
 */
class FolderSnapshotsPropertyTest {
    private static final List<String> NAMES = List.of("a", "b", "é");
    private static final List<String> TARGETS = List.of("a", "../b", "b/c", ".", "/nonexistent-kosa8/x", "é");
    private static final List<Integer> FILE_MODES = List.of(0644, 0600, 0755, 0444, 04755, 0640);
    private static final List<Integer> DIR_MODES = List.of(0755, 0700, 0555, 01777, 02755);

    /** One change to the folder; a change that does not apply to the folder as it is does nothing. */
    sealed interface Op {
        void apply(Path root) throws IOException;
    }

    record Write(String path, int size, int seed) implements Op {
        public void apply(Path root) throws IOException {
            Path p = root.resolve(path);
            if (realParent(root, path, true) && (absent(p) || Files.isRegularFile(p, NOFOLLOW_LINKS))) {
                writeFile(p, size, seed);
            }
        }
    }

    record Mkdir(String path) implements Op {
        public void apply(Path root) throws IOException {
            Path p = root.resolve(path);
            if (realParent(root, path, true) && absent(p)) {
                Files.createDirectory(p);
            }
        }
    }

    record Delete(String path) implements Op {
        public void apply(Path root) throws IOException {
            Path p = root.resolve(path);
            if (realParent(root, path, false) && !absent(p)) {
                FolderSnapshotsTest.deleteTree(p);
            }
        }
    }

    record Rename(String from, String to) implements Op {
        public void apply(Path root) throws IOException {
            Path f = root.resolve(from);
            Path t = root.resolve(to);
            if (realParent(root, from, false) && realParent(root, to, true) && !absent(f)
                    && !(to + "/").startsWith(from + "/")) {
                try {
                    Files.move(f, t, StandardCopyOption.ATOMIC_MOVE);
                } catch (IOException e) {
                    // rename(2) refused (a directory over a file, over a non-empty directory): no change
                }
            }
        }
    }

    record Chmod(String path, int fileMode, int dirMode) implements Op {
        public void apply(Path root) throws IOException {
            Path p = root.resolve(path);
            if (!realParent(root, path, false) || absent(p) || Files.isSymbolicLink(p)) {
                return;
            }
            Files.setAttribute(p, "unix:mode", Files.isDirectory(p, NOFOLLOW_LINKS) ? dirMode : fileMode);
        }
    }

    record Symlink(String path, String target) implements Op {
        public void apply(Path root) throws IOException {
            Path p = root.resolve(path);
            if (realParent(root, path, true) && absent(p)) {
                Files.createSymbolicLink(p, Path.of(target));
            }
        }
    }

    record ReplaceByFile(String path, int size) implements Op {
        public void apply(Path root) throws IOException {
            Path p = root.resolve(path);
            if (realParent(root, path, true)) {
                if (!absent(p)) {
                    FolderSnapshotsTest.deleteTree(p);
                }
                writeFile(p, size, size);
            }
        }
    }

    record ReplaceByDir(String path) implements Op {
        public void apply(Path root) throws IOException {
            Path p = root.resolve(path);
            if (realParent(root, path, true)) {
                if (!absent(p)) {
                    FolderSnapshotsTest.deleteTree(p);
                }
                Files.createDirectory(p);
                writeFile(p.resolve("inside"), 3, 3);
            }
        }
    }

    record Touch(String path, long sec, int nsec) implements Op {
        public void apply(Path root) throws IOException {
            Path p = root.resolve(path);
            // java.nio opens the file to set its times, which would block on a FIFO
            if (realParent(root, path, false) && !absent(p) && !isFifo(p)) {
                Files.getFileAttributeView(p, BasicFileAttributeView.class, NOFOLLOW_LINKS)
                        .setTimes(FileTime.from(Instant.ofEpochSecond(sec, nsec)), null, null);
            }
        }
    }

    record Fifo(String path) implements Op {
        public void apply(Path root) throws IOException {
            Path p = root.resolve(path);
            if (realParent(root, path, true) && absent(p)) {
                try {
                    Process mk = new ProcessBuilder("mkfifo", "-m", "0620", p.toString()).start();
                    if (mk.waitFor() != 0) {
                        throw new IOException("mkfifo failed");
                    }
                } catch (InterruptedException e) {
                    throw new IOException(e);
                }
            }
        }
    }

    @Property(tries = 40)
    void everySnapshotComesBackExactly(@ForAll("rounds") List<List<Op>> rounds,
            @ForAll("restores") List<Tuple2<Integer, List<Op>>> restores, @ForAll boolean trusted) throws Exception {
        Assume.that(Posix.AVAILABLE);
        Path tmp = Files.createTempDirectory("kosa8-snapshots");
        try {
            Path folder = Files.createDirectory(tmp.resolve("ws"));
            Clock clock = trusted ? FolderSnapshotsTest.LATER : Clock.systemUTC();
            FolderSnapshots snapshots = new FolderSnapshots(tmp.resolve("store"), clock, Hooks.NONE);
            List<SortedMap<String, TreeState.Node>> captured = new ArrayList<>();
            for (int r = 0; r < rounds.size(); r++) {
                apply(rounds.get(r), folder);
                captured.add(TreeState.describe(folder));
                snapshots.capture(folder, "s" + r);
                assertThat(TreeState.describe(folder)).as("a capture changes nothing").isEqualTo(captured.get(r));
                letTimePass(trusted);
            }
            for (Tuple2<Integer, List<Op>> restore : restores) {
                int s = restore.get1() % rounds.size();
                apply(restore.get2(), folder);
                snapshots.restore("s" + s, folder);
                assertThat(TreeState.describe(folder)).as("restored s" + s).isEqualTo(captured.get(s));
                letTimePass(trusted);
            }
        } finally {
            FolderSnapshotsTest.deleteTree(tmp);
        }
    }

    /**
     * {@code kosa8 diff}: after a first round the folder is kept as the start; after the other rounds the diff
     * names exactly the paths that differ on disk (as {@link TreeState} reads them, independently of the code
     * under test), each with how it differs, and nothing else; it changes neither the folder nor the store.
     */
    @Property(tries = 40)
    void theDiffNamesExactlyWhatDiffersOnDisk(@ForAll("rounds") List<List<Op>> rounds) throws Exception {
        Assume.that(Posix.AVAILABLE);
        Path tmp = Files.createTempDirectory("kosa8-diff");
        try {
            Path folder = Files.createDirectory(tmp.resolve("ws"));
            FolderSnapshots snapshots = new FolderSnapshots(tmp.resolve("store"));
            apply(rounds.getFirst(), folder);
            SortedMap<String, TreeState.Node> before = TreeState.describe(folder);
            snapshots.capture(folder, FolderSnapshots.START);
            for (List<Op> round : rounds.subList(1, rounds.size())) {
                apply(round, folder);
            }
            SortedMap<String, TreeState.Node> after = TreeState.describe(folder);
            long stored = snapshots.bytesOnDisk();

            List<FolderChange> diff = snapshots.diff(FolderSnapshots.START, folder);

            assertThat(diff.stream().map(c -> c.path() + " " + c.change()).toList())
                    .containsExactlyInAnyOrderElementsOf(expected(before, after));
            for (FolderChange c : diff) {
                assertThat(c.before() == null).as(c.path()).isEqualTo(c.change() == FolderChange.Change.ADDED);
                assertThat(c.after() == null).as(c.path()).isEqualTo(c.change() == FolderChange.Change.DELETED);
            }
            assertThat(TreeState.describe(folder)).as("a diff changes nothing in the folder").isEqualTo(after);
            assertThat(snapshots.ids()).as("nor in the store").containsExactly(FolderSnapshots.START);
            assertThat(snapshots.bytesOnDisk()).isEqualTo(stored);
        } finally {
            FolderSnapshotsTest.deleteTree(tmp);
        }
    }

    /** What differs between two descriptions of the folder, as "path CHANGE". */
    private static List<String> expected(SortedMap<String, TreeState.Node> before,
                                         SortedMap<String, TreeState.Node> after) {
        List<String> out = new ArrayList<>();
        java.util.SortedSet<String> paths = new java.util.TreeSet<>(before.keySet());
        paths.addAll(after.keySet());
        for (String p : paths) {
            TreeState.Node b = before.get(p);
            TreeState.Node a = after.get(p);
            String change;
            if (b == null) {
                change = "ADDED";
            } else if (a == null) {
                change = "DELETED";
            } else if (!b.kind().equals(a.kind())) {
                change = "TYPE";
            } else if (!java.util.Objects.equals(b.content(), a.content())) {
                change = b.kind().equals("symlink") ? "SYMLINK" : "MODIFIED";
            } else if (b.mode() != a.mode()) {
                change = "MODE";
            } else {
                continue;
            }
            out.add(p + " " + change);
        }
        return out;
    }

    /** A manifest damaged anywhere is refused with an IOException: never half read, never another exception. */
    @Property(tries = 1000)
    void aDamagedManifestIsRefusedCleanly(@ForAll @IntRange(max = 100_000) int where,
            @ForAll @CharRange(from = ' ', to = '~') char value, @ForAll @IntRange(max = 3) int howMany)
            throws Exception {
        Manifest m = new Manifest("m1", Instant.parse("2025-01-01T00:00:00.5Z"), List.of(
                new Entry("", Kind.DIR, 0755, 1, 2, 0, null, null, null),
                new Entry("d", Kind.DIR, 0700, 3, 4, 0, null, null, null),
                new Entry("d/\u00ff", Kind.FILE, 0644, 5, 6, 7, "0".repeat(64), null,
                        new Identity(8, 9, 7, 5, 6, 10, 11)),
                new Entry("l", Kind.SYMLINK, 0777, 12, 13, 0, null, "d/\u00ff", null),
                new Entry("p", Kind.FIFO, 0640, 14, 15, 0, null, null, null)));
        byte[] good = ManifestCodec.write(m);
        assertThat(ManifestCodec.read(good)).isEqualTo(m);
        byte[] bad = good.clone();
        for (int i = 0; i <= howMany; i++) {
            bad[(where + i * 7919) % bad.length] = (byte) value; // printable: damage that still parses
        }
        try {
            assertThat(ManifestCodec.read(bad)).as("only a change that changes nothing reads").isEqualTo(m);
        } catch (IOException expected) {
            // refused, as it must be
        }
    }

    static void apply(List<Op> ops, Path folder) throws IOException {
        for (Op op : ops) {
            try {
                op.apply(folder);
            } catch (AccessDeniedException e) {
                // not root: a read-only directory in the way; the folder is as the change left it
            }
        }
    }

    private static void letTimePass(boolean trusted) throws InterruptedException {
        if (trusted) {
            Thread.sleep(20); // longer than a clock tick (4 ms at HZ=250, 10 ms at HZ=100)
        }
    }

    @Provide
    Arbitrary<List<List<Op>>> rounds() {
        return ops().list().ofMaxSize(14).list().ofMinSize(1).ofMaxSize(4);
    }

    /** Which snapshot to restore, and the changes made before (often none: straight after a capture). */
    @Provide
    Arbitrary<List<Tuple2<Integer, List<Op>>>> restores() {
        return Combinators.combine(Arbitraries.integers().between(0, 3), ops().list().ofMaxSize(4)).as(Tuple::of)
                .list().ofMinSize(1).ofMaxSize(6);
    }

    static Arbitrary<Op> ops() {
        Arbitrary<String> path = Arbitraries.of(NAMES).list().ofMinSize(1).ofMaxSize(3).map(l -> String.join("/", l));
        Arbitrary<Integer> size = Arbitraries.oneOf(Arbitraries.integers().between(0, 40),
                Arbitraries.integers().between(Capturer.BUFFER - 2, Capturer.BUFFER + 2));
        return Arbitraries.frequencyOf(
                Tuple.of(6, Combinators.combine(path, size, Arbitraries.integers()).as(Write::new)),
                Tuple.of(2, path.map(Mkdir::new)),
                Tuple.of(2, path.map(Delete::new)),
                Tuple.of(2, Combinators.combine(path, path).as(Rename::new)),
                Tuple.of(2, Combinators.combine(path, Arbitraries.of(FILE_MODES),
                        Arbitraries.of(DIR_MODES)).as(Chmod::new)),
                Tuple.of(2, Combinators.combine(path, Arbitraries.of(TARGETS)).as(Symlink::new)),
                Tuple.of(1, Combinators.combine(path, size).as(ReplaceByFile::new)),
                Tuple.of(1, path.map(ReplaceByDir::new)),
                Tuple.of(2, Combinators.combine(path, Arbitraries.longs().between(0, 2_000_000_000L),
                        Arbitraries.integers().between(0, 999_999_999)).as(Touch::new)),
                Tuple.of(1, path.map(Fifo::new)));
    }

    // ---- helpers for the operations: never through a symlink, never outside the folder

    /**
     * True if every directory on the way to {@code path} is a real directory (not a symlink); with
     * {@code create}, missing ones are made first. Keeps the test's own changes inside the folder.
     */
    static boolean realParent(Path root, String path, boolean create) throws IOException {
        String[] parts = path.split("/");
        Path at = root;
        for (String part : Arrays.copyOf(parts, parts.length - 1)) {
            at = at.resolve(part);
            if (absent(at) && create) {
                Files.createDirectory(at);
            }
            if (!Files.isDirectory(at, NOFOLLOW_LINKS)) {
                return false;
            }
        }
        return true;
    }

    static boolean absent(Path p) {
        return !Files.exists(p, NOFOLLOW_LINKS);
    }

    static boolean isFifo(Path p) throws IOException {
        return ((Integer) Files.getAttribute(p, "unix:mode", NOFOLLOW_LINKS) & 0170000) == 0010000;
    }

    static void writeFile(Path p, int size, int seed) throws IOException {
        byte[] b = new byte[size];
        new java.util.Random(seed).nextBytes(b);
        Files.write(p, b, StandardOpenOption.CREATE, StandardOpenOption.TRUNCATE_EXISTING,
                StandardOpenOption.WRITE, NOFOLLOW_LINKS);
    }
}
