package dev.kosa8.agent;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.kosa8.protocol.FileOp;
import dev.kosa8.protocol.FileStat;
import dev.kosa8.protocol.Message;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The agent's file operations on the build machine's own file system (Linux), as the agent runs them in a guest. */
class FileOpsTest {
    @TempDir
    Path dir;
    private FileOps ops;

    @BeforeEach
    void users() throws IOException {
        Path etc = Files.createDirectories(dir.resolve("etc"));
        Files.writeString(etc.resolve("passwd"), "root:x:0:0:root:/root:/bin/sh\nuser:x:1000:1000::/home/user:/bin/sh\n");
        Files.writeString(etc.resolve("group"), "root:x:0:\nuser:x:1000:\n");
        ops = new FileOps(GuestUsers.read(etc));
    }

    private Message.ErrorCode code(Runnable r) {
        try {
            r.run();
        } catch (FileOps.Failure f) {
            return f.code;
        }
        throw new AssertionError("did not fail");
    }

    @Test
    void statSaysTypeSizeModeOwnerTimeAndLinkTarget() throws IOException {
        Path f = Files.writeString(dir.resolve("a.txt"), "hello");
        Files.setAttribute(f, "unix:mode", 0640);
        Files.setLastModifiedTime(f, FileTime.fromMillis(1_700_000_000_000L));
        Path link = Files.createSymbolicLink(dir.resolve("l"), Path.of("a.txt"));
        FileStat s = ops.stat(f.toString(), false);
        assertThat(s.type()).isEqualTo(FileStat.Type.FILE);
        assertThat(s.size()).isEqualTo(5);
        assertThat(s.mode()).isEqualTo(0640);
        assertThat(s.mtimeMillis()).isEqualTo(1_700_000_000_000L);
        assertThat(s.uid()).isEqualTo((Integer) Files.getAttribute(f, "unix:uid"));
        assertThat(s.name()).isEqualTo("a.txt");
        FileStat l = ops.stat(link.toString(), false);
        assertThat(l.type()).isEqualTo(FileStat.Type.SYMLINK);
        assertThat(l.symlinkTarget()).isEqualTo("a.txt");
        FileStat followed = ops.stat(link.toString(), true);
        assertThat(followed.type()).isEqualTo(FileStat.Type.FILE);
        assertThat(followed.size()).isEqualTo(5);
        assertThat(followed.symlinkTarget()).isEqualTo("a.txt");
        assertThat(ops.stat(dir.toString(), false).type()).isEqualTo(FileStat.Type.DIRECTORY);
    }

    @Test
    void ownerAndGroupNamesComeFromTheGuestsFiles() throws IOException {
        Path etc = dir.resolve("etc");
        int uid = (Integer) Files.getAttribute(dir, "unix:uid");
        int gid = (Integer) Files.getAttribute(dir, "unix:gid");
        Files.writeString(etc.resolve("passwd"), "someone:x:" + uid + ":" + gid + "::/:/bin/sh\n");
        Files.writeString(etc.resolve("group"), "somegroup:x:" + gid + ":\n");
        FileStat s = new FileOps(GuestUsers.read(etc)).stat(dir.toString(), false);
        assertThat(s.owner()).isEqualTo("someone");
        assertThat(s.group()).isEqualTo("somegroup");
        assertThat(new FileOps(GuestUsers.read(dir.resolve("none"))).stat(dir.toString(), false).owner()).isEmpty();
    }

    @Test
    void errorsCarryTheirKind() throws IOException {
        Files.writeString(dir.resolve("file"), "x");
        assertThat(code(() -> ops.stat(dir + "/missing", false))).isEqualTo(Message.ErrorCode.NOT_FOUND);
        assertThat(code(() -> ops.stat(dir + "/file/below", false))).isEqualTo(Message.ErrorCode.NOT_DIRECTORY);
        assertThat(code(() -> ops.stat(dir + "/" + "n".repeat(300), false))).isEqualTo(Message.ErrorCode.TOO_LONG);
        assertThat(code(() -> ops.list(new FileOp.ListDir(dir + "/file", 1, 10), s -> { }, () -> false)))
                .isEqualTo(Message.ErrorCode.NOT_DIRECTORY);
        assertThat(code(() -> ops.list(new FileOp.ListDir(dir + "/missing", 1, 10), s -> { }, () -> false)))
                .isEqualTo(Message.ErrorCode.NOT_FOUND);
        assertThat(code(() -> ops.makeDir(new FileOp.MakeDir(dir + "/file/sub", 0755, true), "")))
                .isEqualTo(Message.ErrorCode.NOT_DIRECTORY);
        assertThat(code(() -> ops.makeDir(new FileOp.MakeDir(dir + "/x", 0755, false), "nobody-here")))
                .isEqualTo(Message.ErrorCode.INVALID);
    }

