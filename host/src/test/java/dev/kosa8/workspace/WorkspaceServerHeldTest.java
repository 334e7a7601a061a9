package dev.kosa8.workspace;

import static dev.kosa8.workspace.P9TestClient.O_CREAT;
import static dev.kosa8.workspace.P9TestClient.O_DIRECTORY;
import static dev.kosa8.workspace.P9TestClient.O_RDONLY;
import static dev.kosa8.workspace.P9TestClient.O_RDWR;
import static dev.kosa8.workspace.P9TestClient.O_TRUNC;
import static dev.kosa8.workspace.P9TestClient.O_WRONLY;
import static dev.kosa8.workspace.P9TestClient.ROOT;
import static dev.kosa8.workspace.P9TestClient.data;
import static dev.kosa8.workspace.P9TestClient.errno;
import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.kosa8.host.KosaException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Held paths through the server, as the guest kernel would ask: what the guest writes to a path
 * host tools run or obey lands in the held layer, the guest sees its own version, and the folder
 * keeps what it had; every way around it (renames, links, case, symlinks, an open descriptor) is
 * refused or held too. Then review, accept and reject against the folder.
 */
class WorkspaceServerHeldTest {
    private static final int ENOENT = 2, EXDEV = 18;

    @TempDir
    Path tmp;
    Path folder;
    Path heldDir;
    HeldChanges held;
    P9TestClient c;

    @BeforeEach
    void serve() throws Exception {
        folder = Files.createDirectory(tmp.resolve("share"));
        Files.createDirectories(folder.resolve(".git/hooks"));
        Files.writeString(folder.resolve(".git/config"), "[core]\n\tbare = false\n");
        Files.writeString(folder.resolve(".git/hooks/pre-commit.sample"), "#!/bin/sh\n");
        Files.writeString(folder.resolve(".git/HEAD"), "ref: refs/heads/main\n");
        Files.writeString(folder.resolve(".envrc"), "export A=1\n");
        heldDir = tmp.resolve("held");
        held = HeldChanges.open(heldDir, null, m -> { });
        c = P9TestClient.attachedHeld(folder, tmp, held);
    }

    @AfterEach
    void close() {
        c.closeWithoutInternalErrors();
    }

    private void walkOk(int fid, int newFid, String... names) throws Exception {
        WorkspaceServerTest.walkOk(c, fid, newFid, names);
    }

    /** Creates {@code name} in directory fid {@code dir} (walked to a new fid first) with {@code text}. */
    private void create(int dirFid, String name, String text) throws Exception {
        walkOk(dirFid, 90);
        assertThat(c.lcreate(90, name, O_WRONLY | O_CREAT | O_TRUNC, 0755)).isInstanceOf(P9Reply.Lcreate.class);
        assertThat(c.write(90, 0, text.getBytes(UTF_8))).isInstanceOf(P9Reply.Write.class);
        c.clunk(90);
    }

    private String readGuest(String... path) throws Exception {
        walkOk(ROOT, 91, path);
        assertThat(c.lopen(91, O_RDONLY)).isInstanceOf(P9Reply.Lopen.class);
        String s = new String(c.readAll(91, 4096), UTF_8);
        c.clunk(91);
        return s;
    }

    private List<String> listGuest(String... path) throws Exception {
        walkOk(ROOT, 92, path);
        assertThat(c.lopen(92, O_RDONLY | O_DIRECTORY)).isInstanceOf(P9Reply.Lopen.class);
        List<String> names = new ArrayList<>();
        long offset = 0;
        while (true) {
            P9Reply r = c.readdir(92, offset, 8192);
            List<P9Codec.DirEntry> entries = P9Codec.dirEntries(((P9Reply.Readdir) r).data());
            if (entries.isEmpty()) {
                break;
            }
            for (P9Codec.DirEntry e : entries) {
                names.add(e.name());
                offset = e.offset();
            }
        }
        c.clunk(92);
        names.removeIf(n -> n.equals(".") || n.equals(".."));
        return names;
    }

