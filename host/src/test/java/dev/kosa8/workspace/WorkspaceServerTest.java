package dev.kosa8.workspace;

import static dev.kosa8.workspace.P9TestClient.O_DIRECTORY;
import static dev.kosa8.workspace.P9TestClient.O_RDONLY;
import static dev.kosa8.workspace.P9TestClient.O_RDWR;
import static dev.kosa8.workspace.P9TestClient.ROOT;
import static dev.kosa8.workspace.P9TestClient.data;
import static dev.kosa8.workspace.P9TestClient.errno;
import static java.nio.charset.StandardCharsets.ISO_8859_1;
import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.ObjectMapper;
import java.nio.ByteBuffer;
import java.nio.file.FileStore;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The workspace server as the guest kernel uses it: each 9P2000.L operation against a real folder,
 * checked both in the reply and on the host's file system, and the pause/snapshot/restore cycle a
 * checkpoint goes through.
 */
class WorkspaceServerTest {
    private static final int EBADF = 9, EISDIR = 21, ENOTEMPTY = 39, ENODATA = 61, EOPNOTSUPP = 95, ESTALE = 116;
    private static final int ENOENT = 2, EPERM = 1, EEXIST = 17, ENOTDIR = 20, EINVAL = 22, EBUSY = 16;
    private static final int S_IFMT = 0170000, S_IFLNK = 0120000;

    @TempDir
    Path tmp;
    Path folder;
    P9TestClient c;

    @BeforeEach
    void serve() throws Exception {
        folder = Files.createDirectory(tmp.resolve("share"));
        c = P9TestClient.attached(folder, tmp);
    }

    @AfterEach
    void close() {
        c.closeWithoutInternalErrors();
    }

    private static Qid qid(P9Reply r) {
        return switch (r) {
            case P9Reply.Attach a -> a.qid();
            case P9Reply.Lopen o -> o.qid();
            case P9Reply.Lcreate l -> l.qid();
            case P9Reply.Mkdir m -> m.qid();
            case P9Reply.Symlink s -> s.qid();
            case P9Reply.Mknod m -> m.qid();
            case P9Reply.Getattr g -> g.qid();
            case P9Reply.Walk w -> w.qids().getLast();
            default -> throw new AssertionError("no qid in " + r);
        };
    }

    private static P9Reply.Getattr attr(P9Reply r) {
        assertThat(r).isInstanceOf(P9Reply.Getattr.class);
        return (P9Reply.Getattr) r;
    }

    private void walkOk(int fid, int newFid, String... names) throws Exception {
        walkOk(c, fid, newFid, names);
    }

    static void walkOk(P9TestClient client, int fid, int newFid, String... names) throws Exception {
        assertThat(client.walk(fid, newFid, names))
                .isInstanceOfSatisfying(P9Reply.Walk.class, w -> assertThat(w.qids()).hasSize(names.length));
    }

    private static long ino(Path p) throws Exception {
        return (long) Files.getAttribute(p, "unix:ino", java.nio.file.LinkOption.NOFOLLOW_LINKS);
    }

    static String text(P9Reply read) {
        return new String(data(read), ISO_8859_1);
    }

    @Test
    void versionAttachAndWalkDescribeTheFolder() throws Exception {
        Files.createDirectories(folder.resolve("a/b"));
        Files.writeString(folder.resolve("a/b/f"), "hello");

        assertThat(c.getattr(ROOT)).satisfies(r -> assertThat(qid(r)).isEqualTo(new Qid(Qid.QTDIR, 0, ino(folder))));
        P9Reply walk = c.walk(ROOT, 1, "a", "b", "f");
        assertThat(((P9Reply.Walk) walk).qids()).extracting(Qid::type)
                .containsExactly(Qid.QTDIR, Qid.QTDIR, Qid.QTFILE);
        assertThat(qid(walk).path()).isEqualTo(ino(folder.resolve("a/b/f")));
        P9Reply.Getattr g = attr(c.getattr(1));
        assertThat(g.qid()).isEqualTo(qid(walk));
        assertThat(g.size()).isEqualTo(5);
        assertThat(g.mode()).isEqualTo(Files.getAttribute(folder.resolve("a/b/f"), "unix:mode"));
        assertThat(g.nlink()).isEqualTo(1);
        walkOk(1, 2); // a walk of no names clones
        assertThat(qid(c.getattr(2))).isEqualTo(g.qid());

        P9Reply partial = c.walk(ROOT, 3, "a", "missing");
        assertThat(partial).isInstanceOfSatisfying(P9Reply.Walk.class, w -> assertThat(w.qids()).hasSize(1));
        assertThat(errno(c.getattr(3))).as("a partial walk makes no fid").isEqualTo(EBADF);
        assertThat(errno(c.walk(ROOT, 3, "missing"))).isEqualTo(ENOENT);
        assertThat(errno(c.walk(1, 3, "x"))).isEqualTo(ENOTDIR);
    }

