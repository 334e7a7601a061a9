package dev.kosa8.workspace;

import static dev.kosa8.workspace.LinuxFs.AT_REMOVEDIR;
import static dev.kosa8.workspace.LinuxFs.F_RDLCK;
import static dev.kosa8.workspace.LinuxFs.F_UNLCK;
import static dev.kosa8.workspace.LinuxFs.F_WRLCK;
import static dev.kosa8.workspace.LinuxFs.O_CREAT;
import static dev.kosa8.workspace.LinuxFs.O_DIRECTORY;
import static dev.kosa8.workspace.LinuxFs.O_EXCL;
import static dev.kosa8.workspace.LinuxFs.O_NOFOLLOW;
import static dev.kosa8.workspace.LinuxFs.O_PATH;
import static dev.kosa8.workspace.LinuxFs.O_RDONLY;
import static dev.kosa8.workspace.LinuxFs.O_RDWR;
import static dev.kosa8.workspace.LinuxFs.O_WRONLY;
import static java.nio.charset.StandardCharsets.ISO_8859_1;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assumptions.assumeThat;

import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.assertj.core.api.ThrowableAssert.ThrowingCallable;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class LinuxFsTest {
    @TempDir
    Path tmp;
    Path root;
    int rootFd;
    private final List<Integer> fds = new ArrayList<>();

    @BeforeEach
    void openRoot() throws Exception {
        assumeThat(LinuxFs.AVAILABLE).isTrue();
        root = Files.createDirectory(tmp.resolve("root"));
        rootFd = track(LinuxFs.openRoot(root.toString()));
        Files.writeString(tmp.resolve("secret.txt"), "outside");
    }

    @AfterEach
    void closeAll() throws Exception {
        for (int fd : fds) {
            LinuxFs.close(fd);
        }
    }

    private int track(int fd) {
        fds.add(fd);
        return fd;
    }

    private int open(String path, int flags) throws ErrnoException {
        return track(LinuxFs.openBeneath(rootFd, path, flags, 0644));
    }

    private static void assertErrno(int errno, ThrowingCallable call) {
        assertThatThrownBy(call).isInstanceOfSatisfying(ErrnoException.class, e -> assertThat(e.errno).isEqualTo(errno));
    }

    private static String read(int fd, long offset) throws ErrnoException {
        ByteBuffer buf = ByteBuffer.allocateDirect(4096);
        int n = FdCalls.pread(fd, buf, offset);
        return ISO_8859_1.decode(buf.flip()).toString().substring(0, n);
    }

    @Test
    void openBeneathOpensFilesAndNestedDirectories() throws Exception {
        Files.createDirectories(root.resolve("a/b"));
        Files.writeString(root.resolve("a/b/c.txt"), "hello");

        assertThat(read(open("a/b/c.txt", O_RDONLY), 0)).isEqualTo("hello");
        assertThat(read(open("a/../a/./b/c.txt", O_RDONLY), 1)).isEqualTo("ello");
        assertThat(FdCalls.stat(open("a/b", O_RDONLY | O_DIRECTORY)).ino())
                .isEqualTo(Files.getAttribute(root.resolve("a/b"), "unix:ino"));
        assertThat(FdCalls.stat(open("", O_PATH)).ino()).isEqualTo(Files.getAttribute(root, "unix:ino"));
        assertErrno(ErrnoException.ENOTDIR, () -> open("a/b/c.txt", O_RDONLY | O_DIRECTORY));
        assertErrno(ErrnoException.ENOENT, () -> open("a/missing", O_RDONLY));
    }

    @Test
    void openBeneathRefusesDotDotAndAbsolutePathsOutOfTheRoot() {
        assertErrno(ErrnoException.EXDEV, () -> open("..", O_PATH));
        assertErrno(ErrnoException.EXDEV, () -> open("../secret.txt", O_RDONLY));
        assertErrno(ErrnoException.EXDEV, () -> open("./../root/../secret.txt", O_RDONLY));
        assertErrno(ErrnoException.EXDEV, () -> open("/etc/passwd", O_RDONLY));
        assertErrno(ErrnoException.EXDEV, () -> open(root.toString(), O_PATH));
    }

    @Test
    void openBeneathRefusesEverySymlinkInThePath() throws Exception {
        Files.createSymbolicLink(root.resolve("etc"), Path.of("/etc"));
        Files.createSymbolicLink(root.resolve("up"), Path.of(".."));
        Files.createDirectory(root.resolve("d"));
        Files.createSymbolicLink(root.resolve("inside"), Path.of("d"));

        assertErrno(ErrnoException.ELOOP, () -> open("etc/passwd", O_RDONLY));
        assertErrno(ErrnoException.ELOOP, () -> open("etc", O_RDONLY));
        assertErrno(ErrnoException.ELOOP, () -> open("etc", O_PATH | O_DIRECTORY));
        assertErrno(ErrnoException.ELOOP, () -> open("up/secret.txt", O_RDONLY));
        assertErrno(ErrnoException.ELOOP, () -> open("d/../up/secret.txt", O_RDONLY));
        assertErrno(ErrnoException.ELOOP, () -> open("inside", O_PATH));
    }

    @Test
    void creatingThroughADanglingSymlinkIsRefused() throws Exception {
        Path target = tmp.resolve("created-outside");
        Files.createSymbolicLink(root.resolve("evil"), target);

        assertErrno(ErrnoException.ELOOP, () -> open("evil", O_CREAT | O_WRONLY));
        assertErrno(ErrnoException.EEXIST, () -> open("evil", O_CREAT | O_EXCL | O_WRONLY));
        assertThat(target).doesNotExist();
    }

    @Test
    void pathNoFollowOpensATrailingSymlinkItself() throws Exception {
        Files.createSymbolicLink(root.resolve("etc"), Path.of("/etc"));

        int fd = open("etc", O_PATH | O_NOFOLLOW);

        assertThat(FdCalls.stat(fd).isSymlink()).isTrue();
        assertThat(NameCalls.readlinkAt(fd, "")).isEqualTo("/etc");
        assertThat(NameCalls.statAt(rootFd, "etc").isSymlink()).isTrue();
        assertThat(NameCalls.readlinkAt(rootFd, "etc")).isEqualTo("/etc");
    }

    @Test
    void pathFdMetadataCallsOnASymlinkDoNotReachItsTarget() throws Exception {
        Path secret = tmp.resolve("secret.txt");
        Files.setPosixFilePermissions(secret, PosixFilePermissions.fromString("rw-------"));
        Files.createSymbolicLink(root.resolve("link"), secret);
        int fd = open("link", O_PATH | O_NOFOLLOW);

        assertErrno(ErrnoException.EOPNOTSUPP, () -> FdCalls.chmodFd(fd, 0777));
        assertErrno(ErrnoException.EINVAL, () -> FdCalls.truncateFd(fd, 0));

        assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(secret))).isEqualTo("rw-------");
        assertThat(Files.readString(secret)).isEqualTo("outside");
    }

    @Test
    void statMatchesJavaNio() throws Exception {
        Path file = root.resolve("f");
        Files.write(file, new byte[1234]);
        Files.setPosixFilePermissions(file, PosixFilePermissions.fromString("rw-r-----"));
        Files.setLastModifiedTime(file, FileTime.from(Instant.ofEpochSecond(1_600_000_000L, 123_456_789)));
        Map<String, Object> nio = Files.readAttributes(file, "unix:*", LinkOption.NOFOLLOW_LINKS);

        LinuxFs.Stat st = NameCalls.statAt(rootFd, "f");

        assertThat(st.isRegular()).isTrue();
        assertThat(st.mode()).isEqualTo(nio.get("mode")).isEqualTo(LinuxFs.S_IFREG | 0640);
        assertThat(st.size()).isEqualTo(1234L);
        assertThat(st.ino()).isEqualTo(nio.get("ino"));
        assertThat(st.nlink()).isEqualTo(1L);
        assertThat(st.uid()).isEqualTo(nio.get("uid"));
        assertThat(st.gid()).isEqualTo(nio.get("gid"));
        assertThat(LinuxFs.makedev(st.devMajor(), st.devMinor())).isEqualTo(nio.get("dev"));
        assertThat(st.mtimeSec()).isEqualTo(1_600_000_000L);
        assertThat(st.mtimeNsec()).isEqualTo(123_456_789L);
        assertThat(FdCalls.stat(open("f", O_PATH))).isEqualTo(st);
    }

    @Test
    void preadAndPwriteRoundTripAtOffsets() throws Exception {
        int fd = open("data", O_RDWR | O_CREAT);
        ByteBuffer heap = ByteBuffer.wrap("xxhello".getBytes(ISO_8859_1)).position(2);
        ByteBuffer direct = ByteBuffer.allocateDirect(5).put("world".getBytes(ISO_8859_1)).flip();

        assertThat(FdCalls.pwrite(fd, heap, 0)).isEqualTo(5);
        assertThat(FdCalls.pwrite(fd, direct, 10)).isEqualTo(5);
        assertThat(heap.hasRemaining()).isFalse();
        assertThat(direct.hasRemaining()).isFalse();
        assertThat(Files.readString(root.resolve("data"), ISO_8859_1)).isEqualTo("hello\0\0\0\0\0world");

        ByteBuffer buf = ByteBuffer.allocateDirect(100).position(7);
        assertThat(FdCalls.pread(fd, buf, 3)).isEqualTo(12);
        assertThat(buf.position()).isEqualTo(19);
        assertThat(ISO_8859_1.decode(buf.flip().position(7)).toString()).isEqualTo("lo\0\0\0\0\0world");
        assertThat(FdCalls.pread(fd, ByteBuffer.allocateDirect(10), 15)).isZero();
        assertThatThrownBy(() -> FdCalls.pread(fd, ByteBuffer.allocate(10), 0)).isInstanceOf(IllegalArgumentException.class);
        assertThat(FdCalls.lseek(fd, 0, LinuxFs.SEEK_END)).isEqualTo(15L);
        FdCalls.fsync(fd, false);
        FdCalls.fsync(fd, true);
    }

    @Test
    void getdentsListsThousandsOfEntriesAcrossSmallReads() throws Exception {
        Path dir = Files.createDirectory(root.resolve("many"));
        Set<String> expected = new HashSet<>(Set.of(".", ".."));
        for (int i = 0; i < 3000; i++) {
            expected.add("file-" + i);
            Files.createFile(dir.resolve("file-" + i));
        }
        int fd = open("many", O_RDONLY | O_DIRECTORY);
        ByteBuffer buf = ByteBuffer.allocateDirect(4096);
        List<String> seen = new ArrayList<>();
        int calls = 0;
        for (int n; (n = FdCalls.getdents(fd, buf.clear())) > 0; calls++) {
            assertThat(buf.position()).isEqualTo(n);
            List<LinuxFs.DirEntry> entries = FdCalls.parseDirents(buf, n);
            entries.forEach(e -> seen.add(e.name()));
            assertThat(entries).allSatisfy(e -> assertThat(e.ino()).isPositive());
            FdCalls.lseek(fd, entries.getLast().nextOffset(), LinuxFs.SEEK_SET);
        }

        assertThat(calls).isGreaterThan(10);
        assertThat(seen).hasSize(3002).doesNotHaveDuplicates();
        assertThat(new HashSet<>(seen)).isEqualTo(expected);
    }

    @Test
    void directoryOperationsWorkAndReportTheRightErrno() throws Exception {
        NameCalls.mkdirAt(rootFd, "d", 0755);
        assertThat(root.resolve("d")).isDirectory();
        assertErrno(ErrnoException.EEXIST, () -> NameCalls.mkdirAt(rootFd, "d", 0755));
        int d = open("d", O_PATH | O_DIRECTORY);

        track(LinuxFs.openBeneath(d, "f", O_CREAT | O_WRONLY, 0600));
        assertErrno(ErrnoException.ENOTEMPTY, () -> NameCalls.unlinkAt(rootFd, "d", AT_REMOVEDIR));
        NameCalls.renameAt(d, "f", rootFd, "g");
        assertThat(root.resolve("g")).isRegularFile();
        assertErrno(ErrnoException.ENOENT, () -> NameCalls.renameAt(d, "f", rootFd, "h"));
        NameCalls.unlinkAt(rootFd, "d", AT_REMOVEDIR);
        assertThat(root.resolve("d")).doesNotExist();
        assertErrno(ErrnoException.ENOENT, () -> NameCalls.unlinkAt(rootFd, "d", 0));

        NameCalls.linkAt(rootFd, "g", rootFd, "g2");
        assertThat(NameCalls.statAt(rootFd, "g").nlink()).isEqualTo(2L);
        NameCalls.symlinkAt("../../anywhere", rootFd, "s");
        assertThat(Files.readSymbolicLink(root.resolve("s"))).isEqualTo(Path.of("../../anywhere"));
        NameCalls.linkAt(rootFd, "s", rootFd, "s2");
        assertThat(NameCalls.statAt(rootFd, "s2").isSymlink()).isTrue();
        NameCalls.mknodAt(rootFd, "fifo", LinuxFs.S_IFIFO | 0644, 0);
        assertThat(NameCalls.statAt(rootFd, "fifo").type()).isEqualTo(LinuxFs.S_IFIFO);
        NameCalls.unlinkAt(rootFd, "g2", 0);
        assertThat(NameCalls.statAt(rootFd, "g").nlink()).isEqualTo(1L);
    }

    @Test
    void nameArgumentsAreSingleComponents() throws Exception {
        Files.createDirectory(root.resolve("a"));
        assertErrno(ErrnoException.EINVAL, () -> NameCalls.statAt(rootFd, ".."));
        assertErrno(ErrnoException.EINVAL, () -> NameCalls.mkdirAt(rootFd, "a/b", 0755));
        assertErrno(ErrnoException.EINVAL, () -> NameCalls.renameAt(rootFd, "a", rootFd, "../escaped"));
        assertErrno(ErrnoException.EINVAL, () -> NameCalls.unlinkAt(rootFd, ".", AT_REMOVEDIR));
        assertErrno(ErrnoException.ENOENT, () -> NameCalls.statAt(rootFd, ""));
        assertThat(tmp.resolve("escaped")).doesNotExist();
    }

    @Test
    void nulAndWideCharsAreInvalid() throws Exception {
        assertErrno(ErrnoException.EINVAL, () -> open("a\0b", O_RDONLY));
        assertErrno(ErrnoException.EINVAL, () -> NameCalls.mkdirAt(rootFd, "x\0", 0755));
        assertErrno(ErrnoException.EINVAL, () -> NameCalls.symlinkAt("t\0", rootFd, "s"));
        assertErrno(ErrnoException.EINVAL, () -> NameCalls.mkdirAt(rootFd, "\u0100", 0755));
        try (var list = Files.list(root)) {
            assertThat(list).isEmpty();
        }
    }

    @Test
    void nonUtf8NamesRoundTripAsByteStrings() throws Exception {
        String name = "\u00ff\u00fe\u0080";
        NameCalls.mkdirAt(rootFd, name, 0755);
        NameCalls.symlinkAt("\u00e9\u00ff", rootFd, "l");

        int fd = open("", O_RDONLY | O_DIRECTORY);
        ByteBuffer buf = ByteBuffer.allocateDirect(4096);
        int n = FdCalls.getdents(fd, buf);
        assertThat(FdCalls.parseDirents(buf, n)).extracting(LinuxFs.DirEntry::name)
                .containsExactlyInAnyOrder(".", "..", name, "l");
        assertThat(FdCalls.parseDirents(buf, n)).filteredOn(e -> e.name().equals(name))
                .extracting(LinuxFs.DirEntry::type).containsExactly(LinuxFs.DT_DIR);
        assertThat(NameCalls.statAt(rootFd, name).isDir()).isTrue();
        assertThat(FdCalls.stat(open(name, O_PATH)).isDir()).isTrue();
        assertThat(NameCalls.readlinkAt(rootFd, "l")).isEqualTo("\u00e9\u00ff");
    }

    @Test
    void metadataChangesThroughAPathFd() throws Exception {
        Files.writeString(root.resolve("f"), "0123456789");
        int fd = open("f", O_PATH);

        FdCalls.chmodFd(fd, 0604);
        FdCalls.truncateFd(fd, 3);
        FdCalls.utimensFd(fd, 1000, 5, 2000, 7);

        LinuxFs.Stat st = FdCalls.stat(fd);
        assertThat(st.mode() & 07777).isEqualTo(0604);
        assertThat(st.size()).isEqualTo(3L);
        assertThat(List.of(st.atimeSec(), st.atimeNsec(), st.mtimeSec(), st.mtimeNsec()))
                .containsExactly(1000L, 5L, 2000L, 7L);

        FdCalls.utimensFd(fd, 0, LinuxFs.UTIME_OMIT, 3000, 0);
        st = FdCalls.stat(fd);
        assertThat(List.of(st.atimeSec(), st.mtimeSec())).containsExactly(1000L, 3000L);
        assertThat(Files.readString(root.resolve("f"))).isEqualTo("012");
    }

    @Test
    void utimensAtChangesASymlinkNotItsTarget() throws Exception {
        Files.writeString(root.resolve("f"), "x");
        Files.createSymbolicLink(root.resolve("l"), Path.of("f"));
        long before = NameCalls.statAt(rootFd, "f").mtimeSec();

        NameCalls.utimensAt(rootFd, "l", 100, 0, 200, 0);

        assertThat(NameCalls.statAt(rootFd, "l").mtimeSec()).isEqualTo(200L);
        assertThat(NameCalls.statAt(rootFd, "f").mtimeSec()).isEqualTo(before);
    }

    @Test
    void openFileDescriptionLocksConflictBetweenFds() throws Exception {
        Files.writeString(root.resolve("f"), "x");
        int a = open("f", O_RDWR);
        int b = open("f", O_RDWR);

        assertThat(FdCalls.setLock(a, F_WRLCK, 0, 100)).isTrue();
        assertThat(FdCalls.setLock(b, F_RDLCK, 50, 10)).isFalse();
        assertThat(FdCalls.setLock(b, F_WRLCK, 100, 10)).isTrue();
        LinuxFs.Flock held = FdCalls.getLock(b, F_RDLCK, 0, 0);
        assertThat(held.type()).isEqualTo(F_WRLCK);
        assertThat(held.start()).isZero();
        assertThat(held.length()).isEqualTo(100L);
        assertThat(held.pid()).isEqualTo(-1);

        assertThat(FdCalls.setLock(a, F_UNLCK, 0, 0)).isTrue();
        assertThat(FdCalls.getLock(b, F_WRLCK, 0, 100).type()).isEqualTo(F_UNLCK);
        assertThat(FdCalls.setLock(b, F_RDLCK, 50, 10)).isTrue();
    }

    @Test
    void statfsDescribesTheFileSystem() throws Exception {
        LinuxFs.StatFs fs = FdCalls.statfs(open("", O_RDONLY | O_DIRECTORY));

        assertThat(fs.type()).isNotZero();
        assertThat(fs.bsize()).isPositive();
        assertThat(fs.blocks()).isPositive();
        assertThat(fs.bavail()).isBetween(0L, fs.blocks());
        assertThat(fs.namelen()).isEqualTo(255L);
    }

    @Test
    void closeReportsABadFd() throws Exception {
        int fd = LinuxFs.openBeneath(rootFd, "", O_PATH, 0);
        LinuxFs.close(fd);
        assertThatThrownBy(() -> LinuxFs.close(fd)).isInstanceOf(ErrnoException.class)
                .hasMessage("close: Bad file descriptor (errno 9)");
    }

    @Test
    void rdevIsEncodedAsGlibcMakedev() throws Exception {
        assertThat(LinuxFs.makedev(8, 1)).isEqualTo(0x801L);
        assertThat(LinuxFs.makedev(0x12345, 0x6789a)).isEqualTo(0x0001_2000_6783_459aL);
        int dev = track(LinuxFs.openRoot("/dev"));
        LinuxFs.Stat nul = NameCalls.statAt(dev, "null");
        assertThat(nul.type()).isEqualTo(LinuxFs.S_IFCHR);
        assertThat(nul.rdevEncoded()).isEqualTo(Files.getAttribute(Path.of("/dev/null"), "unix:rdev"));
    }
}
