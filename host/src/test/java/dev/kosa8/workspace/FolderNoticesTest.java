package dev.kosa8.workspace;

import static dev.kosa8.workspace.P9TestClient.ROOT;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.kosa8.protocol.Ws9p;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The server's side of the guest's cache: a Tcache from a guest allowed to cache starts the
 * folder's watch, which first says "everything" (the guest may have cached before the watch was
 * set) and then names each change the host makes, as Rnotices under NOTAG; a guest not allowed to
 * cache starts nothing. The client plays the guest's module.
 */
class FolderNoticesTest {
    @TempDir
    Path tmp;
    P9TestClient c;

    @AfterEach
    void close() {
        if (c != null) {
            c.close();
        }
    }

    private P9TestClient attached(boolean cache) throws Exception {
        assumeTrue(LinuxFs.AVAILABLE, "Linux only");
        Path folder = Files.createDirectories(tmp.resolve("share/sub"));
        Files.writeString(folder.resolve("f"), "one");
        c = P9TestClient.connect(tmp.resolve("share"), tmp, false, null, null, null, cache);
        c.version();
        return c;
    }

    /**
     * The entries of an Rnotice, each as "dir name" and, for a file there now, " size=N mode=OCTAL",
     * or " gone".
     */
    private static List<String> entries(ByteBuffer notice) {
        ByteBuffer b = notice.duplicate().order(ByteOrder.LITTLE_ENDIAN);
        assertThat(b.get(4) & 0xff).isEqualTo(Ws9p.RNOTICE);
        assertThat(b.getInt(0)).isEqualTo(b.remaining());
        List<String> out = new ArrayList<>();
        b.position(Ws9p.HEADER);
        while (b.hasRemaining()) {
            long dir = b.getLong();
            byte[] name = new byte[b.getShort()];
            b.get(name);
            String entry = dir + " " + new String(name, StandardCharsets.ISO_8859_1);
            int kind = b.get();
            if (kind == Ws9p.NOTICE_FILE) {
                ByteBuffer a = b.slice(b.position(), Ws9p.NOTICE_ATTRS).order(ByteOrder.LITTLE_ENDIAN);
                b.position(b.position() + Ws9p.NOTICE_ATTRS);
                entry += " size=" + a.getLong(29) + " mode=" + Integer.toOctalString(a.getInt(9) & 07777);
            } else {
                assertThat(kind).isEqualTo(Ws9p.NOTICE_GONE);
                entry += " gone";
            }
            out.add(entry);
        }
        return out;
    }

    @Test
    void aGuestThatCachesIsToldEverythingFirstThenEachNameTheHostChanges() throws Exception {
        attached(true);
        Qid root = ((P9Reply.Attach) c.attach(ROOT)).qid();
        c.askCache();
        assertThat(entries(c.awaitFrame(Ws9p.NOTAG, P9TestClient.TIMEOUT))).containsExactly("0  gone");
        Files.writeString(tmp.resolve("share/sub/f"), "two, longer");
        long sub = (long) Files.getAttribute(tmp.resolve("share/sub"), "unix:ino");
        assertThat(entries(c.awaitFrame(Ws9p.NOTAG, P9TestClient.TIMEOUT)))
                .as("the file as it is now").containsExactly(sub + " f size=11 mode=644");
        Files.delete(tmp.resolve("share/sub/f"));
        assertThat(entries(c.awaitFrame(Ws9p.NOTAG, P9TestClient.TIMEOUT))).as("and its directory in its parent")
                .containsExactly(sub + " f gone", root.path() + " sub size=" + Files.size(tmp.resolve("share/sub"))
                        + " mode=755");
        Files.createDirectory(tmp.resolve("share/made"));
        Files.writeString(tmp.resolve("share/made/g"), "new");
        List<String> seen = new ArrayList<>();
        long made = (long) Files.getAttribute(tmp.resolve("share/made"), "unix:ino");
        long end = System.nanoTime() + P9TestClient.TIMEOUT.toNanos();
        while (seen.stream().noneMatch(e -> e.startsWith(made + " g size=")) && System.nanoTime() < end) {
            Files.writeString(tmp.resolve("share/made/g"), "again"); // in case the first came before its watch
            seen.addAll(entries(c.awaitFrame(Ws9p.NOTAG, P9TestClient.TIMEOUT)));
        }
        assertThat(seen).anyMatch(e -> e.startsWith(root.path() + " made size="))
                .anyMatch(e -> e.startsWith(made + " g size="));
    }