    /**
     * A server started for a guest that talked to another one (the daemon restarted) first gets what was
     * meant for the old one: the rest of a half-sent request, whole requests for fids it never heard of. It
     * skips all of it, however much, unanswered, and serves from the new mount's Tversion on.
     */
    @Test
    void aNewSessionSkipsWhatCameBeforeItsTversion() throws Exception {
        Files.writeString(folder.resolve("f"), "hello");
        try (P9TestClient fresh = P9TestClient.connect(folder, tmp, true)) {
            byte[] tail = new byte[3 * WorkspaceServer.MSIZE]; // more than the reader's buffer holds
            new java.util.Random(7).nextBytes(tail);
            fresh.sendRaw(tail);
            ByteBuffer old = P9TestClient.encode(7, new P9Request.Getattr(ROOT, 0x7ff)); // an old mount's, whole
            int skipped = tail.length + old.remaining();
            fresh.sendRaw(old);
            ByteBuffer version = P9TestClient.encode(P9Codec.NOTAG,
                    new P9Request.Version(WorkspaceServer.MSIZE, P9Operations.VERSION));
            fresh.sendRaw(version.slice(0, 9)); // the Tversion split across reads
            Thread.sleep(50);
            fresh.sendRaw(version.slice(9, version.remaining() - 9));
            assertThat(fresh.await(P9Codec.NOTAG)).isEqualTo(
                    new P9Reply.Version(WorkspaceServer.MSIZE, P9Operations.VERSION));
            assertThat(fresh.attach(ROOT)).isInstanceOf(P9Reply.Attach.class);
            walkOk(fresh, ROOT, 1, "f");
            assertThat(fresh.lopen(1, O_RDONLY)).isInstanceOf(P9Reply.Lopen.class);
            assertThat(text(fresh.read(1, 0, 100))).isEqualTo("hello");
            assertThat(fresh.arrivals()).as("nothing before the Tversion was answered").doesNotContain(7)
                    .first().isEqualTo(P9Codec.NOTAG);
            assertThat(fresh.log()).anyMatch(l -> l.startsWith("skipped " + skipped + " bytes"));
        }
    }

    /**
     * A Twrite's data go to the file in pieces of {@link P9Operations#WRITE_PIECE}: the file gets them
     * whole, at the offset asked, and a descriptor that cannot write refuses an empty write as a full one.
     */
    @Test
    void aWriteGoesInPiecesAndLandsWholeAtItsOffset() throws Exception {
        walkOk(ROOT, 2);
        assertThat(c.lcreate(2, "pieces", O_RDWR, 0644)).isInstanceOf(P9Reply.Lcreate.class);
        byte[] data = new byte[3 * P9Operations.WRITE_PIECE + 3];
        new java.util.Random(5).nextBytes(data);
        assertThat(c.write(2, 7, data)).isEqualTo(new P9Reply.Write(data.length));
        byte[] expected = new byte[7 + data.length];
        System.arraycopy(data, 0, expected, 7, data.length);
        assertThat(Files.readAllBytes(folder.resolve("pieces"))).isEqualTo(expected);

        walkOk(ROOT, 1, "pieces");
        assertThat(c.lopen(1, O_RDONLY)).isInstanceOf(P9Reply.Lopen.class);
        assertThat(errno(c.write(1, 0, new byte[0]))).isEqualTo(EBADF);
        assertThat(errno(c.write(1, 0, data))).isEqualTo(EBADF);
        assertThat(Files.readAllBytes(folder.resolve("pieces"))).isEqualTo(expected);
    }

    /**
     * A large Twrite whose bytes come in pieces, as QEMU writes a 1 MiB one to the socket, is read on
     * straight into its request buffer: it must be served whole, and the request that follows it in the
     * same piece must be served too, not swallowed with it. A piece ends mid-header as well.
     */
    @Test
    void aLargeTwriteArrivingInPiecesIsServedWholeAndWhatFollowsItToo() throws Exception {
        assertThat(c.lcreate(ROOT, "pieces", O_RDWR, 0644)).isInstanceOf(P9Reply.Lcreate.class);
        byte[] data = new byte[WorkspaceServer.MSIZE - 23];
        new java.util.Random(11).nextBytes(data);
        ByteBuffer big = P9TestClient.encode(1, new P9Request.Write(ROOT, 0, ByteBuffer.wrap(data)));
        ByteBuffer next = P9TestClient.encode(2, new P9Request.Write(ROOT, data.length, ByteBuffer.wrap(data, 0, 5)));
        int[] cuts = {2, 20, 70_000, 300_000, big.remaining() - 1};
        int at = 0;
        for (int cut : cuts) {
            c.sendRaw(big.slice(at, cut - at));
            at = cut;
            Thread.sleep(30);
        }
        ByteBuffer last = ByteBuffer.allocate(big.remaining() - at + next.remaining());
        last.put(big.slice(at, big.remaining() - at)).put(next).flip();
        c.sendRaw(last);
        assertThat(c.await(1)).isEqualTo(new P9Reply.Write(data.length));
        assertThat(c.await(2)).isEqualTo(new P9Reply.Write(5));
        byte[] expected = java.util.Arrays.copyOf(data, data.length + 5);
        System.arraycopy(data, 0, expected, data.length, 5);
        assertThat(Files.readAllBytes(folder.resolve("pieces"))).isEqualTo(expected);
    }

