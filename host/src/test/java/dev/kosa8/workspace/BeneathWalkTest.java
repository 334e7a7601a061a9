package dev.kosa8.workspace;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The portable path walk against the kernel's {@code openat2}: every path of a tree made to trip it (symlinks
 * out, in and dangling, {@code ".."} at every depth) gives the same answer both ways, and a directory swapped
 * for a symlink to outside while the walk runs never takes it there. The rest of the folder server's tests
 * run on the walk too, in the build's {@code portable-profile} run (host/pom.xml).
 */
class BeneathWalkTest {
    @TempDir
    Path tmp;
    Path root;
    int rootFd = -1;

    @BeforeEach
    void openRoot() throws Exception {
        root = Files.createDirectory(tmp.resolve("root"));
        Files.writeString(tmp.resolve("secret.txt"), "outside");
        rootFd = LinuxFs.openRoot(root.toString());
    }

    @AfterEach
    void closeRoot() throws Exception {
        LinuxFs.close(rootFd);
    }

    /** What the profile the build's run chose uses: the walk's refusals name openat, openat2's name openat2. */
    @Test
    void theProfileTheEnvironmentChoseIsTheOneThatRuns() throws Exception {
        Files.createSymbolicLink(root.resolve("link"), Path.of("/etc"));
        boolean portable = PathResolution.PORTABLE.equals(System.getenv(PathResolution.PROFILE_VARIABLE))
                || !PathResolution.KERNEL_HAS_OPENAT2;
        assertThat(PathResolution.portable()).isEqualTo(portable);
        assertThatThrownBy(() -> LinuxFs.openBeneath(rootFd, "link/passwd", LinuxFs.O_RDONLY, 0))
                .isInstanceOf(ErrnoException.class).hasMessageStartingWith(portable ? "openat:" : "openat2:");
    }

    @Test
    void everyPathOfATrickyTreeGetsTheAnswerOpenat2Gives() throws Exception {
        assumeTrue(PathResolution.KERNEL_HAS_OPENAT2, "this kernel has no openat2 to compare with");
        Files.createDirectories(root.resolve("a/b/c"));
        Files.writeString(root.resolve("a/b/file"), "x");
        Files.createSymbolicLink(root.resolve("a/out"), Path.of("/etc"));
        Files.createSymbolicLink(root.resolve("a/up"), Path.of("../.."));
        Files.createSymbolicLink(root.resolve("a/b/in"), Path.of("c"));
        Files.createSymbolicLink(root.resolve("a/b/dangling"), tmp.resolve("made-outside"));
        String[] names = {"", ".", "..", "a", "b", "c", "file", "out", "up", "in", "dangling", "missing"};
        int[] flagsTried = {LinuxFs.O_RDONLY, LinuxFs.O_PATH, LinuxFs.O_PATH | LinuxFs.O_NOFOLLOW,
                LinuxFs.O_RDONLY | LinuxFs.O_DIRECTORY, LinuxFs.O_PATH | LinuxFs.O_DIRECTORY,
                LinuxFs.O_RDONLY | LinuxFs.O_NOFOLLOW, LinuxFs.O_PATH | LinuxFs.O_NOFOLLOW | LinuxFs.O_DIRECTORY,
                LinuxFs.O_RDONLY | LinuxFs.O_NOFOLLOW | LinuxFs.O_DIRECTORY,
                LinuxFs.O_WRONLY | LinuxFs.O_CREAT | LinuxFs.O_NOFOLLOW,
                LinuxFs.O_WRONLY | LinuxFs.O_CREAT, LinuxFs.O_WRONLY | LinuxFs.O_CREAT | LinuxFs.O_EXCL};
        int compared = 0;
        for (String x : names) {
            for (String y : names) {
                for (String z : new String[] {"", "/", "/file", "/.."}) {
                    String path = (x + "/" + y + z).replaceFirst("^/", "");
                    for (int flags : flagsTried) {
                        boolean creates = (flags & LinuxFs.O_CREAT) != 0;
                        String viaKernel = answer(() -> openat2(path, flags));
                        if (creates) {
                            undoCreate(path, viaKernel);
                        }
                        String viaWalk = answer(() -> BeneathWalk.open(rootFd, path, flags, 0600));
                        if (creates) {
                            undoCreate(path, viaWalk);
                        }
                        assertThat(viaWalk).as("%s with flags 0%o", path, flags).isEqualTo(viaKernel);
                        compared++;
                    }
                }
            }
        }
        assertThat(compared).isEqualTo(names.length * names.length * 4 * flagsTried.length);
        assertThat(tmp.resolve("made-outside")).doesNotExist();
        assertThat(Files.readString(tmp.resolve("secret.txt"))).isEqualTo("outside");
    }