    @Test
    void theEchoOfTheGuestsOwnWriteIsNotSentButAHostChangeAfterItIs() throws Exception {
        attached(true);
        c.attach(ROOT);
        c.askCache();
        assertThat(entries(c.awaitFrame(Ws9p.NOTAG, P9TestClient.TIMEOUT))).containsExactly("0  gone");
        WorkspaceServerTest.walkOk(c, ROOT, 1, "sub", "f");
        assertThat(c.lopen(1, P9TestClient.O_RDWR)).isInstanceOf(P9Reply.Lopen.class);
        assertThat(c.write(1, 0, "guest".getBytes(StandardCharsets.UTF_8))).isInstanceOf(P9Reply.Write.class);
        assertThatThrownBy(() -> c.awaitFrame(Ws9p.NOTAG, Duration.ofMillis(500)))
                .as("the guest's own write, told back to it").hasMessageContaining("no reply to tag " + Ws9p.NOTAG);
        Thread.sleep(20); // a later tick of the host's clock
        Files.writeString(tmp.resolve("share/sub/f"), "host!");
        long sub = (long) Files.getAttribute(tmp.resolve("share/sub"), "unix:ino");
        assertThat(entries(c.awaitFrame(Ws9p.NOTAG, P9TestClient.TIMEOUT))).containsExactly(sub + " f size=5 mode=644");
    }

    @Test
    void aSyncIsAnsweredAfterTheNoticesOfEveryChangeBeforeIt() throws Exception {
        attached(true);
        c.attach(ROOT);
        c.askCache();
        assertThat(entries(c.awaitFrame(Ws9p.NOTAG, P9TestClient.TIMEOUT))).containsExactly("0  gone");
        long sub = (long) Files.getAttribute(tmp.resolve("share/sub"), "unix:ino");
        for (int seq = 1; seq <= 20; seq++) {
            Files.writeString(tmp.resolve("share/sub/f"), "x".repeat(seq));
            c.askSync(seq); // at once: the sync must not be answered before the change's notice
            // the write is a truncation and a write, which a loaded host may report in two notices: every notice
            // comes before the sync's answer, and the last one before it has the file as written
            ByteBuffer frame = c.awaitFrame(Ws9p.NOTAG, P9TestClient.TIMEOUT);
            assertThat(frame.get(4) & 0xff).as("sync " + seq + ": a notice comes first").isEqualTo(Ws9p.RNOTICE);
            List<String> noticed = new java.util.ArrayList<>();
            while ((frame.get(4) & 0xff) == Ws9p.RNOTICE) {
                noticed.addAll(entries(frame));
                frame = c.awaitFrame(Ws9p.NOTAG, P9TestClient.TIMEOUT);
            }
            assertThat(noticed).as("sync " + seq + ": the change's notice before the answer")
                    .contains(sub + " f size=" + seq + " mode=644");
            ByteBuffer then = frame.order(ByteOrder.LITTLE_ENDIAN);
            assertThat(then.get(4) & 0xff).isEqualTo(Ws9p.RSYNC);
            assertThat(then.getInt(Ws9p.HEADER)).isEqualTo(seq);
        }
    }

