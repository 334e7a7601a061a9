package dev.kosa8.workspace;

import static dev.kosa8.workspace.P9TestClient.O_RDONLY;
import static dev.kosa8.workspace.P9TestClient.O_RDWR;
import static dev.kosa8.workspace.P9TestClient.ROOT;
import static org.assertj.core.api.Assertions.assertThat;

import dev.kosa8.protocol.Ws9p;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Queue;
import java.util.Random;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Stream;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.From;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.constraints.Size;
import net.jqwik.api.lifecycle.AfterContainer;
import net.jqwik.api.lifecycle.AfterTry;
import net.jqwik.api.lifecycle.BeforeContainer;
import net.jqwik.api.lifecycle.BeforeTry;

/**
 * A hostile guest sending random requests to a live server: fids from the few in use and some
 * that are not, names that climb ("..", "../outside"), hold slashes or NUL or are too long, device
 * modes, random flags and offsets, sent one at a time or all at once; and valid frames with bytes
 * changed. Every frame is answered by a well-formed reply under its tag (of its type, or
 * Rlerror), or, when its size field is broken, the connection is closed. Nothing hangs, nothing
 * escapes the server as an exception, nothing outside the folder changes, no device node or socket
 * appears inside, and afterwards a fresh server on the same folder works. The server has a read
 * window the client reads as the guest's relay does ({@link ReadWindow}), so large reads' replies
 * take that path too; a frame mutated into one of the window's own messages is answered by
 * nothing, and the server must serve on. It also has a write window ({@link WriteWindow}) holding
 * random bytes, and Twritews with random fids, offsets, counts and slots are each answered under
 * their tag.
 */
class WorkspaceServerFuzzTest {
    private static final Duration REPLY = Duration.ofSeconds(3);
    private static final int S_IFMT = 0170000;
    private static final List<String> NAMES = List.of("..", ".", "", "/", "../outside", "a/../../outside",
            "out", "a", "b", "f", "fifo", "x\0y", "\0", "x".repeat(256), "x".repeat(P9Codec.MAX_STRING),
            "\u00ff\u00fe", "new0", "new1", "canary", "outside", "big");

    private static Path tmp;
    private static Path outside;
    private static Map<String, String> outsideBefore;
    private static final Queue<Throwable> uncaught = new ConcurrentLinkedQueue<>();
    private static Thread.UncaughtExceptionHandler previousHandler;
    private static final AtomicInteger tries = new AtomicInteger();

    private Path folder;

    @BeforeContainer
    static void makeOutside() throws IOException {
        tmp = Files.createTempDirectory("ws9p-fuzz");
        outside = Files.createDirectory(tmp.resolve("outside"));
        Files.writeString(outside.resolve("canary"), "outside canary");
        outsideBefore = state(outside);
        previousHandler = Thread.getDefaultUncaughtExceptionHandler();
        Thread.setDefaultUncaughtExceptionHandler((t, e) -> {
            if (t.getName().startsWith("ws9p")) {
                uncaught.add(e);
            }
        });
    }

    @AfterContainer
    static void removeAll() throws IOException {
        Thread.setDefaultUncaughtExceptionHandler(previousHandler);
        deleteTree(tmp);
    }

    @BeforeTry
    void seedFolder() throws IOException {
        folder = Files.createDirectory(tmp.resolve("share" + tries.incrementAndGet()));
        Files.createDirectories(folder.resolve("a/b"));
        Files.writeString(folder.resolve("f"), "content");
        byte[] big = new byte[100_000];
        new Random(tries.get()).nextBytes(big);
        Files.write(folder.resolve("big"), big);
        Files.writeString(folder.resolve("a/canary"), "inside");
        Files.createSymbolicLink(folder.resolve("out"), outside);
        Files.createSymbolicLink(folder.resolve("a/up"), Path.of("../../outside"));
    }

    @AfterTry
    void checkAndRemoveFolder() throws IOException {
        try {
            assertThat(state(outside)).isEqualTo(outsideBefore);
            try (Stream<Path> beside = Files.list(tmp)) {
                assertThat(beside.map(p -> p.getFileName().toString()))
                        .allMatch(n -> n.equals("outside") || n.startsWith("share") || n.startsWith("sock") || n.startsWith("window"));
            }
            try (Stream<Path> inside = Files.walk(folder)) {
                inside.forEach(p -> {
                    int type = mode(p) & S_IFMT;
                    assertThat(type).as("type of %s", p).isIn(0100000, 040000, 0120000, 010000);
                });
            }
            assertThat(uncaught).isEmpty();
        } finally {
            deleteTree(folder);
        }
    }