    @Test
    void aDeepPathHoldsNoDescriptorPerLevelAndTheLengthBoundIsOpenat2s() throws Exception {
        String deep = "d/".repeat(2047); // 4094 bytes: one short of PATH_MAX with its NUL
        int dir = LinuxFs.openBeneath(rootFd, "", LinuxFs.O_PATH | LinuxFs.O_DIRECTORY, 0);
        for (int level = 0; level < 2047; level++) { // by descriptor: the tree's full names pass PATH_MAX
            NameCalls.mkdirAt(dir, "d", 0755);
            int next = LinuxFs.openBeneath(dir, "d", LinuxFs.O_PATH | LinuxFs.O_DIRECTORY, 0);
            LinuxFs.close(dir);
            dir = next;
        }
        LinuxFs.close(dir);
        int probe = LinuxFs.openRoot(root.toString());
        LinuxFs.close(probe); // the lowest free descriptor now; the walk's result takes it unless others are held
        int fd = BeneathWalk.open(rootFd, deep, LinuxFs.O_PATH | LinuxFs.O_DIRECTORY, 0);
        try {
            // one per level held would put it 2,046 above (another thread's open may take a number meanwhile)
            assertThat(fd).as("2,047 levels walked, each directory closed once the next is open")
                    .isLessThan(probe + 16);
        } finally {
            LinuxFs.close(fd);
        }
        String tooLong = deep + "dd"; // 4096 bytes
        assertThatThrownBy(() -> BeneathWalk.open(rootFd, tooLong, LinuxFs.O_PATH, 0))
                .isInstanceOfSatisfying(ErrnoException.class, e -> assertThat(e.errno)
                        .isEqualTo(ErrnoException.ENAMETOOLONG));
        if (PathResolution.KERNEL_HAS_OPENAT2) {
            assertThatThrownBy(() -> LinuxFs.openat2Beneath(rootFd, tooLong, LinuxFs.O_PATH, 0))
                    .isInstanceOfSatisfying(ErrnoException.class, e -> assertThat(e.errno)
                            .isEqualTo(ErrnoException.ENAMETOOLONG));
        }
        dev.kosa8.checkpoint.TreeRemoval.empty(root.resolve("d"), true); // by descriptor too, for the same reason
    }

    @Test
    void aDirectorySwappedForASymlinkOutsideDuringTheWalkIsNeverFollowed() throws Exception {
        Files.createDirectories(root.resolve("d/e"));
        Files.writeString(root.resolve("d/e/secret.txt"), "inside");
        Files.createDirectories(tmp.resolve("e"));
        Files.writeString(tmp.resolve("e/secret.txt"), "outside");
        AtomicBoolean stop = new AtomicBoolean();
        Thread swapper = Thread.ofPlatform().start(() -> {
            Path d = root.resolve("d"), aside = root.resolve("d-aside");
            while (!stop.get()) {
                try {
                    Files.move(d, aside);
                    Files.createSymbolicLink(d, tmp);
                    Files.delete(d);
                    Files.move(aside, d);
                } catch (Exception e) {
                    // a step raced with itself: the next round puts it right
                }
            }
        });
        AtomicInteger opened = new AtomicInteger();
        try {
            long deadline = System.nanoTime() + 2_000_000_000L;
            while (System.nanoTime() < deadline) {
                try {
                    int fd = BeneathWalk.open(rootFd, "d/e/secret.txt", LinuxFs.O_RDONLY, 0);
                    try {
                        java.nio.ByteBuffer buf = java.nio.ByteBuffer.allocateDirect(64);
                        int n = FdCalls.pread(fd, buf, 0);
                        assertThat(java.nio.charset.StandardCharsets.ISO_8859_1.decode(buf.flip()).toString()
                                .substring(0, n)).isEqualTo("inside");
                        opened.incrementAndGet();
                    } finally {
                        LinuxFs.close(fd);
                    }
                } catch (ErrnoException e) {
                    // refused, as openat2 refuses: the name was missing, a symlink, or (caught mid-rename) neither
                    assertThat(e.errno).as(e.getMessage()).isIn(ErrnoException.ENOENT, ErrnoException.ELOOP,
                            ErrnoException.ENOTDIR);
                }
            }
        } finally {
            stop.set(true);
            swapper.join();
        }
        assertThat(opened.get()).as("opens that raced no swap still worked").isPositive();
    }

    private interface Open {
        int run() throws ErrnoException;
    }

    /** "fd" and the file's type, or the errno: what two ways of opening are compared by. */
    private static String answer(Open open) {
        try {
            int fd = open.run();
            try {
                return "fd " + Integer.toOctalString(FdCalls.stat(fd).type());
            } finally {
                LinuxFs.close(fd);
            }
        } catch (ErrnoException e) {
            return "errno " + e.errno;
        }
    }

    /** openat2 itself, whichever profile this run chose for openBeneath. */
    private int openat2(String path, int flags) throws ErrnoException {
        return LinuxFs.openat2Beneath(rootFd, path, flags, 0600);
    }

    private void undoCreate(String path, String answer) throws Exception {
        Path made = root.resolve(path).normalize();
        if (answer.startsWith("fd") && made.startsWith(root) && Files.isRegularFile(made) && Files.size(made) == 0
                && !made.getFileName().toString().equals("file")) {
            Files.delete(made);
        }
    }
}
