package dev.kosa8.checkpoint.ram;

import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/**
 * Reads a QEMU migration stream far enough to take its RAM pages out, and
 * writes one back. The layout (QEMU 7.2's {@code migration/savevm.c} and
 * {@code migration/ram.c}, checked against streams QEMU wrote here, both a
 * background snapshot's and a stopped machine's):
 *
 * <pre>
 * "QEVM" be32(3)                          header
 * 0x07 be32(n) name[n]                    configuration: the machine type, then on a target whose page
 *   [0x05 s("configuration/target-page-bits") be32(1) be32(12)]   size varies (arm64) that size, 4 KiB
 * 0x01 be32(id) s("ram") be32 be32        RAM's setup section:
 *      be64(total | MEM_SIZE)               the RAM blocks' total size, then
 *      { s(block) be64(length) }            each block, until the total is reached
 *      be64(EOS)
 * 0x7e be32(id)                           section footer
 * { 0x02|0x03 be32(id)                    RAM's parts and end, each a run of pages:
 *      { be64(offset | flags) [s(block)]    the block named unless CONTINUE (the last one again)
 *        ZERO: u8 fill | PAGE: 4096 bytes }
 *      be64(EOS)
 *   0x7e be32(id) }
 * 0x04 ...                                the devices (opaque here), EOF, a JSON description
 * </pre>
 *
 * where {@code s(x)} is a length byte and the bytes. What comes after the
 * last RAM section is kept as it is: the <em>tail</em>. A stream that
 * departs from this in any way (other page flags such as compressed pages,
 * configuration subsections other than the page size, sections in an order not shown) is refused
 * with {@link UnknownFormat}, and the caller keeps the stream whole.
 *
 * <p>The page contents are the guest's, the framing is QEMU's; every field is
 * still checked against the bounds of the file and of the blocks declared,
 * so a damaged file is refused, never read out of bounds.
 */
final class RamStream {
    static final int PAGE = 4096;
    static final int MAX_BLOCKS = 64;
    private static final int MAGIC = 0x5145564d;
    private static final int VERSION = 3;
    private static final int START = 0x01, PART = 0x02, END = 0x03, SUBSECTION = 0x05, CONFIGURATION = 0x07,
            FOOTER = 0x7e;
    /** The configuration's subsection naming the target's page size, where it may vary ({@code be32} bits). */
    private static final String PAGE_BITS = "configuration/target-page-bits";
    private static final byte EOF = 0x00, DESCRIPTION = 0x06;
    static final int ZERO = 0x02, MEM_SIZE = 0x04, PAGE_DATA = 0x08, EOS = 0x10, CONTINUE = 0x20;
    private static final int MAX_NAME = 255;
    private static final ValueLayout.OfInt BE_INT = ValueLayout.JAVA_INT_UNALIGNED.withOrder(ByteOrder.BIG_ENDIAN);
    private static final ValueLayout.OfLong BE_LONG = ValueLayout.JAVA_LONG_UNALIGNED.withOrder(ByteOrder.BIG_ENDIAN);

    private RamStream() {
    }

    /** A stream this reader does not take apart; it is kept whole. */
    static final class UnknownFormat extends IOException {
        UnknownFormat(String message, long at) {
            super(message + " at byte " + at);
        }
    }

    /** A RAM block as the setup section declares it. */
    record Block(String name, long length) {
        long pages() {
            return length / PAGE;
        }
    }

    /**
     * What surrounds the pages.
     *
     * @param prefix     the header, configuration and RAM's setup section with its footer, as they are
     * @param sectionId  RAM's section id
     * @param footers    whether sections end with footers
     * @param tailOffset where the tail starts in the stream
     */
    record Layout(byte[] prefix, int sectionId, boolean footers, List<Block> blocks, long tailOffset) {
    }

    /** Where the pages go, in stream order. */
    interface Pages {
        /** The blocks, before any page: the layout's tail is not known yet. */
        void blocks(Layout setup) throws IOException;

