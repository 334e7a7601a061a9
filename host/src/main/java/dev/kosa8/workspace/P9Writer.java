package dev.kosa8.workspace;

import java.nio.BufferOverflowException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;

/**
 * Writes one 9P frame, little-endian, into a caller's buffer.
 *
 * <p>It writes through a duplicate of the buffer and moves the caller's position only in
 * {@link #finish()}, so a frame that does not fit throws {@link BufferOverflowException} and leaves
 * the position where it was: the server can flush and retry, or answer with an error instead.
 *
 * <p>Encoding is faithful, not a validator: it writes NUL bytes, over-long names and over-long walks
 * as given, so a test client can send exactly the hostile frames the decoder must refuse. Only
 * what the wire cannot represent at all is refused, with {@link IllegalArgumentException}.
 */
final class P9Writer {
    private final ByteBuffer out;
    private final ByteBuffer w;
    private final int start;

    P9Writer(ByteBuffer out) {
        this.out = out;
        this.w = out.duplicate().order(ByteOrder.LITTLE_ENDIAN);
        this.start = w.position();
    }

    /** Starts the frame: a size placeholder, the type and the tag. */
    P9Writer head(int type, int tag) {
        if ((tag & ~0xffff) != 0) {
            throw new IllegalArgumentException("tag " + tag + " is not a 16-bit value");
        }
        return u32(0).u8(type).u16(tag);
    }

    P9Writer u8(int v) {
        w.put((byte) v);
        return this;
    }

    P9Writer u16(int v) {
        w.putShort((short) v);
        return this;
    }

    P9Writer u32(int v) {
        w.putInt(v);
        return this;
    }

    P9Writer u64(long v) {
        w.putLong(v);
        return this;
    }

    P9Writer qid(Qid q) {
        return u8(q.type()).u32(q.version()).u64(q.path());
    }

    /** len[2] then one byte per char; chars above U+00FF have no byte and are refused. */
    P9Writer string(String s) {
        w.putShort((short) checkedLength(s));
        for (int i = 0; i < s.length(); i++) {
            w.put((byte) s.charAt(i));
        }
        return this;
    }

    /** count[4] then the bytes between data's position and limit; data itself is not moved. */
    P9Writer data(ByteBuffer data) {
        w.putInt(data.remaining());
        w.put(data.duplicate());
        return this;
    }

    /** Fills in the size field and moves the caller's buffer past the frame. */
    void finish() {
        w.putInt(start, w.position() - start);
        commit();
    }

    /** Moves the caller's buffer past what was written, for a piece of a frame such as a directory entry. */
    void commit() {
        out.position(w.position());
    }

    /** The wire length of a string, after checking that every char is one byte. */
    static int checkedLength(String s) {
        if (s.length() > 0xffff) {
            throw new IllegalArgumentException("a string of " + s.length() + " bytes does not fit a 16-bit length");
        }
        for (int i = 0; i < s.length(); i++) {
            if (s.charAt(i) > 0xff) {
                throw new IllegalArgumentException("char U+" + Integer.toHexString(s.charAt(i))
                        + " is not a byte; 9P strings carry one char per byte (ISO-8859-1)");
            }
        }
        return s.length();
    }
}