    /**
     * The order the guest's module relies on: a notice received after the reply to one of the guest's
     * writes shows the file with that write in it. The guest appends to a file, many writes in flight at
     * once, while the host changes the file's mode over and over (each a notice of the file, with its
     * size): no notice may show a size smaller than the end of a write answered before it. Without
     * {@link Dispatcher#exclusively} a notice read just before a write and sent just after its reply
     * breaks it.
     */
    @Test
    void aNoticeAfterTheReplyToAGuestsWriteShowsThatWrite() throws Exception {
        attached(true);
        c.attach(ROOT);
        WorkspaceServerTest.walkOk(c, ROOT, 1, "sub", "f");
        assertThat(c.lopen(1, P9TestClient.O_RDWR | P9TestClient.O_TRUNC)).isInstanceOf(P9Reply.Lopen.class);
        Path f = tmp.resolve("share/sub/f");
        long fIno = (long) Files.getAttribute(f, "unix:ino");
        c.keepStream();
        c.askCache();
        java.util.concurrent.atomic.AtomicBoolean writing = new java.util.concurrent.atomic.AtomicBoolean(true);
        Thread host = new Thread(() -> {
            for (int i = 0; writing.get(); i++) {
                try {
                    Files.setPosixFilePermissions(f, java.nio.file.attribute.PosixFilePermissions.fromString(
                            i % 2 == 0 ? "rw-------" : "rw-r--r--"));
                } catch (java.io.IOException e) {
                    throw new java.io.UncheckedIOException(e);
                }
            }
        });
        int writes = 4000, chunk = 10;
        java.util.Map<Integer, Long> endOf = new java.util.HashMap<>();
        host.start();
        try {
            for (int i = 0; i < writes; i++) {
                int tag = c.send(new P9Request.Write(1, (long) i * chunk, ByteBuffer.wrap(new byte[chunk])));
                endOf.put(tag, (long) (i + 1) * chunk);
            }
            long answered = 0, notices = 0, checked = 0;
            long end = System.nanoTime() + P9TestClient.TIMEOUT.toNanos() * 4;
            while (answered < writes && System.nanoTime() < end) {
                ByteBuffer m = c.stream().poll();
                if (m == null) {
                    Thread.sleep(1);
                    continue;
                }
                int tag = m.getShort(5) & 0xffff;
                if (tag != P9Codec.NOTAG) {
                    assertThat(m.get(4) & 0xff).as("the reply to a write").isEqualTo(P9Codec.TWRITE + 1);
                    answered++;
                    checked = Math.max(checked, endOf.get(tag));
                } else if ((m.get(4) & 0xff) == Ws9p.RNOTICE) {
                    notices++;
                    for (long size : sizesOf(m, fIno)) {
                        assertThat(size).as("a notice after the reply to a write ending at " + checked)
                                .isGreaterThanOrEqualTo(checked);
                    }
                }
            }
            assertThat(answered).as("writes answered").isEqualTo(writes);
            assertThat(notices).as("notices of the host's changes while the guest wrote").isGreaterThan(10);
        } finally {
            writing.set(false);
            host.join();
        }
    }

    /** The sizes a notice gives the file of qid path {@code qidPath}. */
    private static List<Long> sizesOf(ByteBuffer notice, long qidPath) {
        ByteBuffer b = notice.duplicate().order(ByteOrder.LITTLE_ENDIAN).position(Ws9p.HEADER);
        List<Long> sizes = new ArrayList<>();
        while (b.hasRemaining()) {
            b.getLong();
            int nameLength = b.getShort();
            b.position(b.position() + nameLength);
            if (b.get() == Ws9p.NOTICE_FILE) {
                if (b.getLong(b.position()) == qidPath) {
                    sizes.add(b.getLong(b.position() + 29));
                }
                b.position(b.position() + Ws9p.NOTICE_ATTRS);
            }
        }
        return sizes;
    }

