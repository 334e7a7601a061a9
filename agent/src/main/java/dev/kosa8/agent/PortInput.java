package dev.kosa8.agent;

import dev.kosa8.protocol.Limits;
import java.io.IOException;
import java.io.InputStream;
import java.io.InterruptedIOException;

/**
 * A virtio-serial port read as a stream of one host's bytes, however the
 * guest's driver tells of the host coming and going.
 *
 * <p><b>End of file only once the host has stayed gone.</b> The port reads as
 * end of file while no host is connected, and the driver learns that from
 * control messages it handles on a work queue of their own, while the host's
 * bytes arrive by interrupt: the two are not in order. A machine restored
 * from a saved state can hold a "host gone" that its guest had not handled
 * when it was saved (a template's rehearsal link ends just before the save);
 * it can be handled after the new host's first bytes, followed at once by
 * "host here". Read as an end, it ended the session the new host had just
 * begun, and every message after it was dropped: the guest's network was
 * gone for good. So a read that finds no host looks again every
 * {@code pollMillis} and answers end of file only when no host was found for
 * {@code graceMillis} ({@link Limits#HOST_GONE_MILLIS}); a host found again
 * sooner is read on as if it had never left, a frame it was half-way through
 * included. A host that connects after another therefore waits longer than
 * that before its Hello (the daemon's network link on a retry,
 * {@code GuestLink}; a restarted daemon, {@code Recovery}), so that a frame an
 * earlier connection cut is dropped and not read as its start.
 *
 * <p><b>Never asks how much is waiting.</b> The driver cannot say (it has no
 * FIONREAD), and {@code FileInputStream.available()} on the port then fails
 * with "Illegal seek"; a {@code BufferedInputStream} asks exactly when a read
 * returns less than was wanted, which on the port is whenever a frame
 * straddles two of the driver's buffers (a read returns one buffer, 4 KiB at
 * most). Failing there would cost the reader the bytes of a frame it had half
 * read, and with them where every later frame starts. Here there is simply
 * nothing more known to be waiting, and the caller reads again.
 */
final class PortInput extends InputStream {
    private final InputStream port;
    private final long graceNanos;
    private final long pollMillis;

    PortInput(InputStream port, long pollMillis) {
        this(port, Limits.HOST_GONE_MILLIS, pollMillis);
    }

    PortInput(InputStream port, long graceMillis, long pollMillis) {
        this.port = port;
        this.graceNanos = graceMillis * 1_000_000;
        this.pollMillis = pollMillis;
    }

    @Override
    public int read() throws IOException {
        byte[] one = new byte[1];
        return read(one, 0, 1) < 0 ? -1 : one[0] & 0xff;
    }

    @Override
    public int read(byte[] b, int off, int len) throws IOException {
        if (len == 0) {
            return 0;
        }
        long goneSince = 0;
        boolean gone = false;
        while (true) {
            int n = port.read(b, off, len);
            if (n > 0) {
                return n;
            }
            long now = System.nanoTime();
            if (!gone) {
                gone = true;
                goneSince = now;
            }
            if (now - goneSince >= graceNanos) {
                return -1;
            }
            try {
                Thread.sleep(pollMillis);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new InterruptedIOException("interrupted while the port had no host");
            }
        }
    }

    /** Nothing is known to be waiting: the port cannot tell. */
    @Override
    public int available() {
        return 0;
    }
}
