package dev.kosa8.workspace;

import static dev.kosa8.workspace.P9TestClient.O_CREAT;
import static dev.kosa8.workspace.P9TestClient.O_RDONLY;
import static dev.kosa8.workspace.P9TestClient.O_RDWR;
import static dev.kosa8.workspace.P9TestClient.O_TRUNC;
import static dev.kosa8.workspace.P9TestClient.O_WRONLY;
import static dev.kosa8.workspace.P9TestClient.ROOT;
import static dev.kosa8.workspace.P9TestClient.data;
import static dev.kosa8.workspace.P9TestClient.errno;
import static dev.kosa8.workspace.WorkspaceServerTest.walkOk;
import static java.nio.charset.StandardCharsets.ISO_8859_1;
import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.FileVisitResult;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.SimpleFileVisitor;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.BasicFileAttributes;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A hostile guest against the workspace server: every request that names, links, creates or opens
 * something outside the shared folder is refused, and each test ends by checking that the host
 * outside the folder (a sibling directory with a canary, and the temp directory holding both) is
 * exactly as it was. Also the frames and fid games that could crash or hang the server.
 */
class WorkspaceServerAttackTest {
    private static final int EPERM = 1, EBADF = 9, ENOTDIR = 20, EINVAL = 22, ELOOP = 40;
    private static final int S_IFIFO = 010000, S_IFCHR = 020000, S_IFBLK = 060000, S_IFSOCK = 0140000;
    private static final String CANARY = "outside canary";

    @TempDir
    Path tmp;
    Path folder;
    Path outside;
    Map<String, String> before;
    P9TestClient c;
    Qid rootQid;

    @BeforeEach
    void serve() throws Exception {
        folder = Files.createDirectory(tmp.resolve("share"));
        outside = Files.createDirectory(tmp.resolve("outside"));
        Files.writeString(outside.resolve("canary"), CANARY);
        Files.createDirectory(outside.resolve("sub"));
        before = outsideState();
        c = P9TestClient.attached(folder, tmp);
        rootQid = ((P9Reply.Getattr) c.getattr(ROOT)).qid();
    }

    @AfterEach
    void outsideIsUntouched() throws Exception {
        c.close();
        assertThat(outsideState()).isEqualTo(before);
        assertThat(c.log()).noneMatch(line -> line.startsWith("internal error"));
    }

    /**
     * The outside directory, every file with its type, content, mode and mtime, and the names beside
     * the shared folder (but the test client's sockets, which come and go, and a neighbour's folder).
     */
    private Map<String, String> outsideState() throws Exception {
        Map<String, String> state = new TreeMap<>();
        try (var beside = Files.list(tmp)) {
            beside.map(p -> p.getFileName().toString()).filter(n -> !n.startsWith("sock") && !n.equals("other"))
                    .forEach(n -> state.put(n, "beside"));
        }
        Files.walkFileTree(outside, new SimpleFileVisitor<>() {
            @Override
            public FileVisitResult preVisitDirectory(Path dir, BasicFileAttributes attrs) {
                state.put(tmp.relativize(dir) + "/", "dir " + attrs.lastModifiedTime());
                return FileVisitResult.CONTINUE;
            }

            @Override
            public FileVisitResult visitFile(Path f, BasicFileAttributes attrs) {
                try {
                    String what = attrs.isRegularFile() ? Files.readString(f) : attrs.isOther() ? "other" : "link";
                    state.put(tmp.relativize(f).toString(), what + " " + attrs.lastModifiedTime() + " "
                            + Files.getAttribute(f, "unix:mode", LinkOption.NOFOLLOW_LINKS));
                } catch (Exception e) {
                    state.put(tmp.relativize(f).toString(), e.toString());
                }
                return FileVisitResult.CONTINUE;
            }
        });
        return state;
    }

    private static Qid lastQid(P9Reply r) {
        assertThat(r).isInstanceOf(P9Reply.Walk.class);
        return ((P9Reply.Walk) r).qids().getLast();
    }

