package dev.kosa8.vm;

import java.io.EOFException;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.ReadableByteChannel;
import java.nio.charset.StandardCharsets;

/**
 * What a QEMU loading a machine during postcopy sends back on its return
 * path (QEMU 7.2's {@code migration/migration.c}, {@code enum
 * mig_rp_message_type}): {@code be16(type) be16(length) payload}. QEMU runs
 * the guest, so what it sends is read as untrusted: every length is checked
 * before it is read, a message is at most {@link #MAX_PAYLOAD} bytes, and
 * anything else is refused with an {@link IOException}.
 */
public sealed interface ReturnPath {
    int MAX_PAYLOAD = 1 + 8 + 4 + 1 + 255;
    int SHUT = 1, PONG = 2, REQ_PAGES_ID = 3, REQ_PAGES = 4;

    /** QEMU will send nothing more; {@code failed} if its load failed. */
    record Shut(boolean failed) implements ReturnPath {
    }

    /** The answer to a ping: QEMU has processed everything sent before it. */
    record Pong(int sequence) implements ReturnPath {
    }

    /**
     * QEMU needs {@code length} bytes at {@code start} of RAM block
     * {@code block} (null: the block its last request named) to go on.
     */
    record RequestPages(String block, long start, int length) implements ReturnPath {
    }

    /** Reads one message; {@link EOFException} when the channel ends between two. */
    static ReturnPath read(ReadableByteChannel in) throws IOException {
        ByteBuffer head = ByteBuffer.allocate(4).order(ByteOrder.BIG_ENDIAN);
        if (!fill(in, head, true)) {
            throw new EOFException("QEMU closed its return path");
        }
        int type = head.getShort(0) & 0xffff;
        int length = head.getShort(2) & 0xffff;
        if (length > MAX_PAYLOAD) {
            throw new IOException("a return-path message of " + length + " bytes (type " + type + ")");
        }
        ByteBuffer b = ByteBuffer.allocate(length).order(ByteOrder.BIG_ENDIAN);
        fill(in, b, false);
        b.flip();
        switch (type) {
            case SHUT -> {
                expect(length, 4, type);
                return new Shut(b.getInt() != 0);
            }
            case PONG -> {
                expect(length, 4, type);
                return new Pong(b.getInt());
            }
            case REQ_PAGES -> {
                expect(length, 12, type);
                return new RequestPages(null, b.getLong(), b.getInt());
            }
            case REQ_PAGES_ID -> {
                if (length < 13) {
                    throw new IOException("a page request of " + length + " bytes");
                }
                long start = b.getLong();
                int len = b.getInt();
                int n = b.get() & 0xff;
                if (n == 0 || length != 13 + n) {
                    throw new IOException("a page request naming a block of " + n + " bytes in " + length);
                }
                byte[] name = new byte[n];
                b.get(name);
                return new RequestPages(new String(name, StandardCharsets.ISO_8859_1), start, len);
            }
            default -> throw new IOException("a return-path message of type " + type);
        }
    }

    private static void expect(int length, int want, int type) throws IOException {
        if (length != want) {
            throw new IOException("a return-path message of type " + type + " with " + length + " bytes, not " + want);
        }
    }

    /** Fills {@code b}; false when the channel ended before its first byte and {@code atBoundary}. */
    private static boolean fill(ReadableByteChannel in, ByteBuffer b, boolean atBoundary) throws IOException {
        boolean empty = b.position() == 0;
        while (b.hasRemaining()) {
            if (in.read(b) < 0) {
                if (atBoundary && empty && b.position() == 0) {
                    return false;
                }
                throw new EOFException("QEMU's return path ends in the middle of a message");
            }
        }
        return true;
    }
}
