package dev.kosa8.checkpoint.ram;

import java.io.BufferedInputStream;
import java.io.BufferedOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.zip.CRC32C;
import java.util.zip.CheckedOutputStream;

/**
 * One checkpoint's RAM as kept on disk ({@code <id>.ram}): the stream's
 * prefix and tail as they were, and for every page of every RAM block where
 * it is: not in the stream, a page of one repeated byte, or stored in a
 * pack ({@code ram/<pack>.pages}, a record of 8 + 4096 bytes per slot) with its content's
 * hash, so that the next checkpoint stores only pages whose content
 * changed. Packs are shared: a page unchanged since an earlier checkpoint
 * stays in that one's pack.
 *
 * <p>File: {@code "KOSA8RAM"}, a version, the packs' names, the stream's
 * layout, the pages, and a CRC32C of everything before it: a damaged or cut
 * file is refused, never half used.
 */
final class RamImage {
    static final byte ABSENT = 0, REPEATED = 1, STORED = 2;
    private static final long MAGIC = 0x4b4f53413852414dL; // "KOSA8RAM"
    /** 2: packs hold records (stream header and page); version 1's held bare pages. */
    private static final int VERSION = 2;
    private static final int MAX_PACKS = 1 << 16;

    final RamStream.Layout layout;
    final byte[] tail;
    final List<String> packs;
    /** The first page of each block in the arrays below. */
    final long[] firstPage;
    final byte[] kind;
    /** For a stored page, its pack's index in {@link #packs}; for a repeated one, the byte. */
    final int[] ref;
    final int[] slot;
    final long[] hashHigh;
    final long[] hashLow;

    RamImage(RamStream.Layout layout, byte[] tail, List<String> packs) {
        this.layout = layout;
        this.tail = tail;
        this.packs = packs;
        this.firstPage = new long[layout.blocks().size()];
        long total = 0;
        for (int b = 0; b < firstPage.length; b++) {
            firstPage[b] = total;
            total += layout.blocks().get(b).pages();
        }
        if (total > Integer.MAX_VALUE) {
            throw new IllegalArgumentException("more RAM than kosa8 keeps in one image: " + total + " pages");
        }
        int n = (int) total;
        kind = new byte[n];
        ref = new int[n];
        slot = new int[n];
        hashHigh = new long[n];
        hashLow = new long[n];
    }

    private RamImage(RamImage pages, RamStream.Layout layout, byte[] tail) {
        this.layout = layout;
        this.tail = tail;
        this.packs = pages.packs;
        this.firstPage = pages.firstPage;
        this.kind = pages.kind;
        this.ref = pages.ref;
        this.slot = pages.slot;
        this.hashHigh = pages.hashHigh;
        this.hashLow = pages.hashLow;
    }

    /** The same pages, with the stream's whole layout and its tail. */
    RamImage withTail(RamStream.Layout whole, byte[] tail) {
        if (!whole.blocks().equals(layout.blocks())) {
            throw new IllegalArgumentException("another stream's layout");
        }
        return new RamImage(this, whole, tail);
    }

    int pages() {
        return kind.length;
    }

    int index(int block, long page) {
        return (int) (firstPage[block] + page);
    }

    /** Writes the image file's content to {@code sink} (streamed; the caller makes it a file, {@link RamStore}). */
    void writeTo(OutputStream sink) throws IOException {
        CRC32C crc = new CRC32C();
        BufferedOutputStream buffered = new BufferedOutputStream(sink, 1 << 16);
        DataOutputStream out = new DataOutputStream(new CheckedOutputStream(buffered, crc));
        out.writeLong(MAGIC);
        out.writeInt(VERSION);
        out.writeInt(packs.size());
        for (String p : packs) {
            out.writeUTF(p);
        }
        out.writeInt(layout.sectionId());
        out.writeBoolean(layout.footers());
        out.writeInt(layout.prefix().length);
        out.write(layout.prefix());
        out.writeInt(tail.length);
        out.write(tail);
        out.writeInt(layout.blocks().size());
        for (RamStream.Block b : layout.blocks()) {
            byte[] name = b.name().getBytes(StandardCharsets.ISO_8859_1);
            out.writeByte(name.length);
            out.write(name);
            out.writeLong(b.length());
        }
        for (int i = 0; i < kind.length; i++) {
            out.writeByte(kind[i]);
            switch (kind[i]) {
                case REPEATED -> out.writeByte(ref[i]);
                case STORED -> {
                    out.writeShort(ref[i]);
                    out.writeInt(slot[i]);
                    out.writeLong(hashHigh[i]);
                    out.writeLong(hashLow[i]);
                }
                default -> { }
            }
        }
        DataOutputStream unchecked = new DataOutputStream(buffered);
        unchecked.writeInt((int) crc.getValue());
        unchecked.flush();
    }