    /**
     * A held change rejected by the user changes what the guest sees without a change in the folder the
     * watch could see: the guest that caches is told, with the folder's version, though the guest changed
     * that path itself.
     */
    @Test
    void aRejectedHeldChangeIsToldWithWhatTheFolderHolds() throws Exception {
        assumeTrue(LinuxFs.AVAILABLE, "Linux only");
        Path folder = Files.createDirectory(tmp.resolve("held-share"));
        Files.writeString(folder.resolve(".envrc"), "export A=1\n");
        try (HeldChanges held = HeldChanges.open(tmp.resolve("held"), null, m -> { })) {
            c = P9TestClient.connect(folder, tmp, false, null, null, held, true);
            c.version();
            Qid root = ((P9Reply.Attach) c.attach(ROOT)).qid();
            WorkspaceServerTest.walkOk(c, ROOT, 2, ".envrc");
            assertThat(c.lopen(2, P9TestClient.O_RDWR | P9TestClient.O_TRUNC)).isInstanceOf(P9Reply.Lopen.class);
            assertThat(c.write(2, 0, "export A=22\n".getBytes(StandardCharsets.UTF_8)))
                    .isInstanceOf(P9Reply.Write.class);
            c.clunk(2);
            assertThat(held.units()).extracting(HeldChanges.Unit::path).containsExactly(".envrc");
            c.askCache();
            assertThat(entries(c.awaitFrame(Ws9p.NOTAG, P9TestClient.TIMEOUT))).containsExactly("0  gone");
            assertThat(held.reject(List.of(".envrc"), false).done()).containsExactly(".envrc");
            assertThat(entries(c.awaitFrame(Ws9p.NOTAG, P9TestClient.TIMEOUT)))
                    .containsExactly(root.path() + " .envrc size=11 mode=644");
        }
    }

