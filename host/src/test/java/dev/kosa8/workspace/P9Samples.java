package dev.kosa8.workspace;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;

/** Messages for the codec's tests: one of every type, and random ones for the fuzzer. */
final class P9Samples {
    static final int MAX_FRAME = 8192;

    private P9Samples() {
    }

    /** A name no text encoding would produce: raw high bytes, a slash and a space. */
    static final String ODD_NAME = "caf\u00c3\u00a9/ \u00ff\u0001";

    static final Qid FILE = new Qid(Qid.QTFILE, 7, 0x1122334455667788L);
    static final Qid DIR = new Qid(Qid.QTDIR, 0, 1);
    static final Qid LINK = new Qid(Qid.QTSYMLINK, -1, -1L);

    static List<P9Request> allRequests() {
        return List.of(
                new P9Request.Version(8192, "9P2000.L"),
                new P9Request.Auth(P9Codec.NOFID, "root", "", 0),
                new P9Request.Attach(0, P9Codec.NOFID, "", "/workspace", 1000),
                new P9Request.Flush(65535),
                new P9Request.Walk(0, 1, List.of("a", ODD_NAME, "..")),
                new P9Request.Lopen(1, 0x8002),
                new P9Request.Lcreate(1, "new", 0x241, 0644, 1000),
                new P9Request.Read(1, Long.MAX_VALUE, 4096),
                new P9Request.Write(1, 42, ByteBuffer.wrap(new byte[] {0, 1, 2, (byte) 0xff})),
                new P9Request.Clunk(-2),
                new P9Request.Remove(3),
                new P9Request.Statfs(0),
                new P9Request.Symlink(0, "l", "../target with spaces", 1000),
                new P9Request.Mknod(0, "fifo", 010644, 1, 3, 1000),
                new P9Request.Rename(4, 0, "moved"),
                new P9Request.Readlink(5),
                new P9Request.Getattr(1, 0x3fffL),
                new P9Request.Setattr(1, 0x1ff, 0755, 1000, 1001, 1L << 40, 1, 2, 3, 4),
                new P9Request.XattrWalk(1, 2, "user.x"),
                new P9Request.XattrCreate(2, "user.y", 17, 1),
                new P9Request.Readdir(1, 99, 8168),
                new P9Request.Fsync(1, 1),
                new P9Request.Lock(1, (byte) 1, 1, 0, 100, 4242, "guest"),
                new P9Request.GetLock(1, (byte) 0, 5, 0, 4243, "guest"),
                new P9Request.Link(0, 1, "hard"),
                new P9Request.Mkdir(0, "d", 0755, 1000),
                new P9Request.RenameAt(0, "from", 6, "to"),
                new P9Request.UnlinkAt(0, "gone", 0x200));
    }

    static List<P9Reply> allReplies() {
        return List.of(
                new P9Reply.Lerror(2),
                new P9Reply.Version(8192, "9P2000.L"),
                new P9Reply.Auth(FILE),
                new P9Reply.Attach(DIR),
                new P9Reply.Flush(),
                new P9Reply.Walk(List.of(DIR, FILE, LINK)),
                new P9Reply.Lopen(FILE, 0),
                new P9Reply.Lcreate(FILE, 8168),
                new P9Reply.Read(ByteBuffer.wrap(new byte[] {9, 8, 7})),
                new P9Reply.Write(3),
                new P9Reply.Clunk(),
                new P9Reply.Remove(),
                new P9Reply.Statfs(0x01021997, 4096, 1000, 900, 800, 70, 60, 0xabcdefL, 255),
                new P9Reply.Symlink(LINK),
                new P9Reply.Mknod(FILE),
                new P9Reply.Rename(),
                new P9Reply.Readlink("/abs/" + ODD_NAME),
                getattr(),
                new P9Reply.Setattr(),
                new P9Reply.XattrWalk(12),
                new P9Reply.XattrCreate(),
                new P9Reply.Readdir(ByteBuffer.wrap(new byte[] {1, 2, 3, 4, 5})),
                new P9Reply.Fsync(),
                new P9Reply.Lock((byte) 1),
                new P9Reply.GetLock((byte) 2, 1, 2, 3, "other"),
                new P9Reply.Link(),
                new P9Reply.Mkdir(DIR),
                new P9Reply.RenameAt(),
                new P9Reply.UnlinkAt());
    }

    /** Every field distinct, so a swap of any two shows. */
    static P9Reply.Getattr getattr() {
        return new P9Reply.Getattr(0x3fff, new Qid(Qid.QTFILE, 0x01020304, 0x1122334455667788L), 0100644, 1000,
                1001, 2, 3, 5, 4096, 8, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20);
    }

    /** Encodes into a fresh buffer and returns just the frame. */
    static ByteBuffer encode(int tag, P9Request request) {
        ByteBuffer out = ByteBuffer.allocate(1 << 17);
        P9Codec.encodeRequest(tag, request, out);
        return out.flip();
    }