    @Property(tries = 300)
    void randomRequestsOneAtATimeAreEachAnswered(@ForAll @Size(max = 25) List<@From("requests") P9Request> requests)
            throws Exception {
        try (P9TestClient c = withState()) {
            int msize = WorkspaceServer.MSIZE;
            for (P9Request r : requests) {
                if (encodedLength(r) > msize) {
                    c.send(r);
                    assertThat(c.closedWithin(REPLY)).as("a frame over msize closes the connection").isTrue();
                    assertFreshServerWorks();
                    return;
                }
                int tag = r instanceof P9Request.Version ? P9Codec.NOTAG : c.freshTag();
                c.send(tag, r);
                P9Reply reply = check(r, c.awaitResponse(tag, REPLY).reply());
                if (reply instanceof P9Reply.Version v && v.version().equals(P9Operations.VERSION)) {
                    msize = v.msize();
                }
            }
            assertServerHealthy(c);
        }
        assertFreshServerWorks();
    }

    @Property(tries = 150)
    void randomRequestsSentAllAtOnceAreEachAnswered(@ForAll @Size(max = 40) List<@From("requests") P9Request> requests)
            throws Exception {
        try (P9TestClient c = withState()) {
            List<P9Request> sent = new ArrayList<>();
            List<Integer> tags = new ArrayList<>();
            for (P9Request r : requests) {
                if (!(r instanceof P9Request.Version)) { // its tag is NOTAG and it resets everything
                    tags.add(c.send(r));
                    sent.add(r);
                }
            }
            for (int i = 0; i < sent.size(); i++) {
                check(sent.get(i), c.awaitResponse(tags.get(i), REPLY).reply());
            }
            assertServerHealthy(c);
        }
        assertFreshServerWorks();
    }

    @Property(tries = 300)
    void mutatedFramesAreAnsweredUnderTheirTagOrCloseTheConnection(@ForAll("requests") P9Request request,
            @ForAll("mutations") List<int[]> mutations, @ForAll boolean fixSizeField) throws Exception {
        byte[] frame = P9Samples.mutate(P9Samples.bytes(P9TestClient.encode(7, request)), mutations, fixSizeField,
                1 << 21);
        try (P9TestClient c = withState()) {
            if (frame.length < 4) {
                c.sendRaw(frame);
                c.sendRaw(new byte[] {(byte) 0xff, (byte) 0xff, (byte) 0xff, (byte) 0xff});
                assertThat(c.closedWithin(REPLY)).isTrue();
                return;
            }
            long size = Integer.toUnsignedLong(ByteBuffer.wrap(frame).order(ByteOrder.LITTLE_ENDIAN).getInt(0));
            if (size < P9Codec.HEADER || size > WorkspaceServer.MSIZE) {
                c.sendRaw(frame);
                assertThat(c.closedWithin(REPLY)).as("size field %d", size).isTrue();
                assertThat(c.log()).anyMatch(l -> l.contains("broken frame"));
            } else {
                byte[] exact = Arrays.copyOf(frame, (int) size); // cut or padded to what the size field says
                int tag = ByteBuffer.wrap(exact).order(ByteOrder.LITTLE_ENDIAN).getShort(5) & 0xffff;
                int type = exact[4] & 0xff;
                c.sendRaw(exact);
                if (type == Ws9p.TWINDOW || type == Ws9p.TRETURN || type == Ws9p.TCLUNKQ || type == Ws9p.TWALKQ
                        || type == Ws9p.TLOPENQ || type == Ws9p.TCACHE || type == Ws9p.TSYNC
                        || (type == Ws9p.TQUIET && size != Ws9p.TQUIET_SIZE)) {
                    // the window's own messages, quiet clunks and walks, and the cache's ask have no answer
                    // under their tag (a Tsync's is under NOTAG)
                    assertServerHealthy(c);
                    return;
                }
                if (type == Ws9p.TQUIET) {
                    ByteBuffer rquiet = c.awaitFrame(P9Codec.NOTAG, REPLY);
                    assertThat(rquiet.get(4) & 0xff).isEqualTo(Ws9p.RQUIET); // whatever its tag field said
                    assertServerHealthy(c);
                    return;
                }
                P9Response answer = c.awaitResponse(tag, REPLY);
                checkErrno(answer.reply());
                assertServerHealthy(c);
            }
        }
        assertFreshServerWorks();
    }

