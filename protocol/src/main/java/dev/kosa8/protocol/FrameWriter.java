package dev.kosa8.protocol;

import java.io.IOException;
import java.io.OutputStream;

/**
 * Writes whole frames to a byte stream. Thread-safe: frames from concurrent
 * writers never interleave.
 */
public final class FrameWriter implements AutoCloseable {
    private final OutputStream out;

    public FrameWriter(OutputStream out) {
        this.out = out;
    }

    public void write(Message m) throws IOException {
        byte[] frame = Codec.encode(m);
        synchronized (this) {
            out.write(frame);
            out.flush();
        }
    }

    @Override
    public void close() throws IOException {
        synchronized (this) {
            out.close();
        }
    }
}