    static ByteBuffer encode(int tag, P9Reply reply) {
        ByteBuffer out = ByteBuffer.allocate(1 << 17);
        P9Codec.encodeReply(tag, reply, out);
        return out.flip();
    }

    static byte[] bytes(ByteBuffer frame) {
        byte[] b = new byte[frame.remaining()];
        frame.duplicate().get(b);
        return b;
    }

    static String name(Random r) {
        char[] c = new char[r.nextInt(24)];
        for (int i = 0; i < c.length; i++) {
            c[i] = (char) (1 + r.nextInt(255));
        }
        return new String(c);
    }

    static ByteBuffer data(Random r) {
        byte[] b = new byte[r.nextInt(300)];
        r.nextBytes(b);
        return ByteBuffer.wrap(b);
    }

    static Qid qid(Random r) {
        return new Qid((byte) r.nextInt(), r.nextInt(), r.nextLong());
    }

    /** A random well-formed request of a random type, every type equally likely. */
    static P9Request request(Random r) {
        return switch (r.nextInt(28)) {
            case 0 -> new P9Request.Version(r.nextInt(), name(r));
            case 1 -> new P9Request.Auth(r.nextInt(), name(r), name(r), r.nextInt());
            case 2 -> new P9Request.Attach(r.nextInt(), r.nextInt(), name(r), name(r), r.nextInt());
            case 3 -> new P9Request.Flush(r.nextInt(65536));
            case 4 -> {
                List<String> names = new ArrayList<>();
                for (int i = r.nextInt(P9Codec.MAX_WALK + 1); i > 0; i--) {
                    names.add(name(r));
                }
                yield new P9Request.Walk(r.nextInt(), r.nextInt(), names);
            }
            case 5 -> new P9Request.Lopen(r.nextInt(), r.nextInt());
            case 6 -> new P9Request.Lcreate(r.nextInt(), name(r), r.nextInt(), r.nextInt(), r.nextInt());
            case 7 -> new P9Request.Read(r.nextInt(), r.nextLong(), r.nextInt() & Integer.MAX_VALUE);
            case 8 -> new P9Request.Write(r.nextInt(), r.nextLong(), data(r));
            case 9 -> new P9Request.Clunk(r.nextInt());
            case 10 -> new P9Request.Remove(r.nextInt());
            case 11 -> new P9Request.Statfs(r.nextInt());
            case 12 -> new P9Request.Symlink(r.nextInt(), name(r), name(r), r.nextInt());
            case 13 -> new P9Request.Mknod(r.nextInt(), name(r), r.nextInt(), r.nextInt(), r.nextInt(), r.nextInt());
            case 14 -> new P9Request.Rename(r.nextInt(), r.nextInt(), name(r));
            case 15 -> new P9Request.Readlink(r.nextInt());
            case 16 -> new P9Request.Getattr(r.nextInt(), r.nextLong());
            case 17 -> new P9Request.Setattr(r.nextInt(), r.nextInt(), r.nextInt(), r.nextInt(), r.nextInt(),
                    r.nextLong(), r.nextLong(), r.nextLong(), r.nextLong(), r.nextLong());
            case 18 -> new P9Request.XattrWalk(r.nextInt(), r.nextInt(), name(r));
            case 19 -> new P9Request.XattrCreate(r.nextInt(), name(r), r.nextLong(), r.nextInt());
            case 20 -> new P9Request.Readdir(r.nextInt(), r.nextLong(), r.nextInt() & Integer.MAX_VALUE);
            case 21 -> new P9Request.Fsync(r.nextInt(), r.nextInt());
            case 22 -> new P9Request.Lock(r.nextInt(), (byte) r.nextInt(), r.nextInt(), r.nextLong(), r.nextLong(),
                    r.nextInt(), name(r));
            case 23 -> new P9Request.GetLock(r.nextInt(), (byte) r.nextInt(), r.nextLong(), r.nextLong(),
                    r.nextInt(), name(r));
            case 24 -> new P9Request.Link(r.nextInt(), r.nextInt(), name(r));
            case 25 -> new P9Request.Mkdir(r.nextInt(), name(r), r.nextInt(), r.nextInt());
            case 26 -> new P9Request.RenameAt(r.nextInt(), name(r), r.nextInt(), name(r));
            default -> new P9Request.UnlinkAt(r.nextInt(), name(r), r.nextInt());
        };
    }

