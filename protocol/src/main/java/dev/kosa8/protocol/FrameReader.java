package dev.kosa8.protocol;

import java.io.DataInputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.nio.ByteBuffer;

/**
 * Reads frames from a byte stream. Not thread-safe: one reader thread per stream.
 */
public final class FrameReader {
    private final DataInputStream in;

    public FrameReader(InputStream in) {
        this.in = new DataInputStream(in);
    }

    /**
     * Reads the next message.
     *
     * @return the message, or {@code null} at a clean end of stream (between frames)
     * @throws EOFException      if the stream ends in the middle of a frame
     * @throws ProtocolException if the frame is malformed or over the limit
     */
    public Message read() throws IOException {
        int first = in.read();
        if (first < 0) {
            return null;
        }
        int length = (first << 24) | (in.readUnsignedByte() << 16) | (in.readUnsignedByte() << 8) | in.readUnsignedByte();
        if (length <= 0 || length > Limits.MAX_FRAME) {
            throw new ProtocolException("frame length " + length + " is out of range 1.." + Limits.MAX_FRAME);
        }
        byte[] body = new byte[length];
        in.readFully(body);
        return Codec.decode(ByteBuffer.wrap(body));
    }
}
