package dev.kosa8.workspace;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.function.Predicate;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The folder's watch on a real directory with real inotify: each change made on the host names the
 * directory (by the qid path the server gives it) and the name that changed, in directories that
 * were there at the start and in ones made or moved in since.
 */
class FolderWatchTest {
    @TempDir
    Path folder;
    private int root;
    private FolderWatch watch;

    @BeforeEach
    void open() throws Exception {
        assumeTrue(LinuxFs.AVAILABLE, "Linux only");
        Files.createDirectories(folder.resolve("a/b"));
        Files.writeString(folder.resolve("a/b/f"), "one");
        root = LinuxFs.openRoot(folder.toString());
        watch = FolderWatch.open(root, st -> st.ino(), FolderWatch.MAX_DIRECTORIES, () -> false);
    }

    @AfterEach
    void close() throws Exception {
        if (watch != null) {
            watch.close();
            LinuxFs.close(root);
        }
    }

    private long ino(Path p) throws Exception {
        return (long) Files.getAttribute(p, "unix:ino");
    }

    /** Every name the watch has given in this test. */
    private final List<FolderWatch.Name> seen = new ArrayList<>();

    /** A name as the test checks it: the directory's qid path and the name. */
    private static String name(long dir, String name) {
        return dir + " " + name;
    }

    private List<String> seenNames() {
        return seen.stream().map(n -> name(n.dir(), n.name())).toList();
    }

    /** Polls until a name matching {@code wanted} has come, for up to 5 s; returns everything seen so far. */
    private List<FolderWatch.Name> until(Predicate<FolderWatch.Name> wanted) throws Exception {
        long end = System.nanoTime() + 5_000_000_000L;
        while (System.nanoTime() < end && seen.stream().noneMatch(wanted)) {
            seen.addAll(watch.poll(100));
        }
        return seen;
    }

    @Test
    void everyDirectoryAtTheStartIsWatched() {
        assertThat(watch.complete()).as("%s", watch.incomplete()).isTrue();
        assertThat(watch.directories()).isEqualTo(3);
    }

    @Test
    void aWriteNamesTheFileInItsDirectory() throws Exception {
        long b = ino(folder.resolve("a/b"));
        Files.writeString(folder.resolve("a/b/f"), "two");
        until(n -> (n.dir() == b && n.name().equals("f")));
        assertThat(seenNames()).contains(name(b, "f"));
        assertThat(seen).filteredOn(n -> n.dir() == b).allSatisfy(n -> assertThat(n.dirPath()).isEqualTo("a/b"));
        long a = ino(folder.resolve("a"));
        assertThat(seenNames()).as("a write changes no directory").doesNotContain(name(a, "b"));
    }

    @Test
    void chmodRemoveAndRenameNameWhatTheyChange() throws Exception {
        long a = ino(folder.resolve("a"));
        long b = ino(folder.resolve("a/b"));
        Files.setPosixFilePermissions(folder.resolve("a/b/f"), Set.of());
        Files.move(folder.resolve("a/b/f"), folder.resolve("a/g"));
        Files.delete(folder.resolve("a/g"));
        until(n -> (n.dir() == b && n.name().equals("f")));
        until(n -> (n.dir() == a && n.name().equals("g")));
        until(n -> (n.dir() == a && n.name().equals("b")));
        assertThat(seenNames()).contains(name(b, "f"), name(a, "g"))
                .as("a directory a name left, named in its parent").contains(name(a, "b"));
    }

    @Test
    void aDirectoryMadeOrMovedInIsWatchedToo() throws Exception {
        Files.createDirectories(folder.resolve("new/deeper"));
        until(n -> n.name().equals("new")); // its watch, and deeper's, are added as this is read
        Path outside = Files.createTempDirectory("moved-in");
        Files.createDirectories(outside.resolve("m"));
        Files.move(outside, folder.resolve("in"));
        until(n -> n.name().equals("in"));
        Files.writeString(folder.resolve("new/deeper/x"), "x");
        Files.writeString(folder.resolve("in/m/y"), "y");
        long deeper = ino(folder.resolve("new/deeper"));
        long m = ino(folder.resolve("in/m"));
        until(n -> (n.dir() == m && n.name().equals("y")));
        until(n -> (n.dir() == deeper && n.name().equals("x")));
        assertThat(seenNames()).contains(name(deeper, "x"), name(m, "y"));
    }
}