    @Test
    void dotDotNeverClimbsAboveTheRoot() throws Exception {
        Files.createDirectory(folder.resolve("a"));
        assertThat(lastQid(c.walk(ROOT, 1, ".."))).isEqualTo(rootQid);
        assertThat(lastQid(c.walk(ROOT, 2, "a", "..", "..", ".."))).isEqualTo(rootQid);
        assertThat(lastQid(c.walk(2, 3, "..", ".", ".."))).isEqualTo(rootQid);
        assertThat(c.lcreate(3, "made-at-root", O_RDWR, 0644)).isInstanceOf(P9Reply.Lcreate.class);
        assertThat(folder.resolve("made-at-root")).exists();
        assertThat(c.walk(ROOT, 4, "..", "outside")).as("the root's parent is the root, without 'outside'")
                .isEqualTo(new P9Reply.Walk(List.of(rootQid)));
        assertThat(errno(c.getattr(4))).isEqualTo(EBADF);
        assertThat(errno(c.mkdir(1, "..", 0755))).isEqualTo(EINVAL);
    }

    @Test
    void namesWithSlashesOrNulAreRefused() throws Exception {
        assertThat(errno(c.walk(ROOT, 1, "../outside"))).isEqualTo(EINVAL);
        assertThat(errno(c.walk(ROOT, 1, "/etc"))).isEqualTo(EINVAL);
        assertThat(errno(c.lcreate(ROOT, "../outside/new", O_RDWR, 0644))).isEqualTo(EINVAL);
        assertThat(errno(c.mkdir(ROOT, "../outside/new", 0755))).isEqualTo(EINVAL);
        assertThat(errno(c.symlink(ROOT, "../outside/l", "x"))).isEqualTo(EINVAL);
        assertThat(errno(c.mknod(ROOT, "../outside/n", 0100644, 0, 0))).isEqualTo(EINVAL);
        assertThat(errno(c.renameAt(ROOT, "../outside/canary", ROOT, "stolen"))).isEqualTo(EINVAL);
        assertThat(errno(c.unlinkAt(ROOT, "../outside/canary", 0))).isEqualTo(EINVAL);

        for (String name : List.of("../outside", "a\0b", "\0")) {
            int tag = c.send(new P9Request.Walk(ROOT, 1, List.of(name)));
            assertThat(errno(c.await(tag))).as("walk to %s", name.replace('\0', '@')).isEqualTo(EINVAL);
        }
        int tag = c.send(new P9Request.Lcreate(ROOT, "x\0../../outside/evil", O_RDWR, 0644, 0));
        assertThat(errno(c.await(tag))).isEqualTo(EINVAL);
        assertThat(folder.resolve("x")).doesNotExist();
        assertThat(c.walk(ROOT, 1)).isInstanceOf(P9Reply.Walk.class);
    }