    /** The packs an image file uses, read from its start alone. */
    static List<String> packsOf(Path file) throws IOException {
        try (DataInputStream in = new DataInputStream(new BufferedInputStream(
                java.nio.file.Files.newInputStream(file), 4096))) {
            return readPacks(in);
        }
    }

    /** Reads an image file whole: it is checked (CRC32C) before any of it is believed. */
    static RamImage read(Path file) throws IOException {
        byte[] all = java.nio.file.Files.readAllBytes(file);
        if (all.length < 4) {
            throw new IOException(file + " is cut short");
        }
        CRC32C crc = new CRC32C();
        crc.update(all, 0, all.length - 4);
        ByteBuffer b = ByteBuffer.wrap(all, 0, all.length - 4);
        if (ByteBuffer.wrap(all, all.length - 4, 4).getInt() != (int) crc.getValue()) {
            throw new IOException(file + " is damaged: its checksum does not match (or it is cut short)");
        }
        try {
            java.io.ByteArrayInputStream head = new java.io.ByteArrayInputStream(all);
            List<String> packs = readPacks(new DataInputStream(head));
            b.position(all.length - head.available());
            int sectionId = b.getInt();
            boolean footers = b.get() != 0;
            byte[] prefix = bytes(b);
            byte[] tail = bytes(b);
            int count = b.getInt();
            if (count < 1 || count > RamStream.MAX_BLOCKS) {
                throw new IOException(file + " is damaged: " + count + " RAM blocks");
            }
            List<RamStream.Block> blocks = new ArrayList<>();
            for (int i = 0; i < count; i++) {
                byte[] name = new byte[b.get() & 0xff];
                b.get(name);
                long length = b.getLong();
                if (length <= 0 || length % RamStream.PAGE != 0) {
                    throw new IOException(file + " is damaged: a block of " + length + " bytes");
                }
                blocks.add(new RamStream.Block(new String(name, StandardCharsets.ISO_8859_1), length));
            }
            RamImage image = new RamImage(new RamStream.Layout(prefix, sectionId, footers, List.copyOf(blocks),
                    prefix.length), tail, packs);
            for (int i = 0; i < image.kind.length; i++) {
                byte k = b.get();
                image.kind[i] = k;
                switch (k) {
                    case ABSENT -> { }
                    case REPEATED -> image.ref[i] = b.get() & 0xff;
                    case STORED -> {
                        image.ref[i] = b.getShort() & 0xffff;
                        image.slot[i] = b.getInt();
                        image.hashHigh[i] = b.getLong();
                        image.hashLow[i] = b.getLong();
                        if (image.ref[i] >= packs.size() || image.slot[i] < 0) {
                            throw new IOException(file + " is damaged: page " + i + " in no pack");
                        }
                    }
                    default -> throw new IOException(file + " is damaged: page kind " + k);
                }
            }
            if (b.hasRemaining()) {
                throw new IOException(file + " is damaged: " + b.remaining() + " bytes after its pages");
            }
            return image;
        } catch (java.nio.BufferUnderflowException | EOFException e) {
            throw new IOException(file + " is damaged: it ends in the middle of a field", e);
        } catch (IllegalArgumentException e) {
            throw new IOException(file + " is damaged: " + e.getMessage(), e);
        }
    }

    private static List<String> readPacks(DataInputStream in) throws IOException {
        if (in.readLong() != MAGIC) {
            throw new IOException("not a kosa8 RAM image");
        }
        int version = in.readInt();
        if (version != VERSION) {
            throw new IOException("a RAM image of version " + version + "; this kosa8 reads version " + VERSION);
        }
        int n = in.readInt();
        if (n < 0 || n > MAX_PACKS) {
            throw new IOException("a RAM image naming " + n + " packs");
        }
        List<String> packs = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            packs.add(in.readUTF());
        }
        return List.copyOf(packs);
    }

    private static byte[] bytes(ByteBuffer b) throws IOException {
        int n = b.getInt();
        if (n < 0 || n > b.remaining()) {
            throw new IOException("a RAM image field of " + n + " bytes");
        }
        byte[] out = new byte[n];
        b.get(out);
        return out;
    }
}