    /**
     * A Tversion starts a new session; every request sent before it answers before it does, so the guest's
     * relay can drop the old session's answers up to the Rversion and pass on the rest.
     */
    @Test
    void aTversionIsAnsweredAfterEveryRequestBeforeIt() throws Exception {
        Files.write(folder.resolve("big"), new byte[WorkspaceServer.MSIZE]);
        walkOk(ROOT, 1, "big");
        assertThat(c.lopen(1, O_RDONLY)).isInstanceOf(P9Reply.Lopen.class);
        List<Integer> reads = new java.util.ArrayList<>();
        for (int i = 0; i < 32; i++) {
            reads.add(c.send(new P9Request.Read(1, 0, WorkspaceServer.MSIZE / 2)));
        }
        c.sendVersion(WorkspaceServer.MSIZE, P9Operations.VERSION);
        assertThat(c.await(P9Codec.NOTAG)).isInstanceOf(P9Reply.Version.class);
        for (int tag : reads) {
            c.await(tag);
        }
        assertThat(c.arrivals()).hasSize(2 + 2 + 32 + 1).last().isEqualTo(P9Codec.NOTAG);
    }

    @Test
    void versionNegotiatesMsizeAndRefusesOtherDialects() throws Exception {
        assertThat(c.await(c.sendVersion(8192, "9P2000.L"))).isEqualTo(new P9Reply.Version(8192, "9P2000.L"));
        assertThat(errno(c.getattr(ROOT))).as("Tversion clunks every fid").isEqualTo(EBADF);
        assertThat(c.await(c.sendVersion(100, "9P2000.L"))).as("never more than the client offers, never too little")
                .isEqualTo(new P9Reply.Version(8192, "unknown"));
        assertThat(c.await(c.sendVersion(4096, "9P2000.L"))).isEqualTo(new P9Reply.Version(4096, "9P2000.L"));
        assertThat(c.await(c.sendVersion(8192, "9P2000.u"))).isEqualTo(new P9Reply.Version(4096, "unknown"));
    }