    @Test
    void symlinksOutAreNamesTheServerNeverFollows() throws Exception {
        Files.createSymbolicLink(folder.resolve("abs"), outside);
        Files.createSymbolicLink(folder.resolve("rel"), Path.of("../outside"));
        Files.createSymbolicLink(folder.resolve("file"), outside.resolve("canary"));
        Files.createSymbolicLink(folder.resolve("dangling"), outside.resolve("created"));
        for (String link : List.of("abs", "rel")) {
            P9Reply partial = c.walk(ROOT, 1, link, "canary");
            assertThat(partial).isInstanceOfSatisfying(P9Reply.Walk.class,
                    w -> assertThat(w.qids()).extracting(Qid::type).containsExactly(Qid.QTSYMLINK));
            walkOk(c, ROOT, 1, link);
            assertThat(errno(c.walk(1, 2, "canary"))).isEqualTo(ELOOP);
            assertThat(errno(c.walk(1, 2, "sub"))).isEqualTo(ELOOP);
            assertThat(errno(c.lopen(1, O_RDONLY))).isEqualTo(ELOOP);
            assertThat(errno(c.lcreate(1, "evil", O_RDWR, 0644))).isEqualTo(ENOTDIR);
            assertThat(errno(c.mkdir(1, "evil", 0755))).isEqualTo(ENOTDIR);
            assertThat(errno(c.mknod(1, "evil", S_IFIFO | 0644, 0, 0))).isEqualTo(ENOTDIR);
            assertThat(errno(c.symlink(1, "evil", "x"))).isEqualTo(ENOTDIR);
            assertThat(errno(c.unlinkAt(1, "canary", 0))).isEqualTo(ENOTDIR);
            assertThat(errno(c.setattr(new P9Request.Setattr(1, 1 | 8, 0777, 0, 0, 0, 0, 0, 0, 0))))
                    .isEqualTo(EINVAL);
            assertThat(c.readlink(1)).isEqualTo(new P9Reply.Readlink(link.equals("abs") ? outside.toString()
                    : "../outside"));
            assertThat(c.clunk(1)).isEqualTo(new P9Reply.Clunk());
        }
        walkOk(c, ROOT, 1, "file");
        assertThat(errno(c.lopen(1, O_RDONLY))).isEqualTo(ELOOP);
        assertThat(errno(c.lopen(1, O_WRONLY | O_TRUNC))).isEqualTo(ELOOP);
        assertThat(errno(c.setattr(new P9Request.Setattr(1, 8, 0, 0, 0, 0, 0, 0, 0, 0)))).isEqualTo(EINVAL);
        assertThat(c.setattr(new P9Request.Setattr(1, 1 | 32 | 256, 0777, 0, 0, 0, 0, 0, 5, 0)))
                .as("times of the link itself").isEqualTo(new P9Reply.Setattr());
        assertThat(Files.getLastModifiedTime(folder.resolve("file"), LinkOption.NOFOLLOW_LINKS).toMillis())
                .isEqualTo(5000);
        assertThat(c.link(ROOT, 1, "hard")).as("links the symlink, not its target").isEqualTo(new P9Reply.Link());
        assertThat(folder.resolve("hard")).isSymbolicLink();
        for (String name : List.of("file", "dangling")) {
            assertThat(errno(c.lcreate(ROOT, name, O_WRONLY | O_TRUNC, 0644))).isEqualTo(ELOOP);
            assertThat(errno(c.mkdir(ROOT, name, 0755))).isEqualTo(17);
            assertThat(errno(c.mknod(ROOT, name, 0100644, 0, 0))).isEqualTo(17);
        }
        walkOk(c, ROOT, 2);
        assertThat(c.lcreate(2, "plain", O_RDWR, 0644)).isInstanceOf(P9Reply.Lcreate.class);
        assertThat(c.renameAt(ROOT, "plain", ROOT, "abs")).as("replaces the link, not its target")
                .isEqualTo(new P9Reply.RenameAt());
        assertThat(folder.resolve("abs")).isRegularFile();
        assertThat(c.unlinkAt(ROOT, "rel", 0)).isEqualTo(new P9Reply.UnlinkAt());
        assertThat(c.symlink(ROOT, "mine", "/etc")).isInstanceOf(P9Reply.Symlink.class);
        assertThat(errno(c.walk(ROOT, 3, "mine", "passwd"))).isZero();
        assertThat(errno(c.getattr(3))).as("a partial walk makes no fid").isEqualTo(EBADF);
        assertThat(outside.resolve("created")).doesNotExist();
    }

