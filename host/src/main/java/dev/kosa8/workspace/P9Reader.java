package dev.kosa8.workspace;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/**
 * Reads the fields of one 9P frame, little-endian, refusing anything the frame does not hold.
 *
 * <p>Every read checks the bytes that remain first, so a length or count field can only make it
 * allocate what the frame actually contains: a string of n bytes is read only when n bytes
 * remain, a list is sized only after its count is checked against a fixed maximum. Every failure
 * is a {@link P9Exception}; nothing else escapes.
 */
final class P9Reader {
    private final ByteBuffer b;
    private final int type;
    private final int tag;

    private P9Reader(ByteBuffer b, int type, int tag) {
        this.b = b;
        this.type = type;
        this.tag = tag;
    }

    /**
     * Checks a frame's header and positions a reader at its body. The size field must equal the
     * bytes given: a mismatch means the caller split the stream somewhere other than where the
     * guest thinks frames begin, so nothing after it can be trusted.
     *
     * @param frame    exactly one frame, size field included; its position is left unchanged
     * @param maxFrame the largest frame accepted
     */
    static P9Reader open(ByteBuffer frame, int maxFrame) throws P9Exception {
        ByteBuffer b = frame.slice().order(ByteOrder.LITTLE_ENDIAN);
        if (b.remaining() < P9Codec.HEADER) {
            throw new P9Exception("a frame of " + b.remaining() + " bytes is shorter than the 7-byte header",
                    -1, P9Exception.EINVAL, true);
        }
        int tag = b.getShort(5) & 0xffff;
        long size = checkSize(b.getInt(0), maxFrame, tag);
        if (size != b.remaining()) {
            throw new P9Exception("the size field says " + size + " bytes but the frame holds " + b.remaining(),
                    tag, P9Exception.EINVAL, true);
        }
        int type = b.get(4) & 0xff;
        b.position(P9Codec.HEADER);
        return new P9Reader(b, type, tag);
    }

    /** A reader over bytes with no header, such as the entries of an Rreaddir. */
    static P9Reader body(ByteBuffer data, int tag) {
        return new P9Reader(data.slice().order(ByteOrder.LITTLE_ENDIAN), -1, tag);
    }

    /**
     * Checks a frame's size field, read as unsigned. Both failures are fatal: a size outside these
     * bounds gives no trustworthy place for the next frame to start.
     *
     * @return the size as a non-negative number
     */
    static long checkSize(int sizeField, int maxFrame, int tag) throws P9Exception {
        long size = Integer.toUnsignedLong(sizeField);
        if (size < P9Codec.HEADER) {
            throw new P9Exception("size field " + size + " is smaller than the 7-byte header",
                    tag, P9Exception.EINVAL, true);
        }
        if (size > maxFrame) {
            throw new P9Exception("a frame of " + size + " bytes exceeds msize " + maxFrame,
                    tag, P9Exception.EMSGSIZE, true);
        }
        return size;
    }

    int type() {
        return type;
    }

    int tag() {
        return tag;
    }

    boolean hasRemaining() {
        return b.hasRemaining();
    }

    byte u8() throws P9Exception {
        need(1);
        return b.get();
    }

    int u16() throws P9Exception {
        need(2);
        return b.getShort() & 0xffff;
    }

    int u32() throws P9Exception {
        need(4);
        return b.getInt();
    }

    long u64() throws P9Exception {
        need(8);
        return b.getLong();
    }

    /**
     * An unsigned 32-bit count the server clamps itself: values of 2^31 and above become
     * {@link Integer#MAX_VALUE} instead of turning negative.
     */
    int count() throws P9Exception {
        int n = u32();
        return n < 0 ? Integer.MAX_VALUE : n;
    }

    Qid qid() throws P9Exception {
        need(Qid.SIZE);
        return new Qid(b.get(), b.getInt(), b.getLong());
    }

    /**
     * A string: len[2] then that many bytes, one char per byte. A length past the frame's end is a
     * malformed frame (EINVAL); a length that fits but exceeds {@link P9Codec#MAX_STRING} is
     * ENAMETOOLONG; a NUL byte is refused because no Linux name or path can hold one and the
     * server would otherwise have to remember to check.
     */
    String string() throws P9Exception {
        int n = u16();
        if (n > b.remaining()) {
            throw malformed("a string of " + n + " bytes runs past the end of the frame");
        }
        if (n > P9Codec.MAX_STRING) {
            throw new P9Exception("a string of " + n + " bytes exceeds " + P9Codec.MAX_STRING,
                    tag, P9Exception.ENAMETOOLONG, false);
        }
        byte[] bytes = new byte[n];
        b.get(bytes);
        for (byte x : bytes) {
            if (x == 0) {
                throw malformed("a string contains a NUL byte");
            }
        }
        return new String(bytes, StandardCharsets.ISO_8859_1);
    }

    /** The names of a Twalk: nwname[2] then that many strings, at most {@link P9Codec#MAX_WALK}. */
    List<String> names() throws P9Exception {
        int n = u16();
        if (n > P9Codec.MAX_WALK) {
            throw malformed("a walk of " + n + " names exceeds " + P9Codec.MAX_WALK);
        }
        List<String> names = new ArrayList<>(n);
        for (int i = 0; i < n; i++) {
            names.add(string());
        }
        return names;
    }

    /** The qids of an Rwalk: nwqid[2] then that many qids, at most {@link P9Codec#MAX_WALK}. */
    List<Qid> qids() throws P9Exception {
        int n = u16();
        if (n > P9Codec.MAX_WALK) {
            throw malformed("a walk reply of " + n + " qids exceeds " + P9Codec.MAX_WALK);
        }
        List<Qid> qids = new ArrayList<>(n);
        for (int i = 0; i < n; i++) {
            qids.add(qid());
        }
        return qids;
    }

    /**
     * count[4] then that many bytes, returned as a read-only view of the frame rather than a copy,
     * so a Twrite of msize bytes costs no second buffer.
     */
    ByteBuffer data() throws P9Exception {
        int n = u32();
        if (n < 0 || n > b.remaining()) {
            throw malformed("a data count of " + Integer.toUnsignedLong(n) + " runs past the end of the frame");
        }
        ByteBuffer data = b.slice(b.position(), n).asReadOnlyBuffer();
        b.position(b.position() + n);
        return data;
    }

    /** Refuses trailing bytes: a body longer than its fields is as malformed as a short one. */
    void end() throws P9Exception {
        if (b.hasRemaining()) {
            throw malformed(b.remaining() + " trailing bytes after the body of message type " + type);
        }
    }

    P9Exception malformed(String why) {
        return new P9Exception(why, tag, P9Exception.EINVAL, false);
    }

    private void need(int n) throws P9Exception {
        if (b.remaining() < n) {
            throw malformed("message type " + type + " ends in the middle of a field at byte " + b.position());
        }
    }
}
