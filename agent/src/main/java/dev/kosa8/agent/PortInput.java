package dev.kosa8.agent;

import java.io.IOException;
import java.io.InputStream;

/**
 * A virtio-serial port read as a stream that never asks how much is waiting.
 * The guest's console driver cannot say (it has no FIONREAD), and
 * {@code FileInputStream.available()} on the port then fails with "Illegal
 * seek"; a {@code BufferedInputStream} asks exactly when a read returns less
 * than was wanted, which on the port is whenever a frame straddles two of the
 * driver's buffers (a read returns one buffer, 4 KiB at most). Failing there
 * would cost the reader the bytes of a frame it had half read, and with them
 * where every later frame starts. Here there is simply nothing more known to
 * be waiting, and the caller reads again.
 */
final class PortInput extends InputStream {
    private final InputStream port;

    PortInput(InputStream port) {
        this.port = port;
    }

    @Override
    public int read() throws IOException {
        return port.read();
    }

    @Override
    public int read(byte[] b, int off, int len) throws IOException {
        return port.read(b, off, len);
    }

    /** Nothing is known to be waiting: the port cannot tell. */
    @Override
    public int available() {
        return 0;
    }
}