    @Test
    void aDirectoryFidWhoseDirectoryBecameASymlinkOutReachesNothing() throws Exception {
        Files.createDirectory(folder.resolve("d"));
        Files.writeString(folder.resolve("d/canary"), "inside");
        walkOk(c, ROOT, 1, "d");
        walkOk(c, ROOT, 2, "d", "canary");
        walkOk(c, ROOT, 3, "d");
        walkOk(c, ROOT, 4, "d", "canary");
        assertThat(c.lopen(4, O_RDONLY)).isInstanceOf(P9Reply.Lopen.class);
        Files.move(folder.resolve("d"), folder.resolve("real"));
        Files.createSymbolicLink(folder.resolve("d"), outside);

        // paths through d fail at the symlink (ELOOP); d itself opened as a directory is no directory (ENOTDIR)
        assertThat(errno(c.walk(1, 5, "canary"))).isEqualTo(ELOOP);
        assertThat(errno(c.lcreate(1, "evil", O_RDWR | O_CREAT, 0644))).isEqualTo(ELOOP);
        assertThat(errno(c.mkdir(1, "evil", 0755))).isEqualTo(ENOTDIR);
        assertThat(errno(c.mknod(1, "evil", S_IFIFO | 0644, 0, 0))).isEqualTo(ENOTDIR);
        assertThat(errno(c.symlink(1, "evil", "x"))).isEqualTo(ENOTDIR);
        assertThat(errno(c.link(1, 2, "evil"))).isEqualTo(ENOTDIR);
        assertThat(errno(c.link(ROOT, 2, "evil"))).isEqualTo(ENOTDIR);
        assertThat(errno(c.renameAt(1, "canary", ROOT, "stolen"))).isEqualTo(ENOTDIR);
        assertThat(errno(c.renameAt(ROOT, "x", 1, "stolen"))).isEqualTo(ENOTDIR);
        assertThat(errno(c.unlinkAt(1, "canary", 0))).isEqualTo(ENOTDIR);
        assertThat(errno(c.unlinkAt(1, "sub", P9Operations.AT_REMOVEDIR))).isEqualTo(ENOTDIR);
        assertThat(errno(c.getattr(2))).isEqualTo(ELOOP);
        assertThat(errno(c.lopen(2, O_RDONLY))).isEqualTo(ELOOP);
        assertThat(errno(c.setattr(new P9Request.Setattr(2, 1 | 8 | 32, 0777, 0, 0, 0, 0, 0, 0, 0)))).isEqualTo(ELOOP);
        assertThat(errno(c.rename(2, ROOT, "stolen"))).isEqualTo(ENOTDIR);
        assertThat(errno(c.readlink(2))).isEqualTo(ELOOP);
        assertThat(errno(c.lopen(3, O_RDONLY))).isEqualTo(ELOOP);
        assertThat(new String(data(c.read(4, 0, 100)), UTF_8)).as("an open fid keeps the file it opened")
                .isEqualTo("inside");
        assertThat(errno(c.remove(2))).isEqualTo(ENOTDIR);
        assertThat(folder.resolve("stolen")).doesNotExist();
    }

    @Test
    void swappingADirectoryForASymlinkOutNeverLetsARequestThrough() throws Exception {
        Path d = folder.resolve("d");
        Path real = folder.resolve("real");
        Path link = folder.resolve("link");
        Files.createDirectory(d);
        Files.writeString(d.resolve("canary"), "inside");
        Files.createSymbolicLink(link, outside);
        AtomicBoolean stop = new AtomicBoolean();
        AtomicReference<Throwable> swapFailed = new AtomicReference<>();
        AtomicInteger swaps = new AtomicInteger();
        Thread swapper = new Thread(() -> {
            try {
                while (!stop.get()) {
                    Files.move(d, real, StandardCopyOption.ATOMIC_MOVE);
                    Files.move(link, d, StandardCopyOption.ATOMIC_MOVE);
                    Files.move(d, link, StandardCopyOption.ATOMIC_MOVE);
                    Files.move(real, d, StandardCopyOption.ATOMIC_MOVE);
                    swaps.incrementAndGet();
                }
            } catch (Throwable t) {
                swapFailed.set(t);
            }
        });
        swapper.start();
        int reads = 0, creates = 0, refused = 0;
        try {
            long end = System.nanoTime() + Duration.ofSeconds(3).toNanos();
            for (int i = 0; System.nanoTime() < end; i++) {
                if (c.walk(ROOT, 1, "d", "canary") instanceof P9Reply.Walk w && w.qids().size() == 2) {
                    if (c.lopen(1, O_RDONLY) instanceof P9Reply.Lopen) {
                        assertThat(new String(data(c.read(1, 0, 100)), UTF_8)).isEqualTo("inside");
                        reads++;
                    } else {
                        refused++;
                    }
                    c.clunk(1);
                }
                if (c.walk(ROOT, 2, "d") instanceof P9Reply.Walk w && w.qids().size() == 1) {
                    if (c.lcreate(2, "new-" + i, O_RDWR | O_CREAT, 0644) instanceof P9Reply.Lcreate) {
                        creates++;
                    } else {
                        refused++;
                    }
                    c.clunk(2);
                }
                if (c.walk(ROOT, 3, "d") instanceof P9Reply.Walk w && w.qids().size() == 1) {
                    c.mkdir(3, "dir-" + i, 0755);
                    c.clunk(3);
                }
            }
        } finally {
            stop.set(true);
            swapper.join();
        }
        assertThat(swapFailed.get()).isNull();
        assertThat(swaps.get()).isGreaterThan(10);
        assertThat(reads).as("some reads found the real directory").isPositive();
        assertThat(creates).isPositive();
        try (var made = Files.list(Files.isSymbolicLink(d) ? real : d)) {
            assertThat(made.filter(p -> p.getFileName().toString().startsWith("new-")).count()).isEqualTo(creates);
        }
        System.out.printf("swap race: %d swaps, %d reads, %d creates, %d refused%n", swaps.get(), reads, creates,
                refused);
    }