        void page(int block, long page, MemorySegment data) throws IOException;

        void zero(int block, long page, int fill) throws IOException;
    }

    /** Reads {@code stream}, handing each page to {@code pages}. */
    static Layout read(MemorySegment stream, Pages pages) throws IOException {
        Cursor c = new Cursor(stream);
        skipHeader(c);
        if (c.u8() != START) {
            throw new UnknownFormat("no RAM setup section first", c.at - 1);
        }
        int id = c.i32();
        if (!c.name().equals("ram")) {
            throw new UnknownFormat("a first section other than RAM", c.at);
        }
        c.skip(8); // instance and version ids
        long word = c.i64();
        if ((word & MEM_SIZE) == 0 || (word & (PAGE - 1)) != MEM_SIZE) {
            throw new UnknownFormat("no RAM size in the setup section", c.at - 8);
        }
        long left = word & ~(PAGE - 1L);
        List<Block> blocks = new ArrayList<>();
        while (left > 0) {
            String name = c.name();
            long length = c.i64();
            if (length <= 0 || length % PAGE != 0 || length > left || blocks.size() == MAX_BLOCKS
                    || blocks.stream().anyMatch(b -> b.name().equals(name))) {
                throw new UnknownFormat("a RAM block '" + name + "' of " + length + " bytes", c.at - 8);
            }
            blocks.add(new Block(name, length));
            left -= length;
        }
        if (c.i64() != EOS) {
            throw new UnknownFormat("more in RAM's setup section than its blocks", c.at - 8);
        }
        boolean footers = c.peek() == FOOTER;
        if (footers) {
            c.footer(id);
        }
        byte[] prefix = stream.asSlice(0, c.at).toArray(ValueLayout.JAVA_BYTE);
        pages.blocks(new Layout(prefix, id, footers, List.copyOf(blocks), c.at));
        int current = -1;
        while (c.remaining() >= 5 && (c.peek() == PART || c.peek() == END) && c.i32At(c.at + 1) == id) {
            c.skip(5);
            current = readPages(c, blocks, current, pages);
            if (footers) {
                c.footer(id);
            }
        }
        return new Layout(prefix, id, footers, List.copyOf(blocks), c.at);
    }

    /**
     * Where RAM's setup section starts in a stream's {@link Layout#prefix}:
     * after the header and the configuration. A postcopy load sends its
     * commands between the two.
     */
    static int setupOffset(byte[] prefix) throws UnknownFormat {
        Cursor c = new Cursor(MemorySegment.ofArray(prefix));
        skipHeader(c);
        if (c.peek() != START) {
            throw new UnknownFormat("no RAM setup section after the configuration", c.at);
        }
        return (int) c.at;
    }

    /**
     * Reads past the header and the configuration (the machine type, and the target page size where the
     * target's may vary: arm64's {@code virt}), checking both.
     */
    private static void skipHeader(Cursor c) throws UnknownFormat {
        if (c.i32() != MAGIC || c.i32() != VERSION) {
            throw new UnknownFormat("not a version 3 QEMU migration stream", 0);
        }
        if (c.peek() == CONFIGURATION) {
            c.u8();
            int n = c.i32();
            if (n < 0 || n > MAX_NAME) {
                throw new UnknownFormat("a configuration of " + n + " bytes", c.at);
            }
            c.skip(n);
            while (c.remaining() > 0 && c.peek() == SUBSECTION) {
                c.u8();
                String name = c.name();
                c.skip(4); // its version
                if (!name.equals(PAGE_BITS)) {
                    throw new UnknownFormat("a configuration subsection '" + name + "'", c.at);
                }
                int bits = c.i32();
                if (bits != Integer.numberOfTrailingZeros(PAGE)) {
                    throw new UnknownFormat("target pages of 2^" + bits + " bytes", c.at - 4);
                }
            }
        }
    }

