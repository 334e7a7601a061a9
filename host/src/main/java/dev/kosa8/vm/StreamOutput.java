package dev.kosa8.vm;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.channels.WritableByteChannel;

/**
 * A migration stream being written to QEMU: small framing bytes gathered in
 * a buffer, and runs of page records sent straight from the files that keep
 * them ({@code sendfile}: no copy in the daemon, no page faults), each after
 * the framing written before it. Not thread-safe: one writer.
 */
public final class StreamOutput {
    private final WritableByteChannel out;
    private final ByteBuffer headers = ByteBuffer.allocateDirect(1 << 20).order(ByteOrder.BIG_ENDIAN);

    public StreamOutput(WritableByteChannel out) {
        this.out = out;
    }

    /** Room for {@code size} framing bytes (at most 64 KiB); the caller puts them. */
    public ByteBuffer header(int size) throws IOException {
        if (headers.remaining() < size) {
            flush();
        }
        return headers;
    }

    /** Bytes of any length (a stream's prefix, its devices), copied in. */
    public void bytes(byte[] b) throws IOException {
        int off = 0;
        while (off < b.length) {
            int len = Math.min(b.length - off, 1 << 16);
            header(len).put(b, off, len);
            off += len;
        }
    }

    /** {@code count} bytes of {@code file} from {@code position}, after the framing before them. */
    public void region(FileChannel file, long position, long count) throws IOException {
        flush();
        long sent = 0;
        while (sent < count) {
            long n = file.transferTo(position + sent, count - sent, out);
            if (n <= 0 && file.size() < position + count) {
                throw new IOException("a RAM pack ends before the pages its image names");
            }
            sent += n;
        }
    }

    /** Writes out what is gathered. */
    public void flush() throws IOException {
        headers.flip();
        while (headers.hasRemaining()) {
            out.write(headers);
        }
        headers.clear();
    }
}