    @Test
    void aHookPlantedByTheGuestIsHeldTheGuestRunsItsOwnAndTheHostHasNone() throws Exception {
        walkOk(ROOT, 1, ".git", "hooks");
        create(1, "pre-commit", "#!/bin/sh\ntouch /tmp/pwned\n");

        assertThat(folder.resolve(".git/hooks/pre-commit")).doesNotExist();
        assertThat(readGuest(".git", "hooks", "pre-commit")).contains("pwned");
        assertThat(listGuest(".git", "hooks")).containsExactlyInAnyOrder("pre-commit", "pre-commit.sample");
        assertThat(held.units()).extracting(HeldChanges.Unit::path).containsExactly(".git/hooks");
    }

    @Test
    void gitConfigWrittenThroughItsLockFileIsHeldAndTheGuestReadsItsOwn() throws Exception {
        walkOk(ROOT, 1, ".git");
        create(1, "config.lock", "[core]\n\tfsmonitor = touch /tmp/pwned\n");
        walkOk(ROOT, 2, ".git");
        assertThat(c.renameAt(1, "config.lock", 2, "config")).isInstanceOf(P9Reply.RenameAt.class);

        assertThat(Files.readString(folder.resolve(".git/config"))).isEqualTo("[core]\n\tbare = false\n");
        assertThat(folder.resolve(".git/config.lock")).doesNotExist();
        assertThat(readGuest(".git", "config")).contains("fsmonitor");
        assertThat(listGuest(".git")).containsExactlyInAnyOrder("hooks", "config", "HEAD");
    }

    @Test
    void ordinaryGitWorkReachesTheFolder() throws Exception {
        walkOk(ROOT, 1, ".git");
        create(1, "index", "DIRC");
        walkOk(ROOT, 2, ".git");
        assertThat(c.mkdir(2, "objects", 0755)).isInstanceOf(P9Reply.Mkdir.class);
        create(1, "HEAD.lock", "ref: refs/heads/other\n");
        assertThat(c.renameAt(1, "HEAD.lock", 2, "HEAD")).isInstanceOf(P9Reply.RenameAt.class);

        assertThat(Files.readString(folder.resolve(".git/index"))).isEqualTo("DIRC");
        assertThat(folder.resolve(".git/objects")).isDirectory();
        assertThat(Files.readString(folder.resolve(".git/HEAD"))).contains("other");
        assertThat(held.units()).isEmpty();
    }

    @Test
    void aDeletedEnvrcStaysOnTheHostAndIsGoneForTheGuest() throws Exception {
        assertThat(c.unlinkAt(ROOT, ".envrc", 0)).isInstanceOf(P9Reply.UnlinkAt.class);

        assertThat(folder.resolve(".envrc")).exists();
        assertThat(errno(c.walk(ROOT, 1, ".envrc"))).isEqualTo(ENOENT);
        assertThat(listGuest()).doesNotContain(".envrc").contains(".git");
        assertThat(held.review(folder, false)).singleElement()
                .satisfies(e -> assertThat(e.change()).isEqualTo(HeldChanges.Change.DELETE));
    }

    @Test
    void caseVariantsAreHeldAsTheNamesACaseFoldingFileSystemWouldGiveGit() throws Exception {
        walkOk(ROOT, 1);
        assertThat(c.mkdir(1, "sub", 0755)).isInstanceOf(P9Reply.Mkdir.class);
        walkOk(ROOT, 2, "sub");
        assertThat(c.mkdir(2, ".GIT", 0755)).isInstanceOf(P9Reply.Mkdir.class);
        walkOk(ROOT, 3, "sub", ".GIT");
        assertThat(c.mkdir(3, "Hooks", 0755)).isInstanceOf(P9Reply.Mkdir.class);

        assertThat(folder.resolve("sub/.GIT")).isDirectory();
        assertThat(folder.resolve("sub/.GIT/Hooks")).doesNotExist();
        assertThat(listGuest("sub", ".GIT")).containsExactly("Hooks");
    }