    /** A random well-formed reply of a random type, every type equally likely. */
    static P9Reply reply(Random r) {
        return switch (r.nextInt(29)) {
            case 0 -> new P9Reply.Lerror(r.nextInt());
            case 1 -> new P9Reply.Version(r.nextInt(), name(r));
            case 2 -> new P9Reply.Auth(qid(r));
            case 3 -> new P9Reply.Attach(qid(r));
            case 4 -> new P9Reply.Flush();
            case 5 -> {
                List<Qid> qids = new ArrayList<>();
                for (int i = r.nextInt(P9Codec.MAX_WALK + 1); i > 0; i--) {
                    qids.add(qid(r));
                }
                yield new P9Reply.Walk(qids);
            }
            case 6 -> new P9Reply.Lopen(qid(r), r.nextInt());
            case 7 -> new P9Reply.Lcreate(qid(r), r.nextInt());
            case 8 -> new P9Reply.Read(data(r));
            case 9 -> new P9Reply.Write(r.nextInt());
            case 10 -> new P9Reply.Clunk();
            case 11 -> new P9Reply.Remove();
            case 12 -> new P9Reply.Statfs(r.nextInt(), r.nextInt(), r.nextLong(), r.nextLong(), r.nextLong(),
                    r.nextLong(), r.nextLong(), r.nextLong(), r.nextInt());
            case 13 -> new P9Reply.Symlink(qid(r));
            case 14 -> new P9Reply.Mknod(qid(r));
            case 15 -> new P9Reply.Rename();
            case 16 -> new P9Reply.Readlink(name(r));
            case 17 -> new P9Reply.Getattr(r.nextLong(), qid(r), r.nextInt(), r.nextInt(), r.nextInt(), r.nextLong(),
                    r.nextLong(), r.nextLong(), r.nextLong(), r.nextLong(), r.nextLong(), r.nextLong(), r.nextLong(),
                    r.nextLong(), r.nextLong(), r.nextLong(), r.nextLong(), r.nextLong(), r.nextLong(), r.nextLong());
            case 18 -> new P9Reply.Setattr();
            case 19 -> new P9Reply.XattrWalk(r.nextLong());
            case 20 -> new P9Reply.XattrCreate();
            case 21 -> new P9Reply.Readdir(data(r));
            case 22 -> new P9Reply.Fsync();
            case 23 -> new P9Reply.Lock((byte) r.nextInt());
            case 24 -> new P9Reply.GetLock((byte) r.nextInt(), r.nextLong(), r.nextLong(), r.nextInt(), name(r));
            case 25 -> new P9Reply.Link();
            case 26 -> new P9Reply.Mkdir(qid(r));
            case 27 -> new P9Reply.RenameAt();
            default -> new P9Reply.UnlinkAt();
        };
    }

    /**
     * Mutates an encoded frame: sets a byte, cuts, inserts a byte, appends a
     * few, or rewrites the size field (to {@code mu[1] % sizeBound}, or raw
     * when {@code sizeBound} is 0); then, if asked, sets the size field to the
     * frame's real length again.
     */
    static byte[] mutate(byte[] frame, java.util.List<int[]> mutations, boolean fixSizeField, int sizeBound) {
        for (int[] mu : mutations) {
            int at = Math.floorMod(mu[1], Math.max(frame.length, 1));
            switch (mu[0]) {
                case 0 -> {
                    if (frame.length > 0) {
                        frame[at] = (byte) mu[2];
                    }
                }
                case 1 -> frame = java.util.Arrays.copyOf(frame, at);
                case 2 -> {
                    byte[] grown = new byte[frame.length + 1];
                    System.arraycopy(frame, 0, grown, 0, at);
                    grown[at] = (byte) mu[2];
                    System.arraycopy(frame, at, grown, at + 1, frame.length - at);
                    frame = grown;
                }
                case 3 -> {
                    frame = java.util.Arrays.copyOf(frame, frame.length + 1 + (mu[2] & 7));
                    frame[frame.length - 1] = (byte) mu[2];
                }
                default -> {
                    if (frame.length >= 4) {
                        java.nio.ByteBuffer.wrap(frame).order(java.nio.ByteOrder.LITTLE_ENDIAN)
                                .putInt(0, sizeBound == 0 ? mu[1] : mu[1] % sizeBound);
                    }
                }
            }
        }
        if (fixSizeField && frame.length >= 4) {
            java.nio.ByteBuffer.wrap(frame).order(java.nio.ByteOrder.LITTLE_ENDIAN).putInt(0, frame.length);
        }
        return frame;
    }

    /** One to four mutations for {@link #mutate}: {kind 0..4, position or size, byte value}. */
    static net.jqwik.api.Arbitrary<java.util.List<int[]>> mutations() {
        net.jqwik.api.Arbitrary<int[]> one = net.jqwik.api.Combinators.combine(
                net.jqwik.api.Arbitraries.integers().between(0, 4),
                net.jqwik.api.Arbitraries.integers(),
                net.jqwik.api.Arbitraries.integers().between(0, 255)).as((kind, at, value) -> new int[] {kind, at, value});
        return one.list().ofMinSize(1).ofMaxSize(4);
    }
}