    @Test
    void linkCannotNameAPathOrLinkThroughASymlink() throws Exception {
        Files.writeString(folder.resolve("f"), "x");
        Files.createSymbolicLink(folder.resolve("abs"), outside);
        walkOk(c, ROOT, 1, "f");
        walkOk(c, ROOT, 2, "abs");
        assertThat(errno(c.link(ROOT, 1, "../outside/hard"))).isEqualTo(EINVAL);
        assertThat(errno(c.link(ROOT, 1, "abs/hard"))).isEqualTo(EINVAL);
        assertThat(errno(c.link(ROOT, 1, ".."))).isEqualTo(EINVAL);
        assertThat(errno(c.link(2, 1, "hard"))).isEqualTo(ENOTDIR);
        assertThat(errno(c.link(ROOT, 99, "hard"))).isEqualTo(EBADF);
    }

    @Test
    void mknodMakesFifosButNeverDevicesOrSockets() throws Exception {
        assertThat(errno(c.mknod(ROOT, "sda", S_IFBLK | 0600, 8, 0))).isEqualTo(EPERM);
        assertThat(errno(c.mknod(ROOT, "null", S_IFCHR | 0666, 1, 3))).isEqualTo(EPERM);
        assertThat(errno(c.mknod(ROOT, "sock", S_IFSOCK | 0666, 0, 0))).isEqualTo(EPERM);
        assertThat(errno(c.mknod(ROOT, "dir", 040755, 0, 0))).isEqualTo(EPERM);
        try (var names = Files.list(folder)) {
            assertThat(names).isEmpty();
        }
        assertThat(c.mknod(ROOT, "fifo", S_IFIFO | 0640, 0, 0)).isInstanceOf(P9Reply.Mknod.class);
        assertThat((int) Files.getAttribute(folder.resolve("fifo"), "unix:mode") & 0170000).isEqualTo(S_IFIFO);
    }

    @Test
    void specialFilesPutInTheFolderAreNeverOpened() throws Exception {
        Files.createFile(folder.resolve("x"));
        new ProcessBuilder("mkfifo", folder.resolve("fifo").toString()).inheritIO().start().waitFor();
        assertThat(folder.resolve("fifo")).exists();
        walkOk(c, ROOT, 1, "fifo");
        for (int flags : new int[] {O_RDONLY, O_WRONLY, O_RDWR}) {
            int tag = c.send(new P9Request.Lopen(1, flags));
            assertThat(errno(c.awaitResponse(tag, Duration.ofSeconds(2)).reply())).isEqualTo(EPERM);
        }
        walkOk(c, ROOT, 2);
        assertThat(errno(c.lcreate(2, "fifo", O_RDONLY, 0644))).isEqualTo(EPERM);
        assertThat(c.getattr(ROOT)).isInstanceOf(P9Reply.Getattr.class);

        int fd = LinuxFs.openRoot(folder.toString());
        try {
            NameCalls.mknodAt(fd, "null", S_IFCHR | 0666, LinuxFs.makedev(1, 3));
        } catch (ErrnoException notRoot) {
            return;
        } finally {
            LinuxFs.close(fd);
        }
        walkOk(c, ROOT, 3, "null");
        assertThat(errno(c.lopen(3, O_RDWR))).isEqualTo(EPERM);
        assertThat(errno(c.setattr(new P9Request.Setattr(3, 8, 0, 0, 0, 0, 0, 0, 0, 0)))).isEqualTo(EINVAL);
    }