    @Test
    void symlinksThatLeadOutOfTheFolderAreHeldAndThoseInsideAreNot() throws Exception {
        assertThat(c.symlink(ROOT, "key", "/root/.ssh/id_rsa")).isInstanceOf(P9Reply.Symlink.class);
        assertThat(c.symlink(ROOT, "up", "../../etc")).isInstanceOf(P9Reply.Symlink.class);
        assertThat(c.symlink(ROOT, "sneaky", "x/../..")).isInstanceOf(P9Reply.Symlink.class);
        // inside, into .git too: git-annex links every annexed file to .git/annex/objects
        assertThat(c.symlink(ROOT, "ok", ".git/HEAD")).isInstanceOf(P9Reply.Symlink.class);

        assertThat(Files.exists(folder.resolve("key"), LinkOption.NOFOLLOW_LINKS)).isFalse();
        assertThat(Files.exists(folder.resolve("up"), LinkOption.NOFOLLOW_LINKS)).isFalse();
        assertThat(Files.exists(folder.resolve("sneaky"), LinkOption.NOFOLLOW_LINKS)).isFalse();
        assertThat(Files.isSymbolicLink(folder.resolve("ok"))).isTrue();
        walkOk(ROOT, 1, "key");
        assertThat(c.readlink(1)).isEqualTo(new P9Reply.Readlink("/root/.ssh/id_rsa"));
        assertThat(listGuest()).contains("key", "up", "sneaky", "ok");
    }

    @Test
    void aSymlinkMovedToWhereItLeadsOutIsHeldAndADirectoryCarryingOneThereIsRefused() throws Exception {
        walkOk(ROOT, 1);
        c.mkdir(1, "a", 0755);
        walkOk(ROOT, 2, "a");
        assertThat(c.symlink(2, "l", "../x")).isInstanceOf(P9Reply.Symlink.class);
        assertThat(Files.isSymbolicLink(folder.resolve("a/l"))).isTrue();

        // moved on its own to where it leads out: held there
        assertThat(c.renameAt(2, "l", ROOT, "l")).isInstanceOf(P9Reply.RenameAt.class);
        assertThat(Files.exists(folder.resolve("l"), LinkOption.NOFOLLOW_LINKS)).isFalse();
        assertThat(Files.exists(folder.resolve("a/l"), LinkOption.NOFOLLOW_LINKS)).isFalse();
        walkOk(ROOT, 4, "l");
        assertThat(c.readlink(4)).isEqualTo(new P9Reply.Readlink("../x"));
        c.mkdir(2, "b", 0755);
        walkOk(ROOT, 3, "a", "b");
        assertThat(c.symlink(3, "m", "../../y")).isInstanceOf(P9Reply.Symlink.class);
        // a/b moved to the root: its link would climb two levels from one
        assertThat(errno(c.renameAt(2, "b", ROOT, "b"))).isEqualTo(EXDEV);
        assertThat(Files.isSymbolicLink(folder.resolve("a/b/m"))).isTrue();
    }

    @Test
    void aDirectoryRenamedOntoGitIsRefusedAndFilesMovedIntoItAreHeld() throws Exception {
        Path other = folder.resolve("proj");
        Files.createDirectories(other.resolve("evil/hooks"));
        Files.writeString(other.resolve("evil/hooks/pre-commit"), "#!/bin/sh\n");
        Files.writeString(other.resolve("evil/config"), "[core]\n\tfsmonitor = x\n");
        walkOk(ROOT, 1, "proj");

        assertThat(errno(c.renameAt(1, "evil", 1, ".git"))).isEqualTo(EXDEV);
        assertThat(errno(c.renameAt(1, "evil", ROOT, "bare.git"))).isEqualTo(EXDEV);
        walkOk(ROOT, 2, "proj", "evil");
        walkOk(ROOT, 3, ".git");
        // and one file at a time, into the hooks: across the layer's edge
        walkOk(ROOT, 4, "proj", "evil", "hooks");
        walkOk(ROOT, 5, ".git", "hooks");
        assertThat(c.renameAt(4, "pre-commit", 5, "pre-commit")).isInstanceOf(P9Reply.RenameAt.class);
        assertThat(c.renameAt(2, "config", 3, "config")).isInstanceOf(P9Reply.RenameAt.class);
        assertThat(readGuest(".git", "config")).contains("fsmonitor");
        assertThat(folder.resolve("proj/evil/config")).doesNotExist();
        assertThat(folder.resolve("proj/.git")).doesNotExist();
        assertThat(Files.readString(folder.resolve(".git/config"))).doesNotContain("fsmonitor");
        assertThat(folder.resolve(".git/hooks/pre-commit")).doesNotExist();
    }

