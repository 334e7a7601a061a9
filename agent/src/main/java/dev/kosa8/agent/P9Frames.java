package dev.kosa8.agent;

import dev.kosa8.protocol.Ws9p;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;

/**
 * 9p messages as the relay sees them in native memory: {@code size[4]
 * type[1] tag[2]} and a body, little-endian, the size counting the whole
 * message. The few 9P2000.L types the relay looks at are here; kosa8's own
 * are {@link Ws9p}'s.
 */
final class P9Frames {
    static final ValueLayout.OfInt LE_INT = ValueLayout.JAVA_INT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    static final ValueLayout.OfShort LE_SHORT = ValueLayout.JAVA_SHORT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    static final int RLERROR = 7, RVERSION = 101, RREAD = 117, TWRITE = 118, TCLUNK = 120, RCLUNK = 121;
    /** size[4] type[1] tag[2] fid[4]: a Tclunk. */
    static final int TCLUNK_SIZE = 11;
    /** size[4] type[1] tag[2] count[4]: an Rread before its data. */
    static final int RREAD_HEADER = 11;

    private P9Frames() {
    }

    /** The size field of the message at {@code off}. */
    static long size(MemorySegment buf, long off) {
        return Integer.toUnsignedLong(buf.get(LE_INT, off));
    }

    /** The type of the message at {@code off}. */
    static int type(MemorySegment buf, long off) {
        return buf.get(ValueLayout.JAVA_BYTE, off + 4) & 0xff;
    }

    /** The tag of the message at {@code off}. */
    static int tag(MemorySegment buf, long off) {
        return buf.get(LE_SHORT, off + 5) & 0xffff;
    }

    /** Writes a message's header into {@code m}: size[4] type[1] tag[2]. */
    static void head(MemorySegment m, long size, int type, int tag) {
        m.set(LE_INT, 0, (int) size);
        m.set(ValueLayout.JAVA_BYTE, 4, (byte) type);
        m.set(LE_SHORT, 5, (short) tag);
    }

    /**
     * How many leading bytes of the {@code have} in {@code buf} are whole 9p
     * messages. A size field that cannot be 9p (below a header, or larger
     * than {@code max}, the buffer) means the stream is not framed as
     * expected: everything is passed on as it is, and the kernel's client
     * decides.
     */
    static long wholeMessages(MemorySegment buf, long have, long max) {
        long off = 0;
        while (have - off >= 4) {
            long size = size(buf, off);
            if (size < Ws9p.HEADER || size > max) {
                return have;
            }
            if (have - off < size) {
                break;
            }
            off += size;
        }
        return off;
    }

    /** Where the first Rversion starts among the whole messages of {@code buf}, or -1 if none is there. */
    static long firstRversion(MemorySegment buf, long length) {
        long off = 0;
        while (length - off >= Ws9p.HEADER) {
            long size = size(buf, off);
            if (size < Ws9p.HEADER || off + size > length) {
                return -1; // unframed bytes: not an answer to anything the new mount asked
            }
            if (type(buf, off) == RVERSION && tag(buf, off) == Ws9p.NOTAG) {
                return off;
            }
            off += size;
        }
        return -1;
    }
}