    @Test
    void aFifoIsNeverOpenedSoAWriterWaitingForAReaderKeepsWaiting() throws Exception {
        Path fifo = folder.resolve("fifo");
        new ProcessBuilder("mkfifo", fifo.toString()).inheritIO().start().waitFor();
        walkOk(c, ROOT, 1, "fifo");
        walkOk(c, ROOT, 2);
        AtomicBoolean opened = new AtomicBoolean();
        Thread writer = new Thread(() -> {
            try (var out = Files.newOutputStream(fifo)) { // blocks until someone opens the FIFO for reading
                opened.set(true);
            } catch (Exception ignored) {
                // the test fails on `opened` instead
            }
        });
        writer.start();
        try {
            Thread.sleep(200);
            assertThat(errno(c.lopen(1, O_RDONLY))).isEqualTo(EPERM);
            assertThat(errno(c.lopen(1, O_RDWR))).isEqualTo(EPERM);
            assertThat(errno(c.lcreate(2, "fifo", O_RDONLY, 0644))).isEqualTo(EPERM);
            writer.join(300);
            assertThat(opened).as("the server opened the FIFO for reading").isFalse();
        } finally {
            int root = LinuxFs.openRoot(folder.toString()); // a reader that does not wait for the writer
            LinuxFs.close(LinuxFs.openBeneath(root, "fifo", LinuxFs.O_RDONLY | LinuxFs.O_NONBLOCK, 0));
            LinuxFs.close(root);
            writer.join(2000);
        }
    }

    private static byte[] header(long size, int type, int tag) {
        return ByteBuffer.allocate(7).order(ByteOrder.LITTLE_ENDIAN).putInt((int) size).put((byte) type)
                .putShort((short) tag).array();
    }

    @Test
    void aFrameLargerThanMsizeClosesTheConnectionAndAFreshOneWorks() throws Exception {
        c.sendRaw(header(WorkspaceServer.MSIZE + 1L, 24, 1));
        assertThat(c.closedWithin(Duration.ofSeconds(2))).isTrue();
        assertThat(c.log()).anyMatch(l -> l.contains("broken frame"));
        try (P9TestClient fresh = P9TestClient.attached(folder, tmp)) {
            assertThat(fresh.getattr(ROOT)).isInstanceOf(P9Reply.Getattr.class);
        }
    }

    @Test
    void framesShorterThanAHeaderCloseTheConnection() throws Exception {
        c.sendRaw(header(3, 24, 1));
        assertThat(c.closedWithin(Duration.ofSeconds(2))).isTrue();
        try (P9TestClient again = P9TestClient.attached(folder, tmp)) {
            again.sendRaw(header(0xffff_ffffL, 24, 1));
            assertThat(again.closedWithin(Duration.ofSeconds(2))).isTrue();
        }
        try (P9TestClient again = P9TestClient.attached(folder, tmp)) {
            again.sendRaw(header(8192, 100, 0xffff));
            again.sendRaw(new byte[8192 - 7]); // a Tversion body of zeros: malformed, answered, not fatal
            assertThat(errno(again.await(0xffff))).isEqualTo(EINVAL);
            again.sendRaw(header(7, 255, 9)); // unknown type
            assertThat(errno(again.await(9))).isEqualTo(71);
            assertThat(again.getattr(ROOT)).isInstanceOf(P9Reply.Getattr.class);
        }
    }

    @Test
    void tenThousandFidsWorkAndClunk() throws Exception {
        int n = 10_000, window = 256;
        for (int start = 1; start <= n; start += window) {
            int[] tags = new int[Math.min(window, n - start + 1)];
            for (int i = 0; i < tags.length; i++) {
                tags[i] = c.send(new P9Request.Walk(ROOT, start + i, List.of()));
            }
            for (int tag : tags) {
                assertThat(c.await(tag)).isEqualTo(new P9Reply.Walk(List.of()));
            }
        }
        assertThat(c.server().pause(Duration.ofSeconds(2))).isTrue();
        assertThat(c.server().snapshot().fids()).hasSize(n + 1);
        c.server().resume();
        for (int start = 1; start <= n; start += window) {
            int[] tags = new int[Math.min(window, n - start + 1)];
            for (int i = 0; i < tags.length; i++) {
                tags[i] = c.send(new P9Request.Clunk(start + i));
            }
            for (int tag : tags) {
                assertThat(c.await(tag)).isEqualTo(new P9Reply.Clunk());
            }
        }
        assertThat(c.server().pause(Duration.ofSeconds(2))).isTrue();
        assertThat(c.server().snapshot().fids()).hasSize(1);
        c.server().resume();
    }

