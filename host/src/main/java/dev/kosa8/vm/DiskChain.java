package dev.kosa8.vm;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;

/**
 * The files a qcow2 disk rests on, read from their headers (no {@code
 * qemu-img}: it runs on every QEMU start, a rewind's among them, and costs
 * microseconds this way): each backing file's name as the image above it
 * writes it, made absolute against that image's folder, which is the path
 * QEMU opens. The jail ({@link Jail}) shows QEMU exactly these, read-only.
 *
 * <p>A header that is not qcow2 ends the chain (a raw file has no backing
 * file); a name that is not a plain path (QEMU's {@code json:} or a
 * protocol prefix) or a chain deeper than {@value #MAX_DEPTH} is an error:
 * the jail cannot show QEMU what it would open.
 *
 * <p>The same header gives a disk's size as its guest sees it ({@link #virtualSize}), which a checkpoint's
 * admission reads before every checkpoint.
 */
public final class DiskChain {
    static final int MAX_DEPTH = 16;
    private static final int MAGIC = 0x514649fb; // "QFI\xfb"
    private static final int MAX_NAME = 1023; // QEMU's own limit for a backing file name

    private DiskChain() {
    }

    /** The backing files under {@code disk}, nearest first; empty for a disk with none or one that does not exist. */
    public static List<Path> backingFiles(Path disk) throws IOException {
        List<Path> chain = new ArrayList<>();
        Path image = disk;
        while (Files.exists(image)) {
            Path backing = backingOf(image);
            if (backing == null) {
                break;
            }
            if (chain.size() == MAX_DEPTH) {
                throw new IOException("the backing chain of " + disk + " is deeper than " + MAX_DEPTH + " files");
            }
            chain.add(backing);
            image = backing;
        }
        return List.copyOf(chain);
    }

    /**
     * The size of the disk at {@code image} as its guest sees it: a qcow2 header's size field (bytes 24–31, in
     * versions 2 and 3 alike), or for a file that is not qcow2 (a raw disk) its size rounded up to a 512-byte sector,
     * as QEMU sees it. What {@code qemu-img info} calls its virtual size.
     */
    public static long virtualSize(Path image) throws IOException {
        try (FileChannel f = FileChannel.open(image, StandardOpenOption.READ)) {
            ByteBuffer header = ByteBuffer.allocate(32);
            readFully(f, header, 0);
            if (header.position() < 4 || header.getInt(0) != MAGIC) {
                return (f.size() + 511) & ~511L;
            }
            long size = header.position() < 32 ? -1 : header.getLong(24);
            if (size < 0) {
                throw new IOException(image + " has a damaged qcow2 header: "
                        + (header.position() < 32 ? "it is cut short" : "a size of " + Long.toUnsignedString(size)
                        + " bytes"));
            }
            return size;
        } catch (java.nio.file.NoSuchFileException e) {
            throw new IOException(image + " does not exist", e);
        }
    }

    /** The backing file named in one image's header, absolute; null when it has none or is not qcow2. */
    static Path backingOf(Path image) throws IOException {
        try (FileChannel f = FileChannel.open(image, StandardOpenOption.READ)) {
            ByteBuffer header = ByteBuffer.allocate(20);
            if (readFully(f, header, 0) < 20) {
                return null;
            }
            header.flip();
            if (header.getInt(0) != MAGIC) {
                return null;
            }
            long offset = header.getLong(8);
            int size = header.getInt(16);
            if (offset == 0 || size == 0) {
                return null;
            }
            if (size < 0 || size > MAX_NAME || offset < 0 || offset + size > f.size()) {
                throw new IOException(image + " has a damaged backing file name (offset " + offset + ", " + size
                        + " bytes)");
            }
            ByteBuffer name = ByteBuffer.allocate(size);
            readFully(f, name, offset);
            String text = new String(name.array(), 0, name.position(), StandardCharsets.UTF_8);
            if (text.startsWith("json:") || text.matches("^[a-z][a-z0-9+]*:.*") || text.indexOf('\0') >= 0) {
                throw new IOException(image + " rests on \"" + text + "\", which is not a file path");
            }
            Path p = Path.of(text);
            return (p.isAbsolute() ? p : image.toAbsolutePath().getParent().resolve(p)).normalize();
        }
    }

    /** Reads {@code buffer} full from {@code position} on, or to the file's end; the bytes read. */
    private static int readFully(FileChannel f, ByteBuffer buffer, long position) throws IOException {
        while (buffer.hasRemaining() && f.read(buffer, position + buffer.position()) > 0) {
            // until full or at the end
        }
        return buffer.position();
    }
}