    @Test
    void lcreateWriteAndReadRoundTripAtOffsets() throws Exception {
        walkOk(ROOT, 1);
        P9Reply created = c.lcreate(1, "new", O_RDWR, 0666);
        assertThat(created).isInstanceOf(P9Reply.Lcreate.class);
        Path file = folder.resolve("new");
        assertThat(qid(created)).isEqualTo(new Qid(Qid.QTFILE, 0, ino(file)));
        assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(file)))
                .as("the daemon's umask does not narrow the guest's mode").isEqualTo("rw-rw-rw-");

        assertThat(c.write(1, 0, "hello world".getBytes(UTF_8))).isEqualTo(new P9Reply.Write(11));
        assertThat(c.write(1, 6, "WORLD".getBytes(UTF_8))).isEqualTo(new P9Reply.Write(5));
        assertThat(c.write(1, 20, "x".getBytes(UTF_8))).isEqualTo(new P9Reply.Write(1));
        String expected = "hello WORLD" + "\0".repeat(9) + "x";
        assertThat(text(c.read(1, 0, 100))).isEqualTo(expected);
        assertThat(text(c.read(1, 6, 3))).isEqualTo("WOR");
        assertThat(data(c.read(1, 21, 10))).isEmpty();
        assertThat(Files.readString(file, ISO_8859_1)).isEqualTo(expected);

        byte[] big = new byte[200_000];
        new Random(1).nextBytes(big);
        assertThat(c.write(1, 0, big)).isEqualTo(new P9Reply.Write(big.length));
        assertThat(c.readAll(1, 65536)).isEqualTo(big);
        assertThat(Files.readAllBytes(file)).isEqualTo(big);
        assertThat(errno(c.lcreate(ROOT, "new", O_RDWR | P9TestClient.O_EXCL, 0644))).isEqualTo(EEXIST);

        Files.setPosixFilePermissions(file, PosixFilePermissions.fromString("rw-------"));
        walkOk(ROOT, 2);
        assertThat(c.lcreate(2, "new", O_RDONLY, 0666)).as("an existing name is opened")
                .isEqualTo(new P9Reply.Lcreate(qid(created), 0));
        assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(file)))
                .as("the mode of a file that was not created is left alone").isEqualTo("rw-------");
        assertThat(c.readAll(2, 65536)).isEqualTo(big);
    }

    @Test
    void readdirListsEveryOneOf3000EntriesAcrossSeveralCalls() throws Exception {
        assertThat(c.mkdir(ROOT, "many", 0750)).isInstanceOf(P9Reply.Mkdir.class);
        Path many = folder.resolve("many");
        assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(many))).isEqualTo("rwxr-x---");
        Set<String> expected = new HashSet<>(List.of(".", ".."));
        for (int i = 0; i < 3000; i++) {
            String name = "entry-" + i + "-" + "x".repeat(i % 50);
            Files.createFile(many.resolve(name));
            expected.add(name);
        }
        walkOk(ROOT, 1, "many");
        assertThat(c.lopen(1, O_RDONLY | O_DIRECTORY)).isInstanceOf(P9Reply.Lopen.class);

        List<String> seen = new ArrayList<>();
        long offset = 0;
        int calls = 0;
        while (true) {
            P9Reply r = c.readdir(1, offset, 8192);
            assertThat(r).isInstanceOf(P9Reply.Readdir.class);
            List<P9Codec.DirEntry> entries = P9Codec.dirEntries(((P9Reply.Readdir) r).data());
            if (entries.isEmpty()) {
                break;
            }
            calls++;
            for (P9Codec.DirEntry e : entries) {
                seen.add(e.name());
                if (e.name().equals("entry-7-xxxxxxx")) {
                    assertThat(e.qid()).isEqualTo(new Qid(Qid.QTFILE, 0, ino(many.resolve(e.name()))));
                    assertThat(e.type()).isEqualTo((byte) 8);
                }
            }
            offset = entries.getLast().offset();
        }
        assertThat(calls).isGreaterThan(5);
        assertThat(seen).hasSize(expected.size()).containsExactlyInAnyOrderElementsOf(expected);
    }

    @Test
    void renameAndRenameatMoveNamesAndFidsFollowThem() throws Exception {
        Files.createDirectories(folder.resolve("a/b"));
        Files.writeString(folder.resolve("a/b/file"), "content");
        walkOk(ROOT, 1, "a", "b");
        walkOk(ROOT, 2, "a", "b", "file");
        Qid fileQid = qid(c.getattr(2));

        assertThat(c.renameAt(ROOT, "a", ROOT, "c")).isEqualTo(new P9Reply.RenameAt());
        assertThat(folder.resolve("a")).doesNotExist();
        assertThat(folder.resolve("c/b/file")).hasContent("content");
        assertThat(qid(c.getattr(1))).isEqualTo(new Qid(Qid.QTDIR, 0, ino(folder.resolve("c/b"))));
        walkOk(1, 3, "file");
        assertThat(qid(c.getattr(3))).isEqualTo(fileQid);

        assertThat(c.rename(2, ROOT, "moved")).isEqualTo(new P9Reply.Rename());
        assertThat(folder.resolve("moved")).hasContent("content");
        assertThat(folder.resolve("c/b/file")).doesNotExist();
        assertThat(qid(c.getattr(3))).as("every fid of the file follows it").isEqualTo(fileQid);
        assertThat(c.lopen(2, O_RDONLY)).isInstanceOf(P9Reply.Lopen.class);
        assertThat(text(c.read(2, 0, 100))).isEqualTo("content");

        assertThat(errno(c.rename(ROOT, 1, "x"))).isEqualTo(EBUSY);
        assertThat(errno(c.rename(3, 2, "x"))).isEqualTo(ENOTDIR);
    }

    @Test
    void unlinkatRemovesFilesAndEmptyDirectoriesOnly() throws Exception {
        Files.writeString(folder.resolve("f"), "x");
        Files.createDirectory(folder.resolve("d"));
        Files.createDirectories(folder.resolve("full/sub"));

        assertThat(c.unlinkAt(ROOT, "f", 0)).isEqualTo(new P9Reply.UnlinkAt());
        assertThat(folder.resolve("f")).doesNotExist();
        assertThat(errno(c.unlinkAt(ROOT, "d", 0))).isEqualTo(EISDIR);
        assertThat(c.unlinkAt(ROOT, "d", P9Operations.AT_REMOVEDIR)).isEqualTo(new P9Reply.UnlinkAt());
        assertThat(folder.resolve("d")).doesNotExist();
        assertThat(errno(c.unlinkAt(ROOT, "full", P9Operations.AT_REMOVEDIR))).isEqualTo(ENOTEMPTY);
        assertThat(folder.resolve("full/sub")).isDirectory();
        assertThat(errno(c.unlinkAt(ROOT, "missing", 0))).isEqualTo(ENOENT);
    }

    @Test
    void symlinkStoresItsTargetAsTextAndReadlinkReturnsIt() throws Exception {
        P9Reply made = c.symlink(ROOT, "l", "some/target with \u00ff");
        assertThat(qid(made).type()).isEqualTo(Qid.QTSYMLINK);
        assertThat(folder.resolve("l")).isSymbolicLink();
        walkOk(ROOT, 1, "l");
        assertThat(c.readlink(1)).isEqualTo(new P9Reply.Readlink("some/target with \u00ff"));
        assertThat(attr(c.getattr(1)).mode() & S_IFMT).isEqualTo(S_IFLNK);
        Files.writeString(folder.resolve("plain"), "");
        walkOk(ROOT, 2, "plain");
        assertThat(errno(c.readlink(2))).isEqualTo(EINVAL);
    }

    @Test
    void linkMakesASecondNameForAFileInside() throws Exception {
        Files.writeString(folder.resolve("f"), "x");
        Files.createDirectory(folder.resolve("d"));
        walkOk(ROOT, 1, "f");
        walkOk(ROOT, 2, "d");

        assertThat(c.link(2, 1, "g")).isEqualTo(new P9Reply.Link());
        assertThat(Files.isSameFile(folder.resolve("f"), folder.resolve("d/g"))).isTrue();
        assertThat(attr(c.getattr(1)).nlink()).isEqualTo(2);
        assertThat(errno(c.link(2, 1, "g"))).isEqualTo(EEXIST);
        assertThat(errno(c.link(ROOT, 2, "dirlink"))).isEqualTo(EPERM);
    }

    @Test
    void setattrChangesModeSizeAndTimesButNotOwners() throws Exception {
        Path f = folder.resolve("f");
        Files.writeString(f, "0123456789");
        Object owner = Files.getOwner(f);
        walkOk(ROOT, 1, "f");

        assertThat(c.setattr(new P9Request.Setattr(1, 1, 0604, 0, 0, 0, 0, 0, 0, 0))).isEqualTo(new P9Reply.Setattr());
        assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(f))).isEqualTo("rw----r--");
        c.setattr(new P9Request.Setattr(1, 8, 0, 0, 0, 4, 0, 0, 0, 0));
        assertThat(f).hasContent("0123");
        c.setattr(new P9Request.Setattr(1, 32 | 256, 0, 0, 0, 0, 0, 0, 1_000_000_000L, 5));
        assertThat(Files.getLastModifiedTime(f)).isEqualTo(FileTime.from(Instant.ofEpochSecond(1_000_000_000L, 5)));
        c.setattr(new P9Request.Setattr(1, 16 | 128, 0, 0, 0, 0, 1_200_000_000L, 0, 0, 0));
        assertThat(Files.getAttribute(f, "lastAccessTime"))
                .isEqualTo(FileTime.from(Instant.ofEpochSecond(1_200_000_000L)));
        assertThat(Files.getLastModifiedTime(f)).as("mtime untouched by an atime change")
                .isEqualTo(FileTime.from(Instant.ofEpochSecond(1_000_000_000L, 5)));
        c.setattr(new P9Request.Setattr(1, 32, 0, 0, 0, 0, 0, 0, 0, 0));
        assertThat(Files.getLastModifiedTime(f).toInstant()).isAfter(Instant.now().minusSeconds(60));
        assertThat(c.setattr(new P9Request.Setattr(1, 2 | 4, 0, 4321, 4321, 0, 0, 0, 0, 0)))
                .as("chown is accepted and changes nothing").isEqualTo(new P9Reply.Setattr());
        assertThat(Files.getOwner(f)).isEqualTo(owner);

        assertThat(c.lopen(1, O_RDWR)).isInstanceOf(P9Reply.Lopen.class);
        c.setattr(new P9Request.Setattr(1, 8, 0, 0, 0, 1, 0, 0, 0, 0));
        assertThat(f).hasContent("0");
        assertThat(errno(c.setattr(new P9Request.Setattr(ROOT, 8, 0, 0, 0, 0, 0, 0, 0, 0)))).isEqualTo(EISDIR);
    }

    @Test
    void filesOfTheDaemonsUserAreRootsAndOthersAreNobodys() throws Exception {
        Path mine = Files.writeString(folder.resolve("mine"), "");
        walkOk(ROOT, 1, "mine");
        P9Reply.Getattr g = attr(c.getattr(1));
        assertThat(g.uid()).isZero();
        assertThat(g.gid()).isZero();
        if (!"root".equals(Files.getOwner(mine).getName())) {
            return; // giving files away needs root
        }
        Path theirs = Files.writeString(folder.resolve("theirs"), "");
        Files.setAttribute(theirs, "unix:uid", 4321);
        Files.setAttribute(theirs, "unix:gid", 4321);
        Files.setAttribute(mine, "unix:gid", 4321);
        walkOk(ROOT, 2, "theirs");
        assertThat(attr(c.getattr(2))).satisfies(t -> {
            assertThat(t.uid()).isEqualTo(P9Operations.NOBODY);
            assertThat(t.gid()).isEqualTo(P9Operations.NOBODY);
        });
        assertThat(attr(c.getattr(1)).gid()).as("the user's own file, whatever its group").isZero();
    }

    @Test
    void statfsDescribesTheFolderFileSystem() throws Exception {
        P9Reply r = c.call(new P9Request.Statfs(ROOT));
        assertThat(r).isInstanceOf(P9Reply.Statfs.class);
        P9Reply.Statfs s = (P9Reply.Statfs) r;
        FileStore store = Files.getFileStore(folder);
        assertThat(s.type()).isEqualTo(0x01021997);
        assertThat(s.namelen()).isEqualTo(255);
        assertThat((long) s.bsize()).isEqualTo(store.getBlockSize());
        assertThat(s.blocks()).isEqualTo(store.getTotalSpace() / store.getBlockSize());
    }

    @Test
    void locksOfTwoFidsConflictLikeTwoProcesses() throws Exception {
        Files.writeString(folder.resolve("f"), "locked");
        walkOk(ROOT, 1, "f");
        walkOk(ROOT, 2, "f");
        c.lopen(1, O_RDWR);
        c.lopen(2, O_RDWR);

        assertThat(c.call(new P9Request.Lock(1, (byte) 1, 0, 0, 10, 100, "a"))).isEqualTo(new P9Reply.Lock((byte) 0));
        assertThat(c.call(new P9Request.Lock(2, (byte) 1, 0, 5, 10, 200, "b"))).isEqualTo(new P9Reply.Lock((byte) 1));
        P9Reply held = c.call(new P9Request.GetLock(2, (byte) 1, 0, 0, 200, "b"));
        assertThat(held).isInstanceOfSatisfying(P9Reply.GetLock.class, g -> {
            assertThat(g.type()).isEqualTo((byte) 1);
            assertThat(g.start()).isZero();
            assertThat(g.length()).isEqualTo(10);
        });
        c.call(new P9Request.Lock(1, (byte) 2, 0, 0, 10, 100, "a"));
        assertThat(c.call(new P9Request.GetLock(2, (byte) 1, 0, 0, 200, "b")))
                .isEqualTo(new P9Reply.GetLock((byte) 2, 0, 0, 200, "b"));
        assertThat(c.call(new P9Request.Lock(2, (byte) 1, 0, 5, 10, 200, "b"))).isEqualTo(new P9Reply.Lock((byte) 0));
        assertThat(errno(c.call(new P9Request.Lock(ROOT, (byte) 1, 0, 0, 0, 1, "x")))).isEqualTo(EBADF);
    }

    @Test
    void extendedAttributesAreAnEmptyList() throws Exception {
        assertThat(c.call(new P9Request.XattrWalk(ROOT, 7, ""))).isEqualTo(new P9Reply.XattrWalk(0));
        assertThat(data(c.read(7, 0, 100))).isEmpty();
        assertThat(c.clunk(7)).isEqualTo(new P9Reply.Clunk());
        assertThat(errno(c.call(new P9Request.XattrWalk(ROOT, 8, "user.x")))).isEqualTo(ENODATA);
        assertThat(errno(c.getattr(8))).isEqualTo(EBADF);
        assertThat(errno(c.call(new P9Request.XattrCreate(ROOT, "user.x", 1, 0)))).isEqualTo(EOPNOTSUPP);
    }

    @Test
    void flushOfAFinishedOrUnknownTagIsAnswered() throws Exception {
        int tag = c.send(new P9Request.Getattr(ROOT, P9Operations.GETATTR_BASIC_AND_BTIME));
        assertThat(c.await(tag)).isInstanceOf(P9Reply.Getattr.class);
        assertThat(c.call(new P9Request.Flush(tag))).isEqualTo(new P9Reply.Flush());
        assertThat(c.call(new P9Request.Flush(4242))).isEqualTo(new P9Reply.Flush());
    }

    @Test
    void flushesNeverWaitForEachOtherOrForLaterRequests() throws Exception {
        for (int i = 0; i < 100; i++) {
            int a = c.freshTag();
            int b = c.freshTag();
            c.send(a, new P9Request.Flush(b));
            c.send(b, new P9Request.Flush(a));
            assertThat(c.awaitResponse(a, Duration.ofSeconds(2)).reply()).isEqualTo(new P9Reply.Flush());
            assertThat(c.awaitResponse(b, Duration.ofSeconds(2)).reply()).isEqualTo(new P9Reply.Flush());
        }
        for (int i = 0; i < 20; i++) {
            int[] later = new int[10];
            int[] flushes = new int[later.length];
            for (int j = 0; j < later.length; j++) {
                later[j] = c.freshTag();
                flushes[j] = c.send(new P9Request.Flush(later[j]));
            }
            for (int tag : later) {
                c.send(tag, new P9Request.Getattr(ROOT, P9Operations.GETATTR_BASIC_AND_BTIME));
            }
            for (int j = 0; j < later.length; j++) {
                assertThat(c.awaitResponse(flushes[j], Duration.ofSeconds(2)).reply()).isEqualTo(new P9Reply.Flush());
                assertThat(c.awaitResponse(later[j], Duration.ofSeconds(2)).reply())
                        .isInstanceOf(P9Reply.Getattr.class);
            }
        }
    }

    @Test
    void aFlushIsAnsweredAfterTheRequestItNames() throws Exception {
        Files.write(folder.resolve("big"), new byte[1 << 20]);
        walkOk(ROOT, 1, "big");
        c.lopen(1, O_RDONLY);
        for (int i = 0; i < 300; i++) {
            int read = c.send(new P9Request.Read(1, 0, 1 << 20));
            int flush = c.send(new P9Request.Flush(read));
            assertThat(c.await(flush)).isEqualTo(new P9Reply.Flush());
            assertThat(c.await(read)).isInstanceOf(P9Reply.Read.class);
            List<Integer> order = c.arrivals();
            assertThat(order.lastIndexOf(read)).as("round %d", i).isLessThan(order.lastIndexOf(flush));
        }
    }

    @Test
    void pauseHoldsTheFidTableStillWhileRequestsKeepComing() throws Exception {
        AtomicBoolean stop = new AtomicBoolean();
        AtomicReference<Throwable> failed = new AtomicReference<>();
        Thread guest = new Thread(() -> {
            try {
                for (int n = 0; !stop.get(); n++) {
                    int fid = 100 + n % 50;
                    int walk = c.send(new P9Request.Walk(ROOT, fid, List.of()));
                    int clunk = c.send(new P9Request.Clunk(fid + 50));
                    c.await(walk);
                    c.await(clunk);
                    c.call(new P9Request.Walk(fid, fid + 50, List.of()));
                    c.call(new P9Request.Clunk(fid));
                }
            } catch (Throwable t) {
                failed.set(t);
            }
        });
        guest.start();
        try {
            for (int i = 0; i < 150 && failed.get() == null; i++) {
                assertThat(c.server().pause(Duration.ofSeconds(2))).isTrue();
                try {
                    WorkspaceSnapshot first = c.server().snapshot();
                    Thread.sleep(2);
                    assertThat(c.server().snapshot()).as("round %d", i).isEqualTo(first);
                } finally {
                    c.server().resume();
                }
                Thread.sleep(1);
            }
        } finally {
            stop.set(true);
            guest.join();
        }
        assertThat(failed.get()).isNull();
    }

    @Test
    void removeDeletesTheFileAndAlwaysClunks() throws Exception {
        Files.writeString(folder.resolve("f"), "x");
        Files.createDirectories(folder.resolve("full/sub"));
        walkOk(ROOT, 1, "f");
        walkOk(ROOT, 2, "full");

        assertThat(c.remove(1)).isEqualTo(new P9Reply.Remove());
        assertThat(folder.resolve("f")).doesNotExist();
        assertThat(errno(c.getattr(1))).isEqualTo(EBADF);
        assertThat(errno(c.remove(2))).isEqualTo(ENOTEMPTY);
        assertThat(folder.resolve("full")).isDirectory();
        assertThat(errno(c.getattr(2))).as("clunked although the removal failed").isEqualTo(EBADF);
        walkOk(ROOT, 3);
        assertThat(errno(c.remove(3))).isEqualTo(EBUSY);
        assertThat(folder).isDirectory();
    }

    @Test
    void aFileUnlinkedWhileOpenStillReads() throws Exception {
        Files.writeString(folder.resolve("f"), "still here");
        walkOk(ROOT, 1, "f");
        c.lopen(1, O_RDONLY);
        assertThat(c.unlinkAt(ROOT, "f", 0)).isEqualTo(new P9Reply.UnlinkAt());
        assertThat(folder.resolve("f")).doesNotExist();
        assertThat(text(c.read(1, 0, 100))).isEqualTo("still here");
        assertThat(attr(c.getattr(1)).nlink()).isZero();
    }

    @Test
    void clunkFreesTheFid() throws Exception {
        walkOk(ROOT, 1);
        assertThat(errno(c.walk(ROOT, 1))).as("newfid in use").isEqualTo(EBADF);
        assertThat(c.clunk(1)).isEqualTo(new P9Reply.Clunk());
        walkOk(ROOT, 1);
        assertThat(errno(c.clunk(99))).isEqualTo(EBADF);
    }

    @Test
    void restoreBringsBackTheSnapshotsFidsAndOpenFiles() throws Exception {
        Files.writeString(folder.resolve("keep"), "kept");
        Files.writeString(folder.resolve("gone"), "gone");
        Files.createDirectory(folder.resolve("dir"));
        Files.writeString(folder.resolve("dir/x"), "");
        walkOk(ROOT, 1, "keep");
        c.lopen(1, O_RDONLY);
        walkOk(ROOT, 2, "gone");
        c.lopen(2, O_RDWR);
        walkOk(ROOT, 3, "dir");
        walkOk(ROOT, 4, "dir");
        c.lopen(4, O_RDONLY | O_DIRECTORY);

        assertThat(c.server().pause(Duration.ofSeconds(2))).isTrue();
        WorkspaceSnapshot snap = c.server().snapshot();
        c.server().resume();
        assertThat(snap.fids()).extracting(WorkspaceSnapshot.FidState::fid).containsExactly(0, 1, 2, 3, 4);
        assertThat(snap.fids()).extracting(WorkspaceSnapshot.FidState::openFlags)
                .containsExactly(-1, O_RDONLY, O_RDWR, -1, O_RDONLY | O_DIRECTORY);

        for (int fid = 1; fid <= 4; fid++) {
            assertThat(c.clunk(fid)).isEqualTo(new P9Reply.Clunk());
        }
        walkOk(ROOT, 9);
        Files.delete(folder.resolve("gone"));

        assertThat(c.server().pause(Duration.ofSeconds(2))).isTrue();
        c.server().restore(snap);
        c.server().resume();

        assertThat(text(c.read(1, 0, 100))).isEqualTo("kept");
        assertThat(errno(c.read(2, 0, 100))).isEqualTo(ESTALE);
        assertThat(errno(c.getattr(2))).isEqualTo(ESTALE);
        assertThat(qid(c.getattr(3)).type()).isEqualTo(Qid.QTDIR);
        P9Reply dir = c.readdir(4, 0, 8192);
        assertThat(P9Codec.dirEntries(((P9Reply.Readdir) dir).data())).extracting(P9Codec.DirEntry::name)
                .containsExactlyInAnyOrder(".", "..", "x");
        assertThat(errno(c.getattr(9))).as("a fid made after the snapshot").isEqualTo(EBADF);
        assertThat(c.clunk(2)).isEqualTo(new P9Reply.Clunk());
    }

    /**
     * A rewind connects the new server before the guest runs and puts the folder and fid table back while the
     * guest takes its first steps: a request the guest sends meanwhile must wait, not be read by a server that
     * does not have the guest's session yet (it would skip it, waiting for a Tversion, and never answer).
     */
    @Test
    void aServerConnectedHeldReadsNothingUntilServedThenAnswersWithTheRestoredSession() throws Exception {
        Files.writeString(folder.resolve("keep"), "kept");
        walkOk(ROOT, 1, "keep");
        c.lopen(1, O_RDONLY);
        assertThat(c.server().pause(Duration.ofSeconds(2))).isTrue();
        WorkspaceSnapshot snap = c.server().snapshot();
        c.close();

        try (P9TestClient held = P9TestClient.connectHeld(folder, tmp)) {
            int tag = held.send(new P9Request.Read(1, 0, 100));
            Thread.sleep(300); // a server reading now would take the request in as a new session's and skip it
            held.server().restore(snap);
            held.server().serve();
            assertThat(text(held.await(tag))).isEqualTo("kept");
            assertThat(held.log()).noneMatch(line -> line.contains("skipped"));
        }

        // a rewind that failed closes the server while its restore may still be on its way: refused, since the
        // root descriptor it would open the fids from may be gone (its number reused)
        P9TestClient late = P9TestClient.connectHeld(folder, tmp);
        late.close();
        org.assertj.core.api.Assertions.assertThatThrownBy(() -> late.server().restore(snap))
                .isInstanceOf(IllegalStateException.class).hasMessageContaining("closed");
    }

    @Test
    void aSnapshotWithByteStringPathsSurvivesJsonAndAnotherServer() throws Exception {
        String odd = "\u00ff\u00fe-\u00c3(";  // not UTF-8
        assertThat(c.mkdir(ROOT, odd, 0755)).isInstanceOf(P9Reply.Mkdir.class);
        walkOk(ROOT, 1, odd);
        assertThat(c.lcreate(1, "\u00e9t\u00e9", O_RDWR, 0644)).isInstanceOf(P9Reply.Lcreate.class);
        c.write(1, 0, "bytes".getBytes(UTF_8));
        walkOk(ROOT, 2, odd);

        assertThat(c.server().pause(Duration.ofSeconds(2))).isTrue();
        WorkspaceSnapshot snap = c.server().snapshot();
        ObjectMapper json = new ObjectMapper();
        WorkspaceSnapshot back = json.readValue(json.writeValueAsBytes(snap), WorkspaceSnapshot.class);
        assertThat(back).isEqualTo(snap);
        assertThat(back.fids()).extracting(WorkspaceSnapshot.FidState::path)
                .containsExactly("", odd + "/\u00e9t\u00e9", odd);
        c.close();

        try (P9TestClient restored = P9TestClient.connect(folder, tmp)) {
            assertThat(restored.server().pause(Duration.ofSeconds(2))).isTrue();
            restored.server().restore(back);
            restored.server().resume();
            assertThat(text(restored.read(1, 0, 100))).isEqualTo("bytes");
            assertThat(qid(restored.getattr(2)).type()).isEqualTo(Qid.QTDIR);
            walkOk(restored, 2, 3, "\u00e9t\u00e9");
        }
    }
}
