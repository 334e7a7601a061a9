package dev.kosa8.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assumptions.assumeThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Forks whose folders are copy-on-write views (issue 33): on this machine's ext4, which has no clones, two forks
 * of one checkpoint share one copy of its folder, each storing only what its guest changed; each guest sees the
 * whole folder and its own changes, the other's and the original's folders untouched; the view survives a
 * checkpoint and rewind, a stop and start, and a diff and adopt read it; the shared copy goes with the last fork.
 */
class ForkViewIT {
    static final Duration T = Duration.ofMinutes(3);
    static final Duration FORK = Duration.ofMinutes(8);
    static final int BIG = 24 << 20;

    @RegisterExtension
    static final ReplaceableSandbox SANDBOX = new ReplaceableSandbox("ForkViewIT", "--memory", "256M");

    @Test
    void twoForksShareOneCopyOfTheFolderAndEachKeepsOnlyWhatItChanged() throws Exception {
        assumeThat(dev.kosa8.workspace.FolderView.unavailable(Kosa.HOME.resolve("data/folder-bases")))
                .as("views on the file system of the kosa8 home (docs/checkpoints.md)").isEmpty();
        SharedSandbox.Booted box = SANDBOX.running();
        String id = box.id();
        Path folder = box.workspace();
        Files.writeString(folder.resolve("a.txt"), "first\n");
        Files.createDirectories(folder.resolve("dir"));
        Files.writeString(folder.resolve("dir/b.txt"), "bee\n");
        Files.write(folder.resolve("big.bin"), new byte[BIG]);
        String at = Kosa.ok(T, "checkpoint", id, "-m", "before the tries").stdout().strip();

        // --folder view: the default (auto) makes views only where the file system has no clones (this machine's
        // ext4), and CI's may have them; the choice itself is ForkFolderChoiceTest's
        Kosa.Result forked = Kosa.ok(FORK, "fork", id, at, "--count", "2", "--folder", "view");
        List<String> forks = forked.stdout().lines().toList();
        assertThat(forks).as(forked.toString()).hasSize(2);
        assertThat(forked.stderr()).contains("copy-on-write view");
        String one = forks.get(0);
        String two = forks.get(1);
        Path bases = Kosa.HOME.resolve("data/folder-bases");
        try {
            assertThat(Kosa.ok(T, "inspect", one).stdout()).contains("\"workspaceView\" : true");
            try (Stream<Path> b = Files.list(bases)) {
                assertThat(b.map(p -> p.getFileName().toString()).toList()).as("one base for both")
                        .containsExactly(id + "-" + at);
            }
            Path base = bases.resolve(id + "-" + at + "/tree");
            assertThat(base.resolve("big.bin")).hasSize(BIG);

            Kosa.ok(T, "exec", one, "--", "sh", "-euc", """
                    cd /workspace
                    test "$(cat a.txt dir/b.txt)" = "$(printf 'first\\nbee')"
                    test "$(stat -c %%s big.bin)" = %d
                    printf 'from one\\n' > a.txt
                    rm dir/b.txt
                    mkdir new && printf 'sea\\n' > new/c.txt
                    printf 'x' | dd of=big.bin bs=1 seek=5 conv=notrunc 2>/dev/null
                    sync
                    """.formatted(BIG));
            assertThat(Kosa.ok(T, "exec", two, "--", "cat", "/workspace/a.txt", "/workspace/dir/b.txt").stdout())
                    .as("the other fork sees the instant").isEqualTo("first\nbee\n");
            assertThat(Kosa.ok(T, "exec", two, "--", "stat", "-c", "%a", "/workspace").stdout().strip())
                    .as("the folder's own mode, as the original's").isEqualTo(box.exec(T, "stat", "-c", "%a",
                            "/workspace").stdout().strip());
            // what a guest can make of its layer must not stop the fork's removal (a walk cannot enter mode 000)
            Kosa.ok(T, "exec", two, "--", "sh", "-euc", "mkdir -p /workspace/locked/in && touch /workspace/locked/in/f"
                    + " && chmod 000 /workspace/locked/in /workspace/locked");
            assertThat(folder.resolve("a.txt")).as("the original's folder").hasContent("first");
            assertThat(folder.resolve("dir/b.txt")).hasContent("bee");
            assertThat(base.resolve("a.txt")).as("the shared base").hasContent("first");
            assertThat(base.resolve("dir/b.txt")).exists();
            Path upper = Kosa.HOME.resolve("data/sandboxes").resolve(one).resolve("folder-view/upper");
            assertThat(upper.resolve("a.txt")).hasContent("from one");
            assertThat(upper.resolve("new/c.txt")).hasContent("sea");
            assertThat(Files.exists(Kosa.HOME.resolve("data/sandboxes").resolve(two).resolve("folder-view/upper/a.txt")))
                    .as("a fork that did not change a file stores nothing of it").isFalse();

            Kosa.Result diff = Kosa.ok(T, "diff", one, "--name-only");
            assertThat(diff.stdout().lines().toList()).as(diff.toString())
                    .contains("a.txt", "big.bin", "dir/b.txt", "new/c.txt");

            // a checkpoint and a rewind read and write through the view
            String mid = Kosa.ok(T, "checkpoint", one, "-m", "one's try").stdout().strip();
            Kosa.ok(T, "exec", one, "--", "sh", "-euc", "printf 'later\\n' > /workspace/a.txt; rm -r /workspace/new");
            Kosa.ok(T, "rewind", one, mid);
            assertThat(Kosa.ok(T, "exec", one, "--", "cat", "/workspace/a.txt", "/workspace/new/c.txt").stdout())
                    .isEqualTo("from one\nsea\n");

            // stopped and started: the view is mounted again over what it kept
            Kosa.ok(T, "stop", one);
            assertThat(helpers(one)).as("the view let go with the machine").isZero();
            assertThat(Kosa.ok(T, "diff", one, "--name-only").stdout()).as("a stopped fork's view, mounted to read")
                    .contains("new/c.txt");
            assertThat(helpers(one)).as("and let go after").isZero();
            Kosa.ok(T, "start", one);
            assertThat(helpers(one)).as("one view while it runs").isEqualTo(1);
            assertThat(Kosa.ok(T, "exec", one, "--", "sh", "-c", "cat /workspace/a.txt; ls /workspace/dir").stdout())
                    .isEqualTo("from one\n");

            Kosa.Result adopted = Kosa.run(T, "adopt", one);
            assertThat(adopted.exitCode()).as(adopted.toString()).isZero();
            assertThat(folder.resolve("a.txt")).hasContent("from one");
            assertThat(folder.resolve("new/c.txt")).hasContent("sea");
            assertThat(folder.resolve("dir/b.txt")).doesNotExist();

            Kosa.ok(T, "rm", "-f", one);
            assertThat(base).as("the other fork still uses the base").isDirectory();
        } finally {
            Kosa.run(T, "rm", "-f", one, two); // the one removed already is said, the other removed
        }
        assertThat(bases.resolve(id + "-" + at)).as("the base goes with the last fork").doesNotExist();
        assertThat(count(Kosa.HOME.resolve("data/sandboxes").resolve(one))).isZero();
        assertThat(count(Kosa.HOME.resolve("data/sandboxes").resolve(two))).as("its locked layer removed too").isZero();
    }

    /** The view helpers running for sandbox {@code id}'s folder. */
    private static long helpers(String id) {
        return ProcessHandle.allProcesses().filter(p -> p.info().arguments().map(a -> String.join(" ", a))
                .filter(a -> a.contains("kosa8-folder-view") && a.contains("/" + id + "/folder-view")).isPresent())
                .count();
    }

    private static long count(Path p) throws IOException {
        if (!Files.exists(p)) {
            return 0;
        }
        try (Stream<Path> s = Files.walk(p)) {
            return s.count();
        }
    }
}