    @Test
    void aFileRenamedIntoPlaceAsSedDoesItIsHeldAndOneRenamedOutIsAnOrdinaryFile() throws Exception {
        walkOk(ROOT, 1);
        create(1, "sedAb12Cd", "export A=sed\n");
        assertThat(c.renameAt(ROOT, "sedAb12Cd", ROOT, ".envrc")).isInstanceOf(P9Reply.RenameAt.class);
        assertThat(Files.readString(folder.resolve(".envrc"))).isEqualTo("export A=1\n");
        assertThat(folder.resolve("sedAb12Cd")).doesNotExist();
        assertThat(readGuest(".envrc")).isEqualTo("export A=sed\n");
        assertThat(listGuest()).containsOnlyOnce(".envrc").doesNotContain("sedAb12Cd");

        assertThat(c.renameAt(ROOT, ".envrc", ROOT, "envrc.bak")).isInstanceOf(P9Reply.RenameAt.class);
        assertThat(Files.readString(folder.resolve("envrc.bak"))).isEqualTo("export A=sed\n");
        assertThat(Files.readString(folder.resolve(".envrc"))).isEqualTo("export A=1\n");
        assertThat(errno(c.walk(ROOT, 2, ".envrc"))).isEqualTo(ENOENT);
    }

    @Test
    void gitMovedAsideStaysWholeOnTheHost() throws Exception {
        assertThat(errno(c.renameAt(ROOT, ".git", ROOT, ".git-aside"))).isEqualTo(EXDEV);
        walkOk(ROOT, 1, ".git");
        assertThat(errno(c.renameAt(1, "hooks", ROOT, "hooks-aside"))).isEqualTo(EXDEV);
        assertThat(folder.resolve(".git/hooks/pre-commit.sample")).exists();
    }

    @Test
    void aDirectoryHoldingTheUsersOwnHooksOrEnvrcIsNotMovedAsAWhole() throws Exception {
        Files.createDirectories(folder.resolve("proj/.git/hooks"));
        Files.writeString(folder.resolve("proj/.git/hooks/pre-commit"), "#!/bin/sh\nscan-for-secrets\n");
        Files.createDirectories(folder.resolve("app"));
        Files.writeString(folder.resolve("app/.envrc"), "export A=1\n");
        Files.createDirectories(folder.resolve("plain/sub"));
        Files.writeString(folder.resolve("plain/sub/f"), "x");

        assertThat(errno(c.renameAt(ROOT, "proj", ROOT, "proj-aside"))).isEqualTo(EXDEV);
        assertThat(errno(c.renameAt(ROOT, "app", ROOT, "app2"))).isEqualTo(EXDEV);
        assertThat(c.renameAt(ROOT, "plain", ROOT, "plain2")).isInstanceOf(P9Reply.RenameAt.class);
        assertThat(folder.resolve("proj/.git/hooks/pre-commit")).exists();
        assertThat(folder.resolve("app/.envrc")).exists();
        assertThat(folder.resolve("plain2/sub/f")).exists();
        // a file cannot be put in the place of the folder's repository, and no copy of it is held for trying
        assertThat(errno(c.unlinkAt(ROOT, ".git", 0))).isNotZero();
        assertThat(held.units()).isEmpty();
    }