    @Test
    void unknownAndReusedFidsAreRefused() throws Exception {
        for (P9Request r : List.<P9Request>of(new P9Request.Getattr(77, 0x7ff), new P9Request.Lopen(77, 0),
                new P9Request.Read(77, 0, 10), new P9Request.Walk(77, 78, List.of()), new P9Request.Clunk(77),
                new P9Request.Remove(77), new P9Request.Readdir(77, 0, 100), new P9Request.Mkdir(77, "x", 0755, 0),
                new P9Request.Write(77, 0, ByteBuffer.wrap(new byte[1])), new P9Request.Walk(ROOT, -1, List.of()))) {
            assertThat(errno(c.call(r))).as("%s", r).isEqualTo(EBADF);
        }
        walkOk(c, ROOT, 1);
        assertThat(errno(c.walk(ROOT, 1))).isEqualTo(EBADF);
        assertThat(errno(c.attach(1))).isEqualTo(EBADF);
        assertThat(errno(c.call(new P9Request.XattrWalk(ROOT, 1, "")))).isEqualTo(EBADF);
        assertThat(errno(c.call(new P9Request.XattrWalk(ROOT, ROOT, "")))).isEqualTo(EBADF);
        assertThat(errno(c.read(ROOT, 0, 10))).as("read of an unopened fid").isEqualTo(EBADF);
        assertThat(c.getattr(ROOT)).isInstanceOf(P9Reply.Getattr.class);
    }

    /**
     * A clunk racing reads, writes and truncations of the same fid must not close the descriptor
     * under them: its number would be reused by the next open anywhere in the daemon, here a
     * second sandbox's, and the request would reach that sandbox's file.
     */
    @Test
    void requestsRacingAClunkOfTheirFidNeverReachAnotherSandboxsFiles() throws Exception {
        Path other = Files.createDirectory(tmp.resolve("other"));
        Files.writeString(other.resolve("secret"), "SECRET");
        Files.writeString(folder.resolve("mine"), "mine");
        AtomicBoolean stop = new AtomicBoolean();
        AtomicReference<Throwable> neighbourFailed = new AtomicReference<>();
        try (P9TestClient neighbour = P9TestClient.attached(other, tmp)) {
            Thread busy = new Thread(() -> {
                try {
                    while (!stop.get()) {
                        pipeline(neighbour, fid -> new P9Request.Walk(ROOT, fid, List.of("secret")));
                        pipeline(neighbour, fid -> new P9Request.Lopen(fid, O_RDWR));
                        for (P9Reply r : pipeline(neighbour, fid -> new P9Request.Read(fid, 0, 100))) {
                            if (r instanceof P9Reply.Read) {
                                assertThat(new String(data(r), ISO_8859_1)).isEqualTo("SECRET");
                            }
                        }
                        pipeline(neighbour, P9Request.Clunk::new);
                    }
                } catch (Throwable t) {
                    neighbourFailed.set(t);
                }
            });
            busy.start();
            try {
                long end = System.nanoTime() + Duration.ofSeconds(3).toNanos();
                while (System.nanoTime() < end && neighbourFailed.get() == null) {
                    walkOk(c, ROOT, 1, "mine");
                    c.lopen(1, O_RDWR);
                    List<P9Request> mixed = List.of(new P9Request.Read(1, 0, 100),
                            new P9Request.Setattr(1, 8, 0, 0, 0, 4, 0, 0, 0, 0),
                            new P9Request.Write(1, 0, ByteBuffer.wrap("mine".getBytes(UTF_8))),
                            new P9Request.Read(1, 0, 100), new P9Request.Clunk(1),
                            new P9Request.Setattr(1, 8, 0, 0, 0, 4, 0, 0, 0, 0),
                            new P9Request.Write(1, 0, ByteBuffer.wrap("mine".getBytes(UTF_8))),
                            new P9Request.Read(1, 0, 100), new P9Request.Getattr(1, 0x7ff));
                    int[] tags = new int[mixed.size()];
                    for (int i = 0; i < tags.length; i++) {
                        tags[i] = c.send(mixed.get(i));
                    }
                    for (int tag : tags) {
                        P9Reply r = c.await(tag);
                        if (r instanceof P9Reply.Read) {
                            assertThat(new String(data(r), ISO_8859_1)).isEqualTo("mine");
                        } else if (r instanceof P9Reply.Getattr g) {
                            assertThat(g.qid().path())
                                    .isEqualTo(Files.getAttribute(folder.resolve("mine"), "unix:ino"));
                        }
                    }
                }
            } finally {
                stop.set(true);
                busy.join();
            }
        }
        assertThat(neighbourFailed.get()).isNull();
        assertThat(other.resolve("secret")).hasContent("SECRET");
        assertThat(folder.resolve("mine")).hasContent("mine");
    }

