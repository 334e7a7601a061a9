package dev.kosa8.agent;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kosa8.protocol.FileOp;
import dev.kosa8.protocol.Message;
import dev.kosa8.protocol.WatchEvent;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The agent's inotify watch on the build machine's own kernel. */
class DirWatchTest {
    @TempDir
    Path dir;

    private final List<WatchEvent> seen = new CopyOnWriteArrayList<>();
    private volatile boolean stop;

    private Thread run(DirWatch w) {
        return Thread.ofPlatform().start(() -> w.run(seen::addAll, () -> stop));
    }

    private void await(Predicate<WatchEvent> p) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (System.nanoTime() < deadline) {
            if (seen.stream().anyMatch(p)) {
                return;
            }
            Thread.sleep(5);
        }
        throw new AssertionError("not seen; seen: " + seen);
    }

    private static Predicate<WatchEvent> event(WatchEvent.Kind k, Path p) {
        return e -> e.kind() == k && e.path().equals(p.toString());
    }

    @Test
    void seesCreateWriteChmodRenameAndRemove() throws Exception {
        try (DirWatch w = new DirWatch(new FileOp.Watch(dir.toString(), false), 10)) {
            Thread t = run(w);
            Path f = dir.resolve("f");
            Files.writeString(f, "x");
            await(event(WatchEvent.Kind.CREATE, f));
            await(event(WatchEvent.Kind.WRITE, f));
            Files.setAttribute(f, "unix:mode", 0600);
            await(event(WatchEvent.Kind.CHMOD, f));
            Files.move(f, dir.resolve("g"));
            await(event(WatchEvent.Kind.RENAME, f));
            await(event(WatchEvent.Kind.CREATE, dir.resolve("g")));
            Files.delete(dir.resolve("g"));
            await(event(WatchEvent.Kind.REMOVE, dir.resolve("g")));
            stop = true;
            t.join(5000);
            assertThat(t.isAlive()).isFalse();
        }
    }

    @Test
    void recursiveWatchesNewDirectoriesAndReportsWhatCameBeforeItsWatch() throws Exception {
        Files.createDirectories(dir.resolve("old/deep"));
        try (DirWatch w = new DirWatch(new FileOp.Watch(dir.toString(), true), 100)) {
            assertThat(w.watched()).isEqualTo(3);
            Thread t = run(w);
            Files.writeString(dir.resolve("old/deep/f"), "x");
            await(event(WatchEvent.Kind.CREATE, dir.resolve("old/deep/f")));
            Files.createDirectories(dir.resolve("new/sub"));
            await(event(WatchEvent.Kind.CREATE, dir.resolve("new/sub")));
            Files.writeString(dir.resolve("new/sub/g"), "y");
            await(event(WatchEvent.Kind.WRITE, dir.resolve("new/sub/g")));
            stop = true;
            t.join(5000);
        }
    }

    @Test
    void directoriesBeyondTheBoundAreReportedAsOverflowOnce() throws Exception {
        for (int i = 0; i < 5; i++) {
            Files.createDirectories(dir.resolve("d" + i));
        }
        try (DirWatch w = new DirWatch(new FileOp.Watch(dir.toString(), true), 3)) {
            assertThat(w.watched()).isEqualTo(3);
            Thread t = run(w);
            await(event(WatchEvent.Kind.OVERFLOW, dir));
            Files.createDirectories(dir.resolve("more"));
            await(event(WatchEvent.Kind.CREATE, dir.resolve("more")));
            assertThat(seen.stream().filter(e -> e.kind() == WatchEvent.Kind.OVERFLOW)).hasSize(1);
            stop = true;
            t.join(5000);
        }
    }

    @Test
    void theWatchEndsWhenItsDirectoryGoes() throws Exception {
        Path sub = Files.createDirectories(dir.resolve("w"));
        DirWatch w = new DirWatch(new FileOp.Watch(sub.toString(), false), 10);
        Thread t = run(w);
        Files.delete(sub);
        t.join(5000);
        assertThat(t.isAlive()).isFalse();
        assertThat(seen).contains(new WatchEvent(WatchEvent.Kind.REMOVE, sub.toString()));
        w.close();
    }

    @Test
    void aMissingOrNonDirectoryPathFailsWithItsKind() throws Exception {
        Files.writeString(dir.resolve("file"), "x");
        for (var c : List.of(new Object[] {dir + "/missing", Message.ErrorCode.NOT_FOUND},
                new Object[] {dir + "/file", Message.ErrorCode.NOT_DIRECTORY})) {
            try (DirWatch w = new DirWatch(new FileOp.Watch((String) c[0], false), 10)) {
                throw new AssertionError("watched " + c[0]);
            } catch (FileOps.Failure f) {
                assertThat(f.code).isEqualTo(c[1]);
            }
        }
    }
}