    @Property(tries = 200)
    void twritewsWithAnyFieldsAreEachAnsweredUnderTheirTag(
            @ForAll @Size(min = 1, max = 12) List<@From("twritews") long[]> twritews, @ForAll long seed)
            throws Exception {
        try (P9TestClient c = withState()) {
            byte[] junk = new byte[Ws9p.SLOT_SIZE];
            new Random(seed).nextBytes(junk);
            for (int slot = 0; slot < 16; slot += 5) {
                c.writeThroughWindowOnly(junk, slot);
            }
            List<Integer> tags = new ArrayList<>();
            for (long[] w : twritews) {
                tags.add(c.sendTwritew((int) w[0], w[1], w[2], w[3]));
            }
            for (int i = 0; i < tags.size(); i++) {
                P9Reply reply = checkErrno(c.awaitResponse(tags.get(i), REPLY).reply());
                if (!(reply instanceof P9Reply.Lerror)) {
                    assertThat(reply).as("answer to %s", Arrays.toString(twritews.get(i)))
                            .isEqualTo(new P9Reply.Write((int) twritews.get(i)[2]));
                }
            }
            assertServerHealthy(c);
        }
        assertFreshServerWorks();
    }

    /**
     * Quiet clunks, walks and opens of fids in use and of any number, among frames of their types of any
     * size and content, and requests on the same fids: nothing is answered but the requests (and an
     * Rquiet per Tquiet), and the server serves on. Each request's answer is awaited before the next
     * message, so a fid the requests name is either still there or forgotten, never in between.
     */
    @Property(tries = 200)
    void quietClunksAndFramesOfTheirTypesOfAnyShapeLeaveTheServerServing(
            @ForAll @Size(min = 1, max = 16) List<@From("quietMessages") byte[]> messages,
            @ForAll @Size(max = 8) List<@From("requests") P9Request> between) throws Exception {
        try (P9TestClient c = withState()) {
            int next = 0;
            int msize = WorkspaceServer.MSIZE;
            for (byte[] m : messages) {
                c.sendRaw(m);
                if (m.length == Ws9p.TQUIET_SIZE && (m[4] & 0xff) == Ws9p.TQUIET) {
                    ByteBuffer answer = c.awaitFrame(P9Codec.NOTAG, REPLY);
                    while ((answer.get(4) & 0xff) == Ws9p.RSYNC) {
                        answer = c.awaitFrame(P9Codec.NOTAG, REPLY); // a Tsync's answer, also under NOTAG
                    }
                    assertThat(answer.get(4) & 0xff).as("the answer to a Tquiet").isEqualTo(Ws9p.RQUIET);
                }
                // A request over the msize a Tversion below negotiated closes the connection, as it must;
                // randomRequestsOneAtATimeAreEachAnswered tries that. Here it is not sent.
                P9Request r = next < between.size() ? between.get(next++) : null;
                if (r != null && encodedLength(r) <= msize) {
                    P9Reply reply = check(r, c.call(r));
                    if (reply instanceof P9Reply.Version v && v.version().equals(P9Operations.VERSION)) {
                        msize = v.msize();
                    }
                }
            }
            assertServerHealthy(c);
            assertThat(c.log()).noneMatch(l -> l.contains("broken frame"));
            assertThat(c.arrivals()).as("answers under the quiet messages' tags").doesNotContain(QUIET_TAG, ODD_TAG);
        }
        assertFreshServerWorks();
    }

    /** The tags of the quiet messages below: far above those the client hands out in a try. */
    private static final int QUIET_TAG = 60_000, ODD_TAG = 60_001;