    @Test
    void listGoesToItsDepthDirectoriesFirstAndStopsAtItsBound() throws IOException {
        Files.createDirectories(dir.resolve("t/a/b/c"));
        Files.writeString(dir.resolve("t/a/f1"), "1");
        Files.writeString(dir.resolve("t/a/b/f2"), "22");
        Files.createSymbolicLink(dir.resolve("t/link"), dir.resolve("t/a"));
        List<FileStat> one = list("t", 1, 100);
        assertThat(one).extracting(FileStat::name).containsExactlyInAnyOrder("a", "link");
        List<FileStat> two = list("t", 2, 100);
        assertThat(two).extracting(FileStat::path).containsExactlyInAnyOrder(dir + "/t/a", dir + "/t/link",
                dir + "/t/a/f1", dir + "/t/a/b");
        List<FileStat> all = list("t", 10, 100);
        assertThat(all).hasSize(6);
        assertThat(all.stream().map(FileStat::path).toList().indexOf(dir + "/t/a"))
                .isLessThan(all.stream().map(FileStat::path).toList().indexOf(dir + "/t/a/b/f2"));
        assertThat(list("t", 10, 3)).hasSize(3);
    }

    private List<FileStat> list(String sub, int depth, int max) {
        List<FileStat> out = new ArrayList<>();
        ops.list(new FileOp.ListDir(dir.resolve(sub).toString(), depth, max), out::add, () -> false);
        return out;
    }

    @Test
    void makeDirMakesParentsAndRefusesOneThereUnlessAskedNotTo() {
        FileStat s = ops.makeDir(new FileOp.MakeDir(dir + "/m/n/o", 0750, false), "");
        assertThat(s.type()).isEqualTo(FileStat.Type.DIRECTORY);
        assertThat(s.mode()).isEqualTo(0750);
        assertThat(Files.isDirectory(dir.resolve("m/n"))).isTrue();
        assertThat(code(() -> ops.makeDir(new FileOp.MakeDir(dir + "/m/n/o", 0755, false), "")))
                .isEqualTo(Message.ErrorCode.EXISTS);
        assertThat(ops.makeDir(new FileOp.MakeDir(dir + "/m/n/o", 0755, true), "").path()).isEqualTo(dir + "/m/n/o");
    }

    @Test
    void whatAUsersMkdirMakesIsThatUsers() {
        org.junit.jupiter.api.Assumptions.assumeTrue(ProcessHandle.current().info().user().orElse("").equals("root"),
                "chown needs root, as the agent has");
        ops.makeDir(new FileOp.MakeDir(dir + "/home/user/deep", 0700, false), "user");
        FileStat deep = ops.stat(dir + "/home/user/deep", false);
        assertThat(deep.uid()).isEqualTo(1000);
        assertThat(deep.gid()).isEqualTo(1000);
        assertThat(deep.owner()).isEqualTo("user");
        assertThat(ops.stat(dir + "/home", false).uid()).isEqualTo(1000); // made for it too
        assertThat(ops.stat(dir.toString(), false).uid()).isZero(); // there before: left as it was
    }

    @Test
    void removeTakesFilesEmptyDirectoriesAndTreesOnlyWhenRecursive() throws IOException {
        Files.createDirectories(dir.resolve("r/s/t"));
        Files.writeString(dir.resolve("r/s/t/f"), "x");
        Files.createSymbolicLink(dir.resolve("r/out"), dir.resolve("etc"));
        assertThat(code(() -> ops.remove(new FileOp.Remove(dir + "/r", false), () -> false)))
                .isEqualTo(Message.ErrorCode.NOT_EMPTY);
        assertThat(code(() -> ops.remove(new FileOp.Remove(dir + "/gone", false), () -> false)))
                .isEqualTo(Message.ErrorCode.NOT_FOUND);
        assertThat(code(() -> ops.remove(new FileOp.Remove("/", true), () -> false)))
                .isEqualTo(Message.ErrorCode.INVALID);
        ops.remove(new FileOp.Remove(dir + "/r", true), () -> false);
        assertThat(dir.resolve("r")).doesNotExist();
        assertThat(dir.resolve("etc/passwd")).exists(); // a link in the tree is removed, not followed
    }

    @Test
    void renameMovesAndReplacesOnlyWhenAsked() throws IOException {
        Files.writeString(dir.resolve("from"), "1");
        Files.writeString(dir.resolve("to"), "2");
        assertThat(code(() -> ops.rename(new FileOp.Rename(dir + "/from", dir + "/to", false))))
                .isEqualTo(Message.ErrorCode.EXISTS);
        assertThat(code(() -> ops.rename(new FileOp.Rename(dir + "/nope", dir + "/x", false))))
                .isEqualTo(Message.ErrorCode.NOT_FOUND);
        FileStat s = ops.rename(new FileOp.Rename(dir + "/from", dir + "/to", true));
        assertThat(s.size()).isEqualTo(1);
        assertThat(Files.readString(dir.resolve("to"))).isEqualTo("1");
        assertThat(ops.rename(new FileOp.Rename(dir + "/to", dir + "/etc/moved", false)).path())
                .isEqualTo(dir + "/etc/moved");
    }

    @Test
    void aUserIsANameANumberOrRoot() {
        GuestUsers u = GuestUsers.read(dir.resolve("etc"));
        assertThat(u.ids("")).isEqualTo(GuestUsers.Ids.ROOT);
        assertThat(u.ids("user")).isEqualTo(new GuestUsers.Ids(1000, 1000));
        assertThat(u.ids("1000")).isEqualTo(new GuestUsers.Ids(1000, 1000));
        assertThat(u.ids("4242")).isEqualTo(new GuestUsers.Ids(4242, 4242));
        assertThat(u.userName(1000)).isEqualTo("user");
        assertThatThrownBy(() -> u.ids("ghost")).isInstanceOf(FileOps.Failure.class);
    }
}