    /**
     * What npm does with a package that ships its own CI and editor files: they reach the folder,
     * its rename within node_modules (retiring an old version) is a rename, and moving the package
     * out of node_modules, where those files would be held, is refused so that each is copied and
     * classified on its own.
     */
    @Test
    void aPackagesOwnWorkflowsUnderNodeModulesReachTheFolderAndLeaveItOnlyFileByFile() throws Exception {
        walkOk(ROOT, 1);
        assertThat(c.mkdir(1, "node_modules", 0755)).isInstanceOf(P9Reply.Mkdir.class);
        walkOk(ROOT, 2, "node_modules");
        assertThat(c.mkdir(2, "fast-uri", 0755)).isInstanceOf(P9Reply.Mkdir.class);
        walkOk(2, 3, "fast-uri");
        assertThat(c.mkdir(3, ".github", 0755)).isInstanceOf(P9Reply.Mkdir.class);
        walkOk(3, 4, ".github");
        assertThat(c.mkdir(4, "workflows", 0755)).isInstanceOf(P9Reply.Mkdir.class);
        walkOk(4, 5, "workflows");
        create(5, "ci.yml", "on: push\n");
        create(3, ".travis.yml", "language: node_js\n");

        assertThat(folder.resolve("node_modules/fast-uri/.github/workflows/ci.yml")).hasContent("on: push\n");
        assertThat(folder.resolve("node_modules/fast-uri/.travis.yml")).exists();
        assertThat(c.renameAt(2, "fast-uri", 2, ".fast-uri-1a2b")).isInstanceOf(P9Reply.RenameAt.class);
        assertThat(folder.resolve("node_modules/.fast-uri-1a2b/.github/workflows/ci.yml")).exists();
        assertThat(errno(c.renameAt(2, ".fast-uri-1a2b", ROOT, "fast-uri"))).isEqualTo(EXDEV);
        assertThat(folder.resolve("fast-uri")).doesNotExist();
        assertThat(held.units()).isEmpty();
    }

    /**
     * Outside node_modules, a symlink into it is held: through {@code tools -> node_modules/p} a host tool would
     * take the package's workflows, not held there, for a project's own. npm's own links, under node_modules, are not.
     */
    @Test
    void aSymlinkIntoNodeModulesFromOutsideIsHeldAndNpmsBinLinksAreNot() throws Exception {
        walkOk(ROOT, 1);
        assertThat(c.mkdir(1, "node_modules", 0755)).isInstanceOf(P9Reply.Mkdir.class);
        walkOk(ROOT, 2, "node_modules");
        assertThat(c.mkdir(2, ".bin", 0755)).isInstanceOf(P9Reply.Mkdir.class);
        walkOk(2, 3, ".bin");
        assertThat(c.symlink(3, "semver", "../semver/bin/semver.js")).isInstanceOf(P9Reply.Symlink.class);
        assertThat(c.symlink(ROOT, "tools", "node_modules/p")).isInstanceOf(P9Reply.Symlink.class);
        assertThat(c.symlink(ROOT, "tools2", "./NODE_MODULES/p")).isInstanceOf(P9Reply.Symlink.class);

        assertThat(Files.isSymbolicLink(folder.resolve("node_modules/.bin/semver"))).isTrue();
        assertThat(Files.exists(folder.resolve("tools"), LinkOption.NOFOLLOW_LINKS)).isFalse();
        assertThat(Files.exists(folder.resolve("tools2"), LinkOption.NOFOLLOW_LINKS)).isFalse();
        assertThat(held.units()).extracting(HeldChanges.Unit::path).containsExactlyInAnyOrder("tools", "tools2");
        // a link under node_modules naming node_modules is free there; moved or hard-linked out, it is held or refused
        assertThat(c.symlink(2, "l", "node_modules/p")).isInstanceOf(P9Reply.Symlink.class);
        assertThat(Files.isSymbolicLink(folder.resolve("node_modules/l"))).isTrue();
        walkOk(2, 4, "l");
        assertThat(errno(c.link(ROOT, 4, "l2"))).isEqualTo(EXDEV);
        assertThat(Files.exists(folder.resolve("l2"), LinkOption.NOFOLLOW_LINKS)).isFalse();
        assertThat(c.renameAt(2, "l", ROOT, "l")).isInstanceOf(P9Reply.RenameAt.class);
        assertThat(Files.exists(folder.resolve("l"), LinkOption.NOFOLLOW_LINKS)).isFalse();
        assertThat(held.units()).extracting(HeldChanges.Unit::path).containsExactlyInAnyOrder("tools", "tools2", "l");
    }