    /**
     * A Tclunkq, a Twalkq (a quiet clone walk), a Tquiet or a Tcache (ignored: this server may not cache):
     * well formed mostly, of fids 0..8 mostly; sometimes any size and bytes.
     */
    @Provide
    Arbitrary<byte[]> quietMessages() {
        Arbitrary<byte[]> clunk = Arbitraries.oneOf(Arbitraries.integers().between(0, 8), Arbitraries.integers())
                .map(fid -> ByteBuffer.allocate(Ws9p.TCLUNKQ_SIZE).order(ByteOrder.LITTLE_ENDIAN)
                        .putInt(Ws9p.TCLUNKQ_SIZE).put((byte) Ws9p.TCLUNKQ).putShort((short) QUIET_TAG)
                        .putInt(fid).array());
        Arbitrary<byte[]> walk = net.jqwik.api.Combinators.combine(
                Arbitraries.oneOf(Arbitraries.integers().between(0, 8), Arbitraries.integers()),
                Arbitraries.oneOf(Arbitraries.integers().between(0, 8), Arbitraries.integers()))
                .as((fid, newFid) -> ByteBuffer.allocate(Ws9p.TWALKQ_SIZE).order(ByteOrder.LITTLE_ENDIAN)
                        .putInt(Ws9p.TWALKQ_SIZE).put((byte) Ws9p.TWALKQ).putShort((short) QUIET_TAG)
                        .putInt(fid).putInt(newFid).putShort((short) 0).array());
        Arbitrary<byte[]> open = net.jqwik.api.Combinators.combine(
                Arbitraries.oneOf(Arbitraries.integers().between(0, 8), Arbitraries.integers()),
                Arbitraries.oneOf(Arbitraries.of(0, 2, 01000, 0200000), Arbitraries.integers()))
                .as((fid, flags) -> ByteBuffer.allocate(Ws9p.TLOPENQ_SIZE).order(ByteOrder.LITTLE_ENDIAN)
                        .putInt(Ws9p.TLOPENQ_SIZE).put((byte) Ws9p.TLOPENQ).putShort((short) QUIET_TAG)
                        .putInt(fid).putInt(flags).array());
        Arbitrary<byte[]> cache = Arbitraries.just(ByteBuffer.allocate(Ws9p.TCACHE_SIZE)
                .order(ByteOrder.LITTLE_ENDIAN).putInt(Ws9p.TCACHE_SIZE).put((byte) Ws9p.TCACHE)
                .putShort((short) P9Codec.NOTAG).array());
        Arbitrary<byte[]> quiet = Arbitraries.just(ByteBuffer.allocate(Ws9p.TQUIET_SIZE)
                .order(ByteOrder.LITTLE_ENDIAN).putInt(Ws9p.TQUIET_SIZE).put((byte) Ws9p.TQUIET)
                .putShort((short) P9Codec.NOTAG).array());
        Arbitrary<byte[]> odd = net.jqwik.api.Combinators.combine(
                Arbitraries.of(Ws9p.TCLUNKQ, Ws9p.TQUIET, Ws9p.TWALKQ, Ws9p.TLOPENQ, Ws9p.TCACHE, Ws9p.TSYNC),
                Arbitraries.bytes().array(byte[].class).ofMaxSize(40)).as((type, body) ->
                ByteBuffer.allocate(P9Codec.HEADER + body.length).order(ByteOrder.LITTLE_ENDIAN)
                        .putInt(P9Codec.HEADER + body.length).put((byte) (int) type).putShort((short) ODD_TAG).put(body)
                        .array());
        return Arbitraries.frequencyOf(net.jqwik.api.Tuple.of(5, clunk), net.jqwik.api.Tuple.of(4, walk),
                net.jqwik.api.Tuple.of(3, open),
                net.jqwik.api.Tuple.of(1, quiet), net.jqwik.api.Tuple.of(1, cache), net.jqwik.api.Tuple.of(2, odd));
    }

    /** fid, offset, count, slot: mostly plausible, sometimes anything. */
    @Provide
    Arbitrary<long[]> twritews() {
        Arbitrary<Long> fid = Arbitraries.oneOf(Arbitraries.longs().between(0, 8),
                Arbitraries.longs().between(0, 0xffff_ffffL));
        Arbitrary<Long> offset = Arbitraries.oneOf(Arbitraries.longs().between(0, 3 << 20), Arbitraries.longs());
        Arbitrary<Long> count = Arbitraries.oneOf(Arbitraries.longs().between(0, 1 << 20),
                Arbitraries.longs().between(0, 0xffff_ffffL));
        Arbitrary<Long> slot = Arbitraries.oneOf(Arbitraries.longs().between(0, 17),
                Arbitraries.longs().between(0, 0xffff_ffffL));
        return net.jqwik.api.Combinators.combine(fid, offset, count, slot).as((f, o, n, s) -> new long[] {f, o, n, s});
    }