    /**
     * The devices' sections of a stream's tail: the tail without the end
     * mark ({@code 0x00}) and the JSON description QEMU writes after it
     * ({@code 0x06 be32(n) json[n]}), which a load during postcopy must not
     * have (QEMU writes neither while RAM is still to come). The sections
     * themselves are opaque; the end mark is found from the end, where its
     * description's length must lead exactly to the tail's last byte.
     */
    static byte[] devicesOf(byte[] tail) throws UnknownFormat {
        int n = tail.length;
        if (n >= 1 && tail[n - 1] == EOF) {
            return java.util.Arrays.copyOf(tail, n - 1);
        }
        for (int p = n - 6; p >= 0; p--) {
            if (tail[p] == EOF && tail[p + 1] == DESCRIPTION
                    && java.nio.ByteBuffer.wrap(tail, p + 2, 4).getInt() == n - (p + 6)) {
                return java.util.Arrays.copyOf(tail, p);
            }
        }
        throw new UnknownFormat("no end mark after the devices", n);
    }

    /** Reads one section's pages up to its EOS; returns the block the last page named. */
    private static int readPages(Cursor c, List<Block> blocks, int current, Pages pages) throws IOException {
        while (true) {
            long at = c.at;
            long word = c.i64();
            int flags = (int) (word & (PAGE - 1));
            long offset = word & ~(PAGE - 1L);
            if (flags == EOS) {
                return current;
            }
            if ((flags & CONTINUE) == 0) {
                String name = c.name();
                current = -1;
                for (int i = 0; i < blocks.size(); i++) {
                    if (blocks.get(i).name().equals(name)) {
                        current = i;
                    }
                }
                if (current < 0) {
                    throw new UnknownFormat("a page of an undeclared RAM block '" + name + "'", at);
                }
            } else if (current < 0) {
                throw new UnknownFormat("a page continuing no block", at);
            }
            if (offset >= blocks.get(current).length()) {
                throw new UnknownFormat("a page beyond its block's end", at);
            }
            switch (flags & ~CONTINUE) {
                case ZERO -> pages.zero(current, offset / PAGE, c.u8());
                case PAGE_DATA -> pages.page(current, offset / PAGE, c.slice(PAGE));
                default -> throw new UnknownFormat("page flags 0x" + Integer.toHexString(flags), at);
            }
        }
    }

    /** Bounds-checked big-endian reads; a read past the end is an {@link UnknownFormat}. */
    private static final class Cursor {
        private final MemorySegment s;
        long at;

        Cursor(MemorySegment s) {
            this.s = s;
        }

        long remaining() {
            return s.byteSize() - at;
        }

        private long take(long n) throws UnknownFormat {
            if (n > remaining()) {
                throw new UnknownFormat("the stream ends early", at);
            }
            long here = at;
            at += n;
            return here;
        }

        int peek() throws UnknownFormat {
            if (remaining() < 1) {
                throw new UnknownFormat("the stream ends early", at);
            }
            return s.get(ValueLayout.JAVA_BYTE, at) & 0xff;
        }

        int u8() throws UnknownFormat {
            return s.get(ValueLayout.JAVA_BYTE, take(1)) & 0xff;
        }

        int i32() throws UnknownFormat {
            return s.get(BE_INT, take(4));
        }

        int i32At(long where) {
            return s.get(BE_INT, where);
        }

        long i64() throws UnknownFormat {
            return s.get(BE_LONG, take(8));
        }

        void skip(long n) throws UnknownFormat {
            take(n);
        }

        MemorySegment slice(long n) throws UnknownFormat {
            return s.asSlice(take(n), n);
        }

        String name() throws UnknownFormat {
            int n = u8();
            return new String(slice(n).toArray(ValueLayout.JAVA_BYTE), StandardCharsets.ISO_8859_1);
        }

        void footer(int id) throws UnknownFormat {
            long here = at;
            if (u8() != FOOTER || i32() != id) {
                throw new UnknownFormat("a section without its footer", here);
            }
        }
    }
}