    /** link(2) of a symlink links the symlink itself: one that would lead out from its new place is refused. */
    @Test
    void aHardLinkOfASymlinkThatWouldLeadOutFromItsNewPlaceIsRefused() throws Exception {
        walkOk(ROOT, 1);
        assertThat(c.mkdir(1, "a", 0755)).isInstanceOf(P9Reply.Mkdir.class);
        walkOk(ROOT, 2, "a");
        assertThat(c.mkdir(2, "b", 0755)).isInstanceOf(P9Reply.Mkdir.class);
        walkOk(2, 3, "b");
        assertThat(c.symlink(3, "l", "../../x")).isInstanceOf(P9Reply.Symlink.class); // inside from a/b
        assertThat(Files.isSymbolicLink(folder.resolve("a/b/l"))).isTrue();
        walkOk(3, 4, "l");

        assertThat(errno(c.link(ROOT, 4, "l"))).isEqualTo(EXDEV);
        assertThat(Files.exists(folder.resolve("l"), LinkOption.NOFOLLOW_LINKS)).isFalse();
        assertThat(c.link(3, 4, "l2")).isInstanceOf(P9Reply.Link.class); // the same place: inside still
        assertThat(held.units()).isEmpty();
    }

    @Test
    void hardLinksAcrossTheHeldLayerAreRefused() throws Exception {
        walkOk(ROOT, 1, ".git", "config");
        assertThat(errno(c.link(ROOT, 1, "config-copy"))).isEqualTo(EXDEV);
        Files.writeString(folder.resolve("payload"), "#!/bin/sh\n");
        walkOk(ROOT, 2, "payload");
        walkOk(ROOT, 3, ".git", "hooks");
        assertThat(errno(c.link(3, 2, "pre-commit"))).isEqualTo(EXDEV);
        assertThat(folder.resolve("config-copy")).doesNotExist();
        assertThat(folder.resolve(".git/hooks/pre-commit")).doesNotExist();
    }