    /**
     * A client with some state: fids 1..6 at a directory, an open file, a symlink out, an open
     * directory, a file, and an open file large enough for the read window.
     */
    private P9TestClient withState() throws Exception {
        P9TestClient c = P9TestClient.attachedWithWindows(folder, tmp, P9TestClient.windowFile(tmp),
                P9TestClient.writesFile(tmp));
        c.walk(ROOT, 1, "a");
        c.walk(ROOT, 2, "f");
        assertThat(c.lopen(2, O_RDWR)).isInstanceOf(P9Reply.Lopen.class);
        c.walk(ROOT, 3, "out");
        c.walk(ROOT, 4, "a", "b");
        assertThat(c.lopen(4, O_RDONLY | P9TestClient.O_DIRECTORY)).isInstanceOf(P9Reply.Lopen.class);
        c.walk(1, 5, "canary");
        c.walk(ROOT, 6, "big");
        assertThat(c.lopen(6, O_RDONLY)).isInstanceOf(P9Reply.Lopen.class);
        return c;
    }

    /** The reply must be the request's own type or an Rlerror with a plausible errno. */
    private static P9Reply check(P9Request request, P9Reply reply) {
        if (!(reply instanceof P9Reply.Lerror)) {
            assertThat(reply.getClass().getSimpleName()).as("reply to %s", request)
                    .isEqualTo(request.getClass().getSimpleName());
        }
        return checkErrno(reply);
    }

    private static P9Reply checkErrno(P9Reply reply) {
        if (reply instanceof P9Reply.Lerror e) {
            assertThat(e.errno()).as("errno").isBetween(1, 133).isNotEqualTo(ErrnoException.EIO);
        }
        return reply;
    }

    private static void assertServerHealthy(P9TestClient c) throws Exception {
        assertThat(c.version()).isInstanceOf(P9Reply.Version.class);
        assertThat(c.attach(ROOT)).isInstanceOf(P9Reply.Attach.class);
        // the guest's requests may have renamed or removed anything but the root
        assertThat(c.walk(ROOT, 1)).isEqualTo(new P9Reply.Walk(List.of()));
        assertThat(c.lcreate(1, "health-" + System.nanoTime(), O_RDWR, 0644)).isInstanceOf(P9Reply.Lcreate.class);
        assertThat(c.write(1, 0, new byte[] {42})).isEqualTo(new P9Reply.Write(1));
        assertThat(P9TestClient.data(c.read(1, 0, 100))).containsExactly(42);
        assertThat(c.log()).noneMatch(l -> l.startsWith("internal error"));
    }

    private void assertFreshServerWorks() throws Exception {
        try (P9TestClient fresh = P9TestClient.attached(folder, tmp)) {
            assertThat(fresh.getattr(ROOT)).isInstanceOf(P9Reply.Getattr.class);
        }
    }

    private static int encodedLength(P9Request r) {
        return P9TestClient.encode(0, r).remaining();
    }

    // --- generators: biased towards fids in use and names that try to escape

    @Provide
    Arbitrary<P9Request> requests() {
        return Arbitraries.randomValue(WorkspaceServerFuzzTest::request);
    }

