package dev.kosa8.checkpoint;

import static java.nio.charset.StandardCharsets.ISO_8859_1;
import static java.nio.charset.StandardCharsets.UTF_8;
import static java.nio.file.LinkOption.NOFOLLOW_LINKS;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assumptions.assumeThat;

import dev.kosa8.host.KosaException;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Random;
import java.util.Set;
import java.util.SortedMap;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class FolderSnapshotsTest {
    /** Dates captures an hour ahead, as if the files had settled long before: identities are trusted. */
    static final Clock LATER = Clock.offset(Clock.systemUTC(), Duration.ofHours(1));

    @TempDir
    Path tmp;
    Path folder;
    Path store;
    Path outside;

    @BeforeEach
    void setUp() throws IOException {
        assumeThat(Posix.AVAILABLE).isTrue();
        folder = Files.createDirectory(tmp.resolve("ws"));
        store = tmp.resolve("store");
        outside = Files.createDirectory(tmp.resolve("outside"));
    }

    /** Counts the files a capture reads, and fails a capture at a named point when asked. */
    static final class Recorder implements Hooks {
        final List<String> reads = new ArrayList<>();
        String failAt;
        int failAfter;

        @Override
        public void reading(String path) {
            reads.add(path);
        }

        @Override
        public void at(String point) throws IOException {
            if (point.equals(failAt) && failAfter-- <= 0) {
                throw new IOException("No space left on device (simulated at " + point + ")");
            }
        }
    }

    // ---- the tree the round-trip tests use

    /** Files of several sizes and modes, empty and read-only directories, three kinds of symlink, a FIFO. */
    void buildMixedTree() throws Exception {
        write("a.txt", "alpha", 0644);
        write("empty", "", 0600);
        write("bin/tool", "#!/bin/sh\necho hi\n", 0755);
        write("bin/setuid", "s", 04755);
        write("docs/readme.md", "read me", 0444);
        byte[] big = new byte[3 * Capturer.BUFFER + 12345];
        new Random(1).nextBytes(big);
        Files.write(folder.resolve("docs/big.bin"), big);
        Files.createDirectories(folder.resolve("empty-dir/nested-empty"));
        Files.createDirectories(folder.resolve("sticky"));
        chmod("sticky", 01777);
        write("locked/inside.txt", "in a read-only dir", 0644);
        Files.createSymbolicLink(folder.resolve("rel-link"), Path.of("docs/readme.md"));
        Files.createSymbolicLink(folder.resolve("bin/abs-link"), outside.toAbsolutePath());
        Files.createSymbolicLink(folder.resolve("dangling"), Path.of("no/such/thing"));
        mkfifo("pipe");
        chmod("pipe", 0640);
        chmod("locked", 0555);
        // nanosecond mtimes everywhere, directories last (writing inside moves theirs)
        setMtime("a.txt", 1_600_000_000L, 123_456_789);
        setMtime("docs/big.bin", 1_500_000_000L, 1);
        setMtime("pipe", 1_400_000_000L, 999_999_999);
        setMtime("rel-link", 1_300_000_000L, 42);
        setMtime("empty-dir/nested-empty", 1_200_000_000L, 7);
        setMtime("locked", 1_100_000_000L, 500);
        setMtime("", 1_000_000_000L, 1);
    }

    /** Undoes most of {@link #buildMixedTree}: kinds swapped, content and modes changed, things added. */
    void messUpMixedTree() throws Exception {
        Files.writeString(folder.resolve("a.txt"), "ALPHA, changed");
        Files.delete(folder.resolve("empty"));
        Files.createDirectories(folder.resolve("empty/now-a-dir")); // file became a directory
        deleteTree(folder.resolve("bin"));
        Files.writeString(folder.resolve("bin"), "directory became a file");
        chmod("docs/readme.md", 0666);
        Files.writeString(folder.resolve("docs/readme.md"), "overwritten");
        Files.delete(folder.resolve("rel-link"));
        Files.createDirectory(folder.resolve("rel-link")); // symlink became a directory
        Files.delete(folder.resolve("pipe"));
        Files.writeString(folder.resolve("pipe"), "a FIFO became a file");
        chmod("locked", 0755);
        Files.writeString(folder.resolve("locked/new.txt"), "added");
        Files.delete(folder.resolve("locked/inside.txt"));
        chmod("locked", 0555);
        deleteTree(folder.resolve("empty-dir"));
        Files.createSymbolicLink(folder.resolve("empty-dir"), Path.of("a.txt")); // directory became a symlink
        write("new/deep/file", "added", 0600);
        chmod("sticky", 0700);
        chmod("", 0700);
    }

    @Test
    void aSnapshotLinkedIntoAnotherStoreSharesItsContentAndOutlivesTheOriginal() throws Exception {
        buildMixedTree();
        SortedMap<String, TreeState.Node> was = TreeState.describe(folder);
        FolderSnapshots parent = new FolderSnapshots(store);
        parent.capture(folder, "c1");
        FolderSnapshots fork = new FolderSnapshots(tmp.resolve("fork-store"));

        fork.linkFrom(parent, "c1", FolderSnapshots.START);

        assertThat(fork.ids()).containsExactly(FolderSnapshots.START);
        assertThat(fork.edits(FolderSnapshots.START, folder)).as("the folder is as the linked snapshot").isEmpty();
        Path object = Files.list(tmp.resolve("fork-store/objects")).findFirst().orElseThrow();
        Path one = Files.list(object).findFirst().orElseThrow();
        assertThat((Integer) Files.getAttribute(one, "unix:nlink")).as("shared, not copied").isEqualTo(2);
        assertThatThrownBy(() -> fork.linkFrom(parent, "c1", FolderSnapshots.START))
                .hasMessageContaining("already exists");

        parent.delete("c1"); // with every object only it needed
        Path again = tmp.resolve("again");
        Files.createDirectory(again);
        fork.copyTo(FolderSnapshots.START, again);
        assertThat(TreeState.describe(again)).isEqualTo(was);
    }

    /**
     * A snapshot with no file in it (the held layer, mostly empty, is captured in every checkpoint's pause) names
     * no object, so its commit skips the syncfs of the whole file system; one with a file still makes it durable
     * first. Both restore exactly.
     */
    @Test
    void aSnapshotWithoutFilesNamesNoObjectAndOneWithAFileDoes() throws Exception {
        Files.createDirectories(folder.resolve("a/b"));
        Files.createSymbolicLink(folder.resolve("a/link"), Path.of("b"));
        SortedMap<String, TreeState.Node> noFiles = TreeState.describe(folder);
        FolderSnapshots snapshots = new FolderSnapshots(store);
        snapshots.capture(folder, "empty");
        assertThat(FolderSnapshots.namesObjects(snapshots.load("empty"))).isFalse();

        Files.writeString(folder.resolve("a/b/f.txt"), "content");
        snapshots.capture(folder, "one");
        assertThat(FolderSnapshots.namesObjects(snapshots.load("one"))).isTrue();

        snapshots.restore("empty", folder);
        assertThat(TreeState.describe(folder)).isEqualTo(noFiles);
        snapshots.restore("one", folder);
        assertThat(folder.resolve("a/b/f.txt")).hasContent("content");
    }

    @Test
    void restoresAMixedTreeExactly() throws Exception {
        buildMixedTree();
        SortedMap<String, TreeState.Node> captured = TreeState.describe(folder);
        FolderSnapshots snapshots = new FolderSnapshots(store);

        Capture c = snapshots.capture(folder, "c1");
        assertThat(TreeState.describe(folder)).as("capturing changes nothing").isEqualTo(captured);
        messUpMixedTree();
        Restore r = snapshots.restore("c1", folder);

        assertThat(TreeState.describe(folder)).isEqualTo(captured);
        assertThat(c.entries()).isEqualTo(captured.size() - 1);
        assertThat(c.bytesTotal()).isEqualTo(5 + 0 + 18 + 1 + 7 + 3L * Capturer.BUFFER + 12345 + 18);
        assertThat(r.filesWritten()).isPositive();
        assertThat(r.entriesRemoved()).isPositive();
        assertThat(captured.get("pipe").kind()).isEqualTo("fifo");
        assertThat(captured.get("locked").mode()).isEqualTo(0555);
        assertThat(captured.get("bin/setuid").mode()).isEqualTo(04755);
        assertThat(captured.get("a.txt").mtime()).isEqualTo(FileTime.from(Instant.ofEpochSecond(1_600_000_000L,
                123_456_789)));
    }

    @Test
    void theFolderItselfKeepsItsIdentity() throws Exception {
        buildMixedTree();
        Object inode = Files.getAttribute(folder, "unix:ino");
        FolderSnapshots snapshots = new FolderSnapshots(store);
        snapshots.capture(folder, "c1");
        messUpMixedTree();
        snapshots.restore("c1", folder);
        assertThat(Files.getAttribute(folder, "unix:ino")).isEqualTo(inode);
    }

    @Test
    void restoringAnUnchangedFolderWritesNothing() throws Exception {
        buildMixedTree();
        FolderSnapshots snapshots = new FolderSnapshots(store, LATER, Hooks.NONE);
        snapshots.capture(folder, "c1");
        SortedMap<String, TreeState.Node> before = TreeState.describe(folder);

        Restore r = snapshots.restore("c1", folder);

        assertThat(r.filesWritten()).isZero();
        assertThat(r.entriesRemoved()).isZero();
        assertThat(TreeState.describe(folder)).isEqualTo(before);
    }

    @Test
    void restoreRewritesOnlyWhatChanged() throws Exception {
        for (int i = 0; i < 20; i++) {
            write("f" + i, "content " + i, 0644);
        }
        FolderSnapshots snapshots = new FolderSnapshots(store, LATER, Hooks.NONE);
        snapshots.capture(folder, "c1");
        SortedMap<String, TreeState.Node> captured = TreeState.describe(folder);
        Files.writeString(folder.resolve("f3"), "changed!");
        Files.delete(folder.resolve("f4"));
        write("extra", "x", 0644);
        chmod("f5", 0600); // moves the ctime too, so its content is no longer known: rewritten

        Restore r = snapshots.restore("c1", folder);

        assertThat(r.filesWritten()).isEqualTo(3);
        assertThat(r.entriesRemoved()).isEqualTo(1);
        assertThat(TreeState.describe(folder)).isEqualTo(captured);
    }

    @Test
    void namesAreBytesNotText() throws Exception {
        write("été/日本語.txt", "utf-8 name", 0644);
        String invalid = "bad-\u00ff\u00fe-name"; // bytes 0xff 0xfe: not UTF-8
        int dir = Posix.open(ByteNames.fromHostPath(folder), Posix.O_RDONLY | Posix.O_DIRECTORY);
        try {
            int fd = Posix.openAt(dir, invalid, Posix.O_WRONLY | Posix.O_CREAT | Posix.O_EXCL, 0644);
            Posix.writeFully(fd, ByteBuffer.allocateDirect(5).put("bytes".getBytes(UTF_8)).flip());
            Posix.close(fd);
            Posix.symlinkAt("target-\u00ff", dir, "link-to-bad");
        } finally {
            Posix.close(dir);
        }
        FolderSnapshots snapshots = new FolderSnapshots(store);
        snapshots.capture(folder, "c1");
        try (Stream<Path> all = Files.list(folder)) {
            for (Path p : all.toList()) {
                deleteTree(p);
            }
        }

        snapshots.restore("c1", folder);

        assertThat(Files.readString(folder.resolve("été/日本語.txt"))).isEqualTo("utf-8 name");
        dir = Posix.open(ByteNames.fromHostPath(folder), Posix.O_RDONLY | Posix.O_DIRECTORY);
        try {
            assertThat(Posix.list(dir)).contains(invalid, "link-to-bad");
            assertThat(Posix.readlinkAt(dir, "link-to-bad")).isEqualTo("target-\u00ff");
            assertThat(Posix.statAt(dir, invalid).size()).isEqualTo(5);
        } finally {
            Posix.close(dir);
        }
        String json = Files.readString(store.resolve("manifests/c1.json"), ISO_8859_1);
        assertThat(json).as("text where UTF-8, escaped to ASCII")
                .containsIgnoringCase("\"path\":\"\\u00E9t\\u00E9/\\u65E5\\u672C\\u8A9E.txt\"")
                .contains("\"pathBase64\":\"" + ByteNames.toBase64(invalid) + "\"")
                .contains("\"targetBase64\":");
    }

    @Test
    void anUnchangedFileIsNeitherReadNorStoredAgain() throws Exception {
        for (int i = 0; i < 50; i++) {
            write("dir" + i % 5 + "/f" + i, "file number " + i, 0644);
        }
        Recorder recorder = new Recorder();
        FolderSnapshots snapshots = new FolderSnapshots(store, LATER, recorder);
        Capture first = snapshots.capture(folder, "c1");
        assertThat(first.filesCopied()).isEqualTo(50);
        assertThat(recorder.reads).hasSize(50);
        long objects = objectCount();
        long spaceBefore = snapshots.bytesOnDisk();

        recorder.reads.clear();
        Capture second = snapshots.capture(folder, "c2");

        assertThat(recorder.reads).isEmpty();
        assertThat(second.filesCopied()).isZero();
        assertThat(second.bytesCopied()).isZero();
        assertThat(second.bytesTotal()).isEqualTo(first.bytesTotal());
        assertThat(objectCount()).isEqualTo(objects);
        assertThat(snapshots.bytesOnDisk() - spaceBefore).as("only the new manifest")
                .isEqualTo(allocated(store.resolve("manifests/c2.json")));

        Files.writeString(folder.resolve("dir1/f1"), "changed, and longer than before");
        Files.writeString(folder.resolve("dir2/f7"), "changed too, and longer");
        write("dir3/new", "new file", 0644);
        Files.move(folder.resolve("dir4/f4"), folder.resolve("dir4/renamed")); // content known: no new object
        recorder.reads.clear();
        Capture third = snapshots.capture(folder, "c3");

        assertThat(recorder.reads).contains("dir1/f1", "dir2/f7", "dir3/new").hasSizeLessThanOrEqualTo(4);
        assertThat(objectCount()).isEqualTo(objects + 3);
        assertThat(third.entries()).isEqualTo(first.entries() + 1);
    }

    @Test
    void aScanIsNothingUntilCommittedAndAbandoningItLeavesNothing() throws Exception {
        write("a", "first content", 0644);
        FolderSnapshots snapshots = new FolderSnapshots(store, LATER, Hooks.NONE);
        snapshots.capture(folder, "c1");
        long objects = objectCount();

        write("b", "new since c1", 0644);
        FolderSnapshots.Pending pending = snapshots.scan(folder, "c2");
        assertThat(snapshots.ids()).as("not named before commit").containsExactly("c1");
        assertThat(objectCount()).as("the changed file is copied by the scan").isEqualTo(objects + 1);
        snapshots.abandon(pending);
        assertThat(objectCount()).as("and taken back when abandoned").isEqualTo(objects);
        assertThat(snapshots.ids()).containsExactly("c1");

        SortedMap<String, TreeState.Node> atScan = TreeState.describe(folder);
        FolderSnapshots.Pending kept = snapshots.scan(folder, "c3");
        write("b", "changed after the scan, before the commit", 0644); // the guest runs again meanwhile
        Capture c = snapshots.commit(kept);
        assertThat(c.id()).isEqualTo("c3");
        assertThat(snapshots.ids()).containsExactly("c1", "c3");
        snapshots.restore("c3", folder);
        assertThat(TreeState.describe(folder)).as("the commit names what the scan saw").isEqualTo(atScan);
    }

    @Test
    void aPreCopyLeavesTheCaptureOnlyWhatChangedSince() throws Exception {
        for (int i = 0; i < 20; i++) {
            write("f" + i, "content " + i, 0644);
        }
        Recorder recorder = new Recorder();
        FolderSnapshots snapshots = new FolderSnapshots(store, LATER, recorder);
        snapshots.capture(folder, "c1.pre"); // while the guest runs
        write("f3", "changed between pre-copy and pause", 0644);
        recorder.reads.clear();
        snapshots.commit(snapshots.scan(folder, "c1")); // in the pause
        assertThat(recorder.reads).containsExactly("f3");
        snapshots.delete("c1.pre");
        SortedMap<String, TreeState.Node> expected = TreeState.describe(folder);
        write("f5", "later", 0644);
        snapshots.restore("c1", folder);
        assertThat(TreeState.describe(folder)).as("deleting the pre-copy kept the objects c1 names")
                .isEqualTo(expected);
    }

    @Test
    void copyToFillsAnotherFolderAndLeavesTheHeadAlone() throws Exception {
        buildMixedTree();
        FolderSnapshots snapshots = new FolderSnapshots(store, LATER, Hooks.NONE);
        snapshots.capture(folder, "c1");
        SortedMap<String, TreeState.Node> original = TreeState.describe(folder);
        String head = Files.readString(store.resolve("head"));
        Path copy = Files.createDirectory(tmp.resolve("fork"));

        snapshots.copyTo("c1", copy);

        assertThat(TreeState.describe(copy)).isEqualTo(original);
        assertThat(Files.readString(store.resolve("head"))).isEqualTo(head);
        assertThat(TreeState.describe(folder)).as("the original folder is untouched").isEqualTo(original);
    }

    @Test
    void aFileChangedJustBeforeACaptureIsReadAgainNextTime() throws Exception {
        // With the real clock, every file here is younger than the racy margin: its identity is not yet
        // trusted, since a write in the same clock tick could leave size, mtime and ctime as they were.
        write("fresh", "just written", 0644);
        Recorder recorder = new Recorder();
        FolderSnapshots snapshots = new FolderSnapshots(store, Clock.systemUTC(), recorder);
        snapshots.capture(folder, "c1");
        snapshots.capture(folder, "c2");
        assertThat(recorder.reads).containsExactly("fresh", "fresh");
    }

    @Test
    void snapshotsRestoreInAnyOrder() throws Exception {
        List<SortedMap<String, TreeState.Node>> states = new ArrayList<>();
        FolderSnapshots snapshots = new FolderSnapshots(store, LATER, Hooks.NONE);
        write("keep", "always the same", 0644);
        for (int i = 0; i < 4; i++) {
            write("changing", "version " + "x".repeat(i), 0644);
            write("only-in-" + i + "/file", "round " + i, 0600);
            snapshots.capture(folder, "s" + i);
            states.add(TreeState.describe(folder));
        }
        for (int i : new int[] {2, 0, 3, 3, 1, 0, 2}) {
            snapshots.restore("s" + i, folder);
            assertThat(TreeState.describe(folder)).as("s" + i).isEqualTo(states.get(i));
        }
    }

    @Test
    void deleteKeepsWhatOtherSnapshotsNeed() throws Exception {
        FolderSnapshots snapshots = new FolderSnapshots(store);
        write("shared", "in both snapshots", 0644);
        write("gone", "only in the first", 0644);
        snapshots.capture(folder, "s1");
        Files.delete(folder.resolve("gone"));
        write("later", "only in the second", 0644);
        snapshots.capture(folder, "s2");
        SortedMap<String, TreeState.Node> second = TreeState.describe(folder);
        String gone = TreeState.sha256("only in the first".getBytes(UTF_8));
        String shared = TreeState.sha256("in both snapshots".getBytes(UTF_8));
        long only = snapshots.bytesOnlyIn("s1");
        long before = snapshots.bytesOnDisk();
        assertThat(only).isEqualTo(allocated(store.resolve("manifests/s1.json")) + allocated(objectPath(gone)));

        snapshots.delete("s1");

        assertThat(snapshots.ids()).containsExactly("s2");
        assertThat(objectPath(gone)).doesNotExist();
        assertThat(objectPath(shared)).exists();
        assertThat(snapshots.bytesOnDisk()).isEqualTo(before - only);
        deleteTree(folder.resolve("shared"));
        snapshots.restore("s2", folder);
        assertThat(TreeState.describe(folder)).isEqualTo(second);
        assertThatThrownBy(() -> snapshots.delete("s1")).isInstanceOf(KosaException.class)
                .hasMessageContaining("no workspace snapshot named s1");
    }

    @Test
    void restoreNeverWritesThroughAPlantedSymlink() throws Exception {
        write("d/f", "the real file", 0644);
        write("d/sub/g", "deeper", 0644);
        write("ro/x", "in a read-only dir", 0644);
        chmod("ro", 0555);
        write("victim", "a file in the snapshot", 0644);
        FolderSnapshots snapshots = new FolderSnapshots(store);
        snapshots.capture(folder, "c1");
        SortedMap<String, TreeState.Node> captured = TreeState.describe(folder);

        // What a guest could do after the checkpoint: swap directories and a file for links out of the folder.
        Path etc = Files.createDirectory(outside.resolve("etc"));
        Files.writeString(etc.resolve("f"), "outside: must stay");
        Files.createDirectories(etc.resolve("sub"));
        Files.writeString(etc.resolve("sub/g"), "outside too");
        Files.writeString(etc.resolve("passwd"), "root:x:0:0");
        Path etc2 = Files.createDirectory(outside.resolve("etc2"));
        Files.setPosixFilePermissions(etc2, PosixFilePermissions.fromString("rwx------"));
        Path secret = Files.writeString(outside.resolve("secret"), "outside file");
        chmod("ro", 0755);
        deleteTree(folder.resolve("d"));
        deleteTree(folder.resolve("ro"));
        Files.delete(folder.resolve("victim"));
        Files.createSymbolicLink(folder.resolve("d"), etc);
        Files.createSymbolicLink(folder.resolve("ro"), etc2);
        Files.createSymbolicLink(folder.resolve("victim"), secret);
        Files.createSymbolicLink(folder.resolve("extra"), etc); // not in the snapshot: removed, not emptied
        SortedMap<String, TreeState.Node> outsideBefore = TreeState.describe(outside);

        snapshots.restore("c1", folder);

        assertThat(TreeState.describe(outside)).isEqualTo(outsideBefore);
        assertThat(TreeState.describe(folder)).isEqualTo(captured);
        assertThat(Files.isSymbolicLink(folder.resolve("d"))).isFalse();
    }

    @Test
    void aFailedCaptureLeavesNothingAndEarlierSnapshotsRestorable() throws Exception {
        for (int i = 0; i < 10; i++) {
            write("f" + i, "first " + i, 0644);
        }
        Recorder recorder = new Recorder();
        FolderSnapshots snapshots = new FolderSnapshots(store, Clock.systemUTC(), recorder);
        snapshots.capture(folder, "good");
        SortedMap<String, TreeState.Node> good = TreeState.describe(folder);
        Set<String> objectsBefore = new ObjectStore(store.resolve("objects")).all();
        long spaceBefore = snapshots.bytesOnDisk();
        for (int i = 0; i < 10; i++) {
            Files.writeString(folder.resolve("f" + i), "second, longer " + i);
        }

        for (String point : List.of("object-stored", "manifest-written")) {
            recorder.failAt = point;
            recorder.failAfter = point.equals("object-stored") ? 3 : 0;
            assertThatThrownBy(() -> snapshots.capture(folder, "bad")).isInstanceOf(IOException.class)
                    .hasMessageContaining("simulated at " + point);
            assertThat(snapshots.ids()).containsExactly("good");
            assertThat(new ObjectStore(store.resolve("objects")).all()).isEqualTo(objectsBefore);
            assertThat(leftovers()).isEmpty();
            assertThat(snapshots.bytesOnDisk()).isEqualTo(spaceBefore);
        }
        snapshots.restore("good", folder);
        assertThat(TreeState.describe(folder)).isEqualTo(good);
    }

    @Test
    void garbageACrashLeftIsCollectedAndSnapshotsSurvive() throws Exception {
        write("f", "kept", 0644);
        FolderSnapshots snapshots = new FolderSnapshots(store);
        snapshots.capture(folder, "good");
        SortedMap<String, TreeState.Node> good = TreeState.describe(folder);
        // As a crash mid-capture leaves them: a half-written object, an object no manifest names yet,
        // a manifest not yet renamed.
        Files.writeString(store.resolve("objects/.tmp-crashed"), "half an obj");
        String orphan = TreeState.sha256("orphan".getBytes(UTF_8));
        Files.createDirectories(objectPath(orphan).getParent());
        Files.writeString(objectPath(orphan), "orphan");
        Files.writeString(store.resolve("manifests/.tmp-next-123.json"), "{\"format\":");

        assertThat(snapshots.ids()).containsExactly("good");
        snapshots.collectGarbage();

        assertThat(leftovers()).isEmpty();
        assertThat(objectPath(orphan)).doesNotExist();
        Files.writeString(folder.resolve("f"), "changed");
        snapshots.restore("good", folder);
        assertThat(TreeState.describe(folder)).isEqualTo(good);
    }

    @Test
    void aDamagedManifestIsRefusedAndADamagedObjectIsNotWritten() throws Exception {
        write("a", "aaaa", 0644);
        write("b", "bbbb", 0644);
        FolderSnapshots snapshots = new FolderSnapshots(store);
        snapshots.capture(folder, "c1");
        Path manifest = store.resolve("manifests/c1.json");
        byte[] good = Files.readAllBytes(manifest);
        Files.writeString(manifest, new String(good, ISO_8859_1).replace("\"mode\":420", "\"mode\":511"),
                ISO_8859_1);
        assertThatThrownBy(() -> snapshots.restore("c1", folder)).isInstanceOf(IOException.class)
                .hasMessageContaining("checksum mismatch");
        Files.write(manifest, good);

        Path object = objectPath(TreeState.sha256("bbbb".getBytes(UTF_8)));
        Files.setPosixFilePermissions(object, PosixFilePermissions.fromString("rw-r--r--"));
        Files.writeString(object, "BBBB");
        Files.writeString(folder.resolve("b"), "current content");
        assertThatThrownBy(() -> snapshots.restore("c1", folder)).isInstanceOf(IOException.class)
                .hasMessageContaining("is damaged");
        assertThat(Files.readString(folder.resolve("b"))).isEqualTo("current content");
        try (Stream<Path> s = Files.list(folder)) {
            assertThat(s.map(p -> p.getFileName().toString())).noneMatch(n -> n.startsWith(".kosa8-restore-"));
        }
    }

    @Test
    void permissionsBindAsForAnOrdinaryUser() throws Exception {
        // Everything in the folder belongs to the daemon's user, but a guest can chmod 000 what it made.
        write("secret", "mode 000", 0644);
        write("closed/inside", "in a 000 directory", 0644);
        write("ro/inside", "in a 0555 directory", 0644);
        chmod("secret", 0);
        chmod("closed", 0);
        chmod("ro", 0555);
        SortedMap<String, TreeState.Node> captured = TreeState.describe(folder);
        FolderSnapshots snapshots = new FolderSnapshots(store);

        WithoutRootOverride.run(() -> snapshots.capture(folder, "c1"));
        assertThat(TreeState.describe(folder)).as("modes put back after capture").isEqualTo(captured);

        chmod("closed", 0755);
        chmod("ro", 0755);
        Files.writeString(folder.resolve("closed/inside"), "changed");
        Files.writeString(folder.resolve("ro/added"), "added");
        Files.writeString(folder.resolve("ro/inside"), "changed");
        Files.createDirectories(folder.resolve("closed/new/deeper"));
        chmod("closed/new", 0);
        chmod("closed", 0);
        chmod("ro", 0555);
        chmod("secret", 0644);
        Files.writeString(folder.resolve("secret"), "changed");
        chmod("secret", 0);

        WithoutRootOverride.run(() -> snapshots.restore("c1", folder));
        assertThat(TreeState.describe(folder)).isEqualTo(captured);
    }

    @Test
    void withoutRootOverrideReallyBinds() throws Exception {
        assumeThat(WithoutRootOverride.isRoot()).isTrue();
        write("secret", "mode 000", 0);
        WithoutRootOverride.run(() -> assertThatThrownBy(() -> Files.readString(folder.resolve("secret")))
                .isInstanceOf(java.nio.file.AccessDeniedException.class));
        assertThat(Files.readString(folder.resolve("secret"))).isEqualTo("mode 000");
    }

    @Test
    void namesAndStatesAreChecked() throws Exception {
        FolderSnapshots snapshots = new FolderSnapshots(store);
        write("f", "x", 0644);
        assertThatThrownBy(() -> snapshots.capture(folder, "../evil")).isInstanceOf(KosaException.class)
                .hasMessageContaining("bad snapshot name");
        assertThatThrownBy(() -> snapshots.restore("nope", folder)).isInstanceOf(KosaException.class)
                .hasMessageContaining("no workspace snapshot named nope");
        snapshots.capture(folder, "c1");
        assertThatThrownBy(() -> snapshots.capture(folder, "c1")).isInstanceOf(KosaException.class)
                .hasMessageContaining("already exists");
        assertThatThrownBy(() -> snapshots.restore("c1", tmp.resolve("missing"))).isInstanceOf(KosaException.class)
                .hasMessageContaining("missing or not a folder");
        assertThat(snapshots.ids()).containsExactly("c1");
        FolderSnapshots inside = new FolderSnapshots(folder.resolve(".checkpoints"));
        assertThatThrownBy(() -> inside.capture(folder, "c1")).isInstanceOf(KosaException.class)
                .hasMessageContaining("overlap");
        assertThat(folder.resolve(".checkpoints")).as("refused before anything was made").doesNotExist();
    }

    @Test
    void socketsAndDevicesAreNotKept() throws Exception {
        write("f", "x", 0644);
        Path sock = folder.resolve("sock");
        try (var server = java.nio.channels.ServerSocketChannel.open(java.net.StandardProtocolFamily.UNIX)) {
            server.bind(java.net.UnixDomainSocketAddress.of(sock));
            FolderSnapshots snapshots = new FolderSnapshots(store);
            Capture c = snapshots.capture(folder, "c1");
            assertThat(c.entries()).isEqualTo(1);
            Restore r = snapshots.restore("c1", folder);
            assertThat(r.entriesRemoved()).as("restore removes what the snapshot does not have").isEqualTo(1);
            assertThat(Files.exists(sock, NOFOLLOW_LINKS)).isFalse();
        }
    }

    // ---- helpers

    /**
     * A rewind decodes a manifest once for the daemon's life (ManifestCache), but only while its file is the same
     * one, unchanged: damaged in place after it was read (same size, its mtime put back), it is read again and
     * refused; replaced by another file, that one is read.
     */
    @Test
    void aManifestIsDecodedOnceButNotServedFromMemoryOnceItsFileChanged() throws Exception {
        write("a", "alpha", 0644);
        FolderSnapshots snapshots = new FolderSnapshots(store, LATER, Hooks.NONE);
        snapshots.capture(folder, "c1");
        snapshots.restore("c1", folder);
        Manifest first = snapshots.load("c1");
        assertThat(snapshots.load("c1")).as("held, not decoded again").isSameAs(first);

        Path manifest = store.resolve("manifests/c1.json");
        byte[] good = Files.readAllBytes(manifest);
        FileTime mtime = Files.getLastModifiedTime(manifest);
        Files.writeString(manifest, new String(good, ISO_8859_1).replace("\"mode\":420", "\"mode\":511"),
                ISO_8859_1);
        Files.setLastModifiedTime(manifest, mtime);
        assertThat(Files.size(manifest)).isEqualTo(good.length);
        assertThatThrownBy(() -> snapshots.restore("c1", folder)).isInstanceOf(IOException.class)
                .hasMessageContaining("checksum mismatch");

        Path other = store.resolve("manifests/other.json");
        Files.write(other, good);
        Files.move(other, manifest, java.nio.file.StandardCopyOption.REPLACE_EXISTING);
        assertThat(snapshots.load("c1")).isEqualTo(first).isNotSameAs(first);
    }

    /**
     * A snapshot whose object is missing is refused before anything changes, the first time it is restored; once
     * a restore found all its objects, the next does not look again (the daemon never deletes what a kept
     * snapshot needs), and an object taken away behind its back is still found missing before its file is
     * touched: that file keeps its content and the error names the damage.
     */
    @Test
    void aMissingObjectIsFoundBeforeTheFileItWouldReplaceIsTouched() throws Exception {
        write("a", "alpha", 0644);
        write("b", "bravo", 0644);
        FolderSnapshots snapshots = new FolderSnapshots(store, LATER, Hooks.NONE);
        snapshots.capture(folder, "c1");
        Path alpha = objectPath(TreeState.sha256("alpha".getBytes(UTF_8)));
        Path moved = tmp.resolve("alpha-object");
        Files.move(alpha, moved);
        Files.writeString(folder.resolve("a"), "changed on the host");
        Files.writeString(folder.resolve("b"), "changed too");
        assertThatThrownBy(() -> snapshots.restore("c1", folder)).isInstanceOf(IOException.class)
                .hasMessageContaining("is damaged").hasMessageContaining("nothing was changed");
        assertThat(Files.readString(folder.resolve("b"))).as("nothing was changed").isEqualTo("changed too");

        Files.move(moved, alpha);
        snapshots.restore("c1", folder);
        assertThat(Files.readString(folder.resolve("a"))).isEqualTo("alpha");

        Files.move(alpha, moved);
        Files.writeString(folder.resolve("a"), "changed again");
        assertThatThrownBy(() -> snapshots.restore("c1", folder)).isInstanceOf(IOException.class);
        assertThat(Files.readString(folder.resolve("a"))).as("not lost to a missing object")
                .isEqualTo("changed again");
    }

    private void write(String path, String content, int mode) throws IOException {
        Path p = folder.resolve(path);
        Files.createDirectories(p.getParent());
        Files.writeString(p, content);
        Files.setPosixFilePermissions(p, PosixFilePermissions.fromString(rwx(mode)));
        if ((mode & 07000) != 0) {
            Files.setAttribute(p, "unix:mode", mode);
        }
    }

    private void chmod(String path, int mode) throws IOException {
        Files.setAttribute(folder.resolve(path), "unix:mode", mode);
    }

    /** With touch(1): java.nio opens the file to set its times, which blocks on a FIFO. */
    private void setMtime(String path, long sec, int nsec) throws Exception {
        Process p = new ProcessBuilder("touch", "-h", "-m", "-d", String.format("@%d.%09d", sec, nsec),
                folder.resolve(path).toString()).inheritIO().start();
        assertThat(p.waitFor()).isZero();
        assertThat(Files.getLastModifiedTime(folder.resolve(path), NOFOLLOW_LINKS)).as("nanoseconds kept")
                .isEqualTo(FileTime.from(Instant.ofEpochSecond(sec, nsec)));
    }

    private void mkfifo(String path) throws Exception {
        Process p = new ProcessBuilder("mkfifo", folder.resolve(path).toString()).inheritIO().start();
        assertThat(p.waitFor()).isZero();
    }

    private static String rwx(int mode) {
        String all = "rwxrwxrwx";
        StringBuilder b = new StringBuilder();
        for (int i = 0; i < 9; i++) {
            b.append((mode & (0400 >> i)) != 0 ? all.charAt(i) : '-');
        }
        return b.toString();
    }

    static void deleteTree(Path p) throws IOException {
        if (Files.isDirectory(p, NOFOLLOW_LINKS)) {
            Files.setAttribute(p, "unix:mode", 0700);
            try (Stream<Path> s = Files.list(p)) {
                for (Path c : s.toList()) {
                    deleteTree(c);
                }
            }
        }
        Files.delete(p);
    }

    private Path objectPath(String sha) {
        return store.resolve("objects").resolve(sha.substring(0, 2)).resolve(sha.substring(2));
    }

    private long objectCount() throws IOException {
        return new ObjectStore(store.resolve("objects")).all().size();
    }

    private static long allocated(Path p) throws IOException {
        Process du = new ProcessBuilder("stat", "-c", "%b %B", p.toString()).start();
        String[] out = new String(du.getInputStream().readAllBytes(), UTF_8).trim().split(" ");
        return Long.parseLong(out[0]) * Long.parseLong(out[1]);
    }

    /** Temporary files anywhere in the store. */
    private List<Path> leftovers() throws IOException {
        try (Stream<Path> s = Files.walk(store)) {
            return s.filter(p -> p.getFileName().toString().startsWith(".tmp-")).sorted(Comparator.naturalOrder())
                    .toList();
        }
    }
}