    /** Sends one request for each of fids 1..4 at once and returns their replies. */
    private static List<P9Reply> pipeline(P9TestClient client, java.util.function.IntFunction<P9Request> request)
            throws Exception {
        int[] tags = new int[4];
        for (int fid = 1; fid <= tags.length; fid++) {
            tags[fid - 1] = client.send(request.apply(fid));
        }
        List<P9Reply> replies = new java.util.ArrayList<>();
        for (int tag : tags) {
            replies.add(client.await(tag));
        }
        return replies;
    }

    @Test
    void theGuestCannotMakeSetuidFilesOnTheHost() throws Exception {
        assertThat(c.walk(ROOT, 1)).isInstanceOf(P9Reply.Walk.class);
        assertThat(c.lcreate(1, "suid", P9TestClient.O_RDWR, 06755)).isInstanceOf(P9Reply.Lcreate.class);
        assertThat(c.mkdir(ROOT, "shared", 02775)).isInstanceOf(P9Reply.Mkdir.class);
        assertThat(c.mknod(ROOT, "node", 0100000 | 04755, 0, 0)).isInstanceOf(P9Reply.Mknod.class);
        assertThat((Integer) Files.getAttribute(folder.resolve("suid"), "unix:mode") & 07777).isEqualTo(0755);
        assertThat((Integer) Files.getAttribute(folder.resolve("node"), "unix:mode") & 07777).isEqualTo(0755);
        assertThat((Integer) Files.getAttribute(folder.resolve("shared"), "unix:mode") & 07777)
                .as("set-group-id stays on directories").isEqualTo(02775);
        assertThat(c.walk(ROOT, 2, "node")).isInstanceOf(P9Reply.Walk.class);
        assertThat(c.setattr(new P9Request.Setattr(2, 1, 04777, 0, 0, 0, 0, 0, 0, 0)))
                .isInstanceOf(P9Reply.Setattr.class);
        assertThat((Integer) Files.getAttribute(folder.resolve("node"), "unix:mode") & 07777).isEqualTo(0777);
    }

    @Test
    void aGuestOpeningFilesWithoutEndHitsItsOwnLimitNotTheDaemons() throws Exception {
        Files.writeString(folder.resolve("f"), "x");
        int opened = 0;
        int refused = 0;
        for (int i = 0; i < P9Opens.MAX_OPEN + 10; i++) {
            int fid = 100 + i;
            assertThat(c.walk(ROOT, fid, "f")).isInstanceOf(P9Reply.Walk.class);
            P9Reply r = c.lopen(fid, P9TestClient.O_RDONLY);
            if (r instanceof P9Reply.Lopen) {
                opened++;
            } else {
                assertThat(P9TestClient.errno(r)).isEqualTo(24); // EMFILE
                refused++;
            }
        }
        assertThat(opened).isEqualTo(P9Opens.MAX_OPEN);
        assertThat(refused).isEqualTo(10);
        assertThat(c.clunk(100)).isInstanceOf(P9Reply.Clunk.class);
        assertThat(c.lopen(100 + P9Opens.MAX_OPEN, P9TestClient.O_RDONLY))
                .as("a clunk gives its place back").isInstanceOf(P9Reply.Lopen.class);
    }
}