    static P9Request request(Random r) {
        int type = r.nextInt(28);
        if (type == 0 && r.nextInt(4) != 0) {
            type = 17; // Tversion resets every fid: keep it rarer than the rest
        }
        return switch (type) {
            case 0 -> new P9Request.Version(r.nextBoolean() ? 4096 + r.nextInt(8192) : r.nextInt(),
                    r.nextInt(4) == 0 ? P9Samples.name(r) : P9Operations.VERSION);
            case 1 -> new P9Request.Auth(fid(r), name(r), name(r), r.nextInt());
            case 2 -> new P9Request.Attach(fid(r), fid(r), name(r), name(r), r.nextInt());
            case 3 -> new P9Request.Flush(r.nextInt(65536));
            case 4 -> {
                List<String> names = new ArrayList<>();
                for (int i = r.nextInt(P9Codec.MAX_WALK + 2); i > 0; i--) {
                    names.add(name(r));
                }
                yield new P9Request.Walk(fid(r), fid(r), names);
            }
            case 5 -> new P9Request.Lopen(fid(r), flags(r));
            case 6 -> new P9Request.Lcreate(fid(r), name(r), flags(r), mode(r), r.nextInt());
            case 7 -> new P9Request.Read(fid(r), offset(r), r.nextBoolean() ? r.nextInt(9000) : Integer.MAX_VALUE);
            case 8 -> new P9Request.Write(fid(r), offset(r), P9Samples.data(r));
            case 9 -> new P9Request.Clunk(fid(r));
            case 10 -> new P9Request.Remove(fid(r));
            case 11 -> new P9Request.Statfs(fid(r));
            case 12 -> new P9Request.Symlink(fid(r), name(r), name(r), r.nextInt());
            case 13 -> new P9Request.Mknod(fid(r), name(r), mode(r), r.nextInt(300), r.nextInt(300), r.nextInt());
            case 14 -> new P9Request.Rename(fid(r), fid(r), name(r));
            case 15 -> new P9Request.Readlink(fid(r));
            case 16 -> new P9Request.Getattr(fid(r), r.nextLong());
            case 17 -> new P9Request.Setattr(fid(r), r.nextInt(512), mode(r), r.nextInt(), r.nextInt(),
                    r.nextBoolean() ? r.nextInt(100_000) : r.nextLong(), r.nextLong(), r.nextInt(1_000_000_000),
                    r.nextLong() >>> 30, r.nextBoolean() ? r.nextInt(1_000_000_000) : r.nextLong());
            case 18 -> new P9Request.XattrWalk(fid(r), fid(r), r.nextBoolean() ? "" : name(r));
            case 19 -> new P9Request.XattrCreate(fid(r), name(r), r.nextLong(), r.nextInt());
            case 20 -> new P9Request.Readdir(fid(r), r.nextBoolean() ? 0 : offset(r), r.nextInt(9000));
            case 21 -> new P9Request.Fsync(fid(r), r.nextInt(2));
            case 22 -> new P9Request.Lock(fid(r), (byte) r.nextInt(4), r.nextInt(), offset(r), offset(r),
                    r.nextInt(), name(r));
            case 23 -> new P9Request.GetLock(fid(r), (byte) r.nextInt(4), offset(r), offset(r), r.nextInt(), name(r));
            case 24 -> new P9Request.Link(fid(r), fid(r), name(r));
            case 25 -> new P9Request.Mkdir(fid(r), name(r), mode(r), r.nextInt());
            case 26 -> new P9Request.RenameAt(fid(r), name(r), fid(r), name(r));
            default -> new P9Request.UnlinkAt(fid(r), name(r), r.nextBoolean() ? 0 : r.nextInt(0x400));
        };
    }

    private static int fid(Random r) {
        int roll = r.nextInt(10);
        return roll < 8 ? r.nextInt(7) : roll == 8 ? P9Codec.NOFID : r.nextInt();
    }

    private static String name(Random r) {
        return r.nextInt(5) == 0 ? P9Samples.name(r) : NAMES.get(r.nextInt(NAMES.size()));
    }

    private static int mode(Random r) {
        int[] types = {0, 0100000, 040000, 010000, 060000, 020000, 0140000, 0120000};
        return r.nextInt(8) == 0 ? r.nextInt() : types[r.nextInt(types.length)] | r.nextInt(010000);
    }

    private static int flags(Random r) {
        int[] common = {0, 1, 2, 0102, 01001, 0200000, 0302, 02002, 04000000};
        return r.nextInt(4) == 0 ? r.nextInt() : common[r.nextInt(common.length)];
    }

    private static long offset(Random r) {
        return switch (r.nextInt(4)) {
            case 0 -> 0;
            case 1 -> r.nextInt(100);
            case 2 -> -1 - r.nextInt(10);
            default -> r.nextLong();
        };
    }

    @Provide
    Arbitrary<List<int[]>> mutations() {
        return P9Samples.mutations();
    }

    // --- the host side

    private static int mode(Path p) {
        try {
            return (int) Files.getAttribute(p, "unix:mode", LinkOption.NOFOLLOW_LINKS);
        } catch (IOException e) {
            throw new AssertionError(e);
        }
    }

    private static Map<String, String> state(Path dir) throws IOException {
        Map<String, String> s = new TreeMap<>();
        try (Stream<Path> all = Files.walk(dir)) {
            for (Path p : all.toList()) {
                String content = Files.isRegularFile(p, LinkOption.NOFOLLOW_LINKS) ? Files.readString(p) : "";
                s.put(dir.relativize(p).toString(), mode(p) + " "
                        + Files.getLastModifiedTime(p, LinkOption.NOFOLLOW_LINKS) + " " + content);
            }
        }
        return s;
    }

    private static void deleteTree(Path root) throws IOException {
        if (!Files.exists(root, LinkOption.NOFOLLOW_LINKS)) {
            return;
        }
        try (Stream<Path> all = Files.walk(root)) {
            for (Path p : all.sorted(Comparator.reverseOrder()).toList()) {
                if (Files.isDirectory(p, LinkOption.NOFOLLOW_LINKS)) {
                    p.toFile().setWritable(true);
                    p.toFile().setExecutable(true);
                }
                Files.delete(p);
            }
        }
    }
}