    @Test
    void aModeChangeThroughADescriptorOpenedBeforeIsHeldToo() throws Exception {
        Path hook = folder.resolve(".git/hooks/pre-push");
        Files.writeString(hook, "#!/bin/sh\n");
        Files.setPosixFilePermissions(hook, PosixFilePermissions.fromString("rw-r--r--"));
        walkOk(ROOT, 1, ".git", "hooks", "pre-push");
        assertThat(c.lopen(1, O_RDONLY)).isInstanceOf(P9Reply.Lopen.class);

        P9Reply r = c.setattr(new P9Request.Setattr(1, 1, 0755, 0, 0, 0, 0, 0, 0, 0));
        assertThat(r).isInstanceOf(P9Reply.Setattr.class);
        assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(hook))).isEqualTo("rw-r--r--");
        walkOk(ROOT, 2, ".git", "hooks", "pre-push");
        assertThat(((P9Reply.Getattr) c.getattr(2)).mode() & 0777).isEqualTo(0755);
    }

    @Test
    void aGitFilePointingElsewhereIsHeldButAGitDirectoryIsNot() throws Exception {
        walkOk(ROOT, 1);
        c.mkdir(1, "wt", 0755);
        walkOk(ROOT, 2, "wt");
        create(2, ".git", "gitdir: ../evil\n");
        assertThat(folder.resolve("wt/.git")).doesNotExist();
        assertThat(readGuest("wt", ".git")).startsWith("gitdir:");
        walkOk(ROOT, 3);
        c.mkdir(3, "repo", 0755);
        walkOk(ROOT, 4, "repo");
        assertThat(c.mkdir(4, ".git", 0755)).isInstanceOf(P9Reply.Mkdir.class);
        assertThat(folder.resolve("repo/.git")).isDirectory();
    }

    @Test
    void aBareRepositoryMadeByTheGuestIsNoRepositoryOnTheHost() throws Exception {
        walkOk(ROOT, 1);
        c.mkdir(1, "stash", 0755);
        walkOk(ROOT, 2, "stash");
        create(2, "HEAD", "ref: refs/heads/main\n");
        assertThat(folder.resolve("stash/HEAD")).doesNotExist();
    }

    @Test
    void rmdirOfADirectoryWhoseOnlyFileIsHeldIsNotEmpty() throws Exception {
        walkOk(ROOT, 1);
        c.mkdir(1, "sub", 0755);
        walkOk(ROOT, 2, "sub");
        create(2, ".envrc", "export X=1\n");
        assertThat(errno(c.unlinkAt(ROOT, "sub", P9Operations.AT_REMOVEDIR))).isEqualTo(39);
        assertThat(c.unlinkAt(2, ".envrc", 0)).isInstanceOf(P9Reply.UnlinkAt.class);
        assertThat(held.units()).isEmpty(); // the folder never had it: nothing to review
        assertThat(c.unlinkAt(ROOT, "sub", P9Operations.AT_REMOVEDIR)).isInstanceOf(P9Reply.UnlinkAt.class);
    }

    @Test
    void acceptPutsTheHeldVersionInPlaceAndRejectGivesTheGuestTheHostsBack() throws Exception {
        walkOk(ROOT, 2, ".envrc");
        assertThat(c.lopen(2, O_RDWR | O_TRUNC)).isInstanceOf(P9Reply.Lopen.class);
        c.write(2, 0, "export A=2\n".getBytes(UTF_8));
        c.clunk(2);
        walkOk(ROOT, 4);
        c.mkdir(4, ".vscode", 0755);
        walkOk(ROOT, 5, ".vscode");
        create(5, "tasks.json", "{\"runOn\": \"folderOpen\"}\n");

        List<HeldChanges.Entry> review = held.review(folder, true);
        assertThat(review).extracting(e -> e.unit().path()).containsExactly(".envrc", ".vscode");
        assertThat(review.get(0).diff()).contains("-export A=1", "+export A=2");
        assertThat(review.get(1).change()).isEqualTo(HeldChanges.Change.ADD);
        assertThat(review.get(1).diff()).contains("+{\"runOn\": \"folderOpen\"}");

        HeldChanges.Outcome accepted = held.accept(folder, List.of(".envrc"), false);
        assertThat(accepted.done()).containsExactly(".envrc");
        assertThat(Files.readString(folder.resolve(".envrc"))).isEqualTo("export A=2\n");
        assertThat(readGuest(".envrc")).isEqualTo("export A=2\n");

        HeldChanges.Outcome rejected = held.reject(List.of(".vscode/"), false);
        assertThat(rejected.done()).containsExactly(".vscode");
        assertThat(errno(c.walk(ROOT, 6, ".vscode"))).isEqualTo(ENOENT);
        assertThat(held.units()).isEmpty();
    }

    @Test
    void acceptOfADirectorySwapsItInWholeAndLeavesNothingBehind() throws Exception {
        walkOk(ROOT, 1, ".git", "hooks");
        create(1, "pre-commit", "#!/bin/sh\nexit 0\n");
        assertThat(c.unlinkAt(1, "pre-commit.sample", 0)).isInstanceOf(P9Reply.UnlinkAt.class);

        assertThat(held.accept(folder, List.of(".git/hooks"), false).done()).containsExactly(".git/hooks");
        try (var names = Files.list(folder.resolve(".git/hooks"))) {
            assertThat(names.map(p -> p.getFileName().toString())).containsExactly("pre-commit");
        }
        assertThat(Files.getPosixFilePermissions(folder.resolve(".git/hooks/pre-commit")))
                .isEqualTo(PosixFilePermissions.fromString("rwxr-xr-x"));
        try (var names = Files.list(folder.resolve(".git"))) {
            assertThat(names.map(p -> p.getFileName().toString())).containsExactlyInAnyOrder("hooks", "config", "HEAD");
        }
        assertThat(listGuest(".git", "hooks")).containsExactly("pre-commit");
    }

    @Test
    void acceptOfAFileTheHostChangedSinceIsAConflictAndOverwritesNothing() throws Exception {
        walkOk(ROOT, 2, ".envrc");
        assertThat(c.lopen(2, O_RDWR | O_TRUNC)).isInstanceOf(P9Reply.Lopen.class);
        c.write(2, 0, "export A=guest\n".getBytes(UTF_8));
        c.clunk(2);
        Files.writeString(folder.resolve(".envrc"), "export A=user\n");

        HeldChanges.Outcome o = held.accept(folder, List.of(), true);
        assertThat(o.conflicts()).containsExactly(".envrc");
        assertThat(o.done()).isEmpty();
        assertThat(Files.readString(folder.resolve(".envrc"))).isEqualTo("export A=user\n");
        assertThat(held.units()).hasSize(1);
    }

    @Test
    void anAcceptTheDaemonDiedInIsFinishedByTheNextOneWithNoConflictAndNoCopyLeftBeside() throws Exception {
        walkOk(ROOT, 2, ".envrc");
        assertThat(c.lopen(2, O_RDWR | O_TRUNC)).isInstanceOf(P9Reply.Lopen.class);
        c.write(2, 0, "export A=guest\n".getBytes(UTF_8));
        c.clunk(2);
        // as a daemon killed at accept/copied leaves it: the copy beside the place, the place as it was
        Files.writeString(folder.resolve(".kosa8-accept-.envrc-1a2b3c"), "export A=gu");
        Files.writeString(folder.resolve(".kosa8-accept-.envrc-not-ours"), "the guest's or the user's");
        HeldChanges.Outcome first = held.accept(folder, List.of(".envrc"), false);
        assertThat(first.done()).containsExactly(".envrc");
        assertThat(Files.readString(folder.resolve(".envrc"))).isEqualTo("export A=guest\n");
        assertThat(folder.resolve(".kosa8-accept-.envrc-1a2b3c")).doesNotExist();
        assertThat(folder.resolve(".kosa8-accept-.envrc-not-ours")).as("no name kosa8 makes").exists();

        // as a daemon killed at accept/placed leaves it: the held version in place, the unit still held
        walkOk(ROOT, 3, ".envrc");
        assertThat(c.lopen(3, O_RDWR | O_TRUNC)).isInstanceOf(P9Reply.Lopen.class);
        c.write(3, 0, "export B=guest\n".getBytes(UTF_8));
        c.clunk(3);
        assertThat(held.units()).hasSize(1);
        Files.writeString(folder.resolve(".envrc"), "export B=guest\n");
        HeldChanges.Outcome again = held.accept(folder, List.of(".envrc"), false);
        assertThat(again.conflicts()).as("the folder holds what was to be accepted: no conflict").isEmpty();
        assertThat(again.done()).containsExactly(".envrc");
        assertThat(held.units()).isEmpty();
    }

    @Test
    void badPathsToAcceptAreRefusedAndChangeNothing() throws Exception {
        walkOk(ROOT, 1, ".git", "hooks");
        create(1, "pre-commit", "x");
        for (String bad : List.of("../etc/passwd", "/etc/passwd", "README", ".git/hooks/pre-commit")) {
            assertThatThrownBy(() -> held.accept(folder, List.of(bad), false))
                    .isInstanceOf(KosaException.class).hasMessageContaining("not held: " + bad);
        }
        assertThat(folder.resolve(".git/hooks/pre-commit")).doesNotExist();
        assertThat(held.units()).hasSize(1);
    }

    @Test
    void heldChangesOutliveTheServerAndAreReadBack() throws Exception {
        walkOk(ROOT, 1, ".git", "hooks");
        create(1, "post-checkout", "#!/bin/sh\n");
        c.close();
        try (HeldChanges again = HeldChanges.open(heldDir, null, m -> { })) {
            assertThat(again.units()).extracting(HeldChanges.Unit::path).containsExactly(".git/hooks");
            assertThat(again.review(folder, true).getFirst().diff()).contains("+++ b/.git/hooks/post-checkout");
        }
    }
}