    /**
     * A guest that asks for syncs faster than the host answers them is not answered past
     * {@link FolderNotices#MAX_SYNCS}: the daemon's memory does not grow with what the guest asks.
     */
    @Test
    void atMostMaxSyncsWaitForAnAnswer() throws Exception {
        assumeTrue(LinuxFs.AVAILABLE, "Linux only");
        Path folder = Files.createDirectories(tmp.resolve("syncs"));
        int root = LinuxFs.openRoot(folder.toString());
        java.util.concurrent.CountDownLatch stuck = new java.util.concurrent.CountDownLatch(1);
        java.util.concurrent.CountDownLatch blocked = new java.util.concurrent.CountDownLatch(1);
        List<Integer> answered = new java.util.concurrent.CopyOnWriteArrayList<>();
        FolderNotices.Line line = batch -> {
            blocked.countDown();
            try {
                stuck.await(); // the first notice cannot go out: the guest reads nothing meanwhile
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            batch.accept(b -> {
                ByteBuffer m = b.flip().order(ByteOrder.LITTLE_ENDIAN);
                if ((m.get(4) & 0xff) == Ws9p.RSYNC) {
                    answered.add(m.getInt(Ws9p.HEADER));
                }
            });
        };
        try (FolderNotices n = new FolderNotices(root, st -> st.ino(), path -> null, now -> false, () -> { },
                line, m -> { })) {
            n.start();
            assertThat(blocked.await(5, java.util.concurrent.TimeUnit.SECONDS)).isTrue();
            for (int seq = 1; seq <= 3 * FolderNotices.MAX_SYNCS; seq++) {
                n.sync(seq);
            }
            stuck.countDown();
            long end = System.nanoTime() + P9TestClient.TIMEOUT.toNanos();
            while (answered.size() < FolderNotices.MAX_SYNCS && System.nanoTime() < end) {
                Thread.sleep(5);
            }
            Thread.sleep(200); // any answer past the bound would come now
            assertThat(answered).as("the first MAX_SYNCS answered, in order; the rest dropped")
                    .isEqualTo(java.util.stream.IntStream.rangeClosed(1, FolderNotices.MAX_SYNCS).boxed().toList());
        } finally {
            LinuxFs.close(root);
        }
    }

    @Test
    void aSyncOfAServerThatDoesNotWatchIsAnsweredAtOnce() throws Exception {
        attached(false);
        c.attach(ROOT);
        c.askSync(5);
        ByteBuffer answer = c.awaitFrame(Ws9p.NOTAG, P9TestClient.TIMEOUT).order(ByteOrder.LITTLE_ENDIAN);
        assertThat(answer.get(4) & 0xff).isEqualTo(Ws9p.RSYNC);
        assertThat(answer.getInt(Ws9p.HEADER)).isEqualTo(5);
    }

    @Test
    void aGuestNotAllowedToCacheStartsNoWatch() throws Exception {
        attached(false);
        c.attach(ROOT);
        c.askCache();
        Files.writeString(tmp.resolve("share/sub/f"), "two");
        assertThatThrownBy(() -> c.awaitFrame(Ws9p.NOTAG, Duration.ofMillis(300)))
                .hasMessageContaining("no reply to tag " + Ws9p.NOTAG);
        assertThat(c.log()).contains("ignoring the guest's Tcache: this sandbox's folder is not to be cached");
    }

    @Test
    void aFolderWithMoreDirectoriesThanTheWatchTakesIsDroppedWholeEverySecond() throws Exception {
        assumeTrue(LinuxFs.AVAILABLE, "Linux only");
        Path folder = Files.createDirectories(tmp.resolve("many"));
        for (int i = 0; i < 5; i++) {
            Files.createDirectories(folder.resolve("d" + i));
        }
        int root = LinuxFs.openRoot(folder.toString());
        java.util.concurrent.BlockingQueue<ByteBuffer> sent = new java.util.concurrent.LinkedBlockingQueue<>();
        List<String> log = new java.util.concurrent.CopyOnWriteArrayList<>();
        try (FolderNotices n = new FolderNotices(root, st -> st.ino(), path -> null, now -> false, () -> { },
                batch -> batch.accept(b -> sent.add(b.flip())), log::add, 3)) {
            n.start();
            long start = System.nanoTime();
            for (int i = 0; i < 3; i++) {
                ByteBuffer b = sent.poll(5, java.util.concurrent.TimeUnit.SECONDS);
                assertThat(b).as("notice " + i).isNotNull();
                assertThat(entries(b)).containsExactly("0  gone");
            }
            assertThat(System.nanoTime() - start).as("the first at once, then one a second")
                    .isGreaterThanOrEqualTo(2 * (FolderNotices.FALLBACK_MILLIS - 50) * 1_000_000L);
            assertThat(n.state()).contains("dropped every 1000 ms").contains("more than 3 directories");
            assertThat(log).anyMatch(l -> l.contains("more than 3 directories"));
        } finally {
            LinuxFs.close(root);
        }
    }

    @Test
    void noticesAreSplitAtTheirLimitAndEverythingStandsAlone() {
        List<FolderWatch.Name> names = new ArrayList<>();
        for (int i = 0; i < 100; i++) {
            names.add(new FolderWatch.Name(7, "d", "name-" + i));
        }
        P9Reply.Getattr some = new P9Reply.Getattr(0, new Qid(Qid.QTFILE, 0, 9), 0100640, 0, 0, 1, 0, 33, 4096, 8,
                1, 2, 3, 4, 5, 6, 0, 0, 0, 0);
        java.util.function.Function<FolderWatch.Name, P9Reply.Getattr> attrs = n -> n.name().endsWith("0") ? null : some;
        List<ByteBuffer> split = NoticeCodec.encode(names, attrs, 256);
        assertThat(split).hasSizeGreaterThan(1).allSatisfy(b -> assertThat(b.position()).isLessThanOrEqualTo(256));
        List<String> all = new ArrayList<>();
        for (ByteBuffer b : split) {
            all.addAll(entries(b.flip()));
        }
        assertThat(all).hasSize(100).startsWith("7 name-0 gone", "7 name-1 size=33 mode=640")
                .endsWith("7 name-99 size=33 mode=640");

        names.add(FolderWatch.EVERYTHING);
        List<ByteBuffer> one = NoticeCodec.encode(names, attrs, 256);
        assertThat(one).hasSize(1);
        assertThat(entries(one.getFirst().flip())).containsExactly("0  gone");
    }
}
