package dev.kosa8.vm;

import java.io.IOException;
import java.net.UnixDomainSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.nio.file.Path;
import java.time.Duration;

/**
 * Reads the guest's serial console from the socket QEMU puts it on
 * ({@link VmSpec#consoleSocket}) into the sandbox's {@link ConsoleLog}, on a
 * thread of its own, always reading: the log drops what it cannot keep, so
 * the guest is never held up by the host. QEMU drops what the guest writes
 * while no daemon is connected (between a daemon's end and the next one's
 * re-attach); the log says where that gap is.
 *
 * <p>Why a socket and not QEMU's ring buffer or file: QEMU's {@code file}
 * backend grows without end; its {@code ringbuf} keeps the bytes in QEMU
 * and has to be read over the monitor, whose commands then queue behind a
 * checkpoint's. A socket the daemon reads keeps QEMU writing no host file,
 * and the log's limit is the daemon's.
 */
public final class ConsolePump implements AutoCloseable {
    private final SocketChannel socket;
    private final ConsoleLog log;
    private final java.util.concurrent.atomic.AtomicBoolean released = new java.util.concurrent.atomic.AtomicBoolean();

    private ConsolePump(SocketChannel socket, ConsoleLog log) {
        this.socket = socket;
        this.log = log;
    }

    /**
     * Connects to {@code spec}'s console and starts copying it into its log,
     * writing {@code note} there first when it is not null.
     *
     * @throws IOException when QEMU's console socket cannot be reached within {@code timeout}
     */
    public static ConsolePump start(VmSpec spec, Duration timeout, String note) throws IOException {
        SocketChannel socket = connect(spec.consoleSocket(), timeout);
        ConsoleLog log = ConsoleLog.open(spec.consoleLog(), spec.consoleLimit());
        if (note != null) {
            log.note(note);
        }
        ConsolePump pump = new ConsolePump(socket, log);
        // a read never larger than an eighth of the limit, so one rotation keeps both files within it
        int chunk = (int) Math.min(64 << 10, spec.consoleLimit() / 8);
        Thread.ofVirtual().name("console-" + spec.name()).start(() -> pump.copy(chunk));
        return pump;
    }

    private static SocketChannel connect(Path path, Duration timeout) throws IOException {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (true) {
            try {
                return SocketChannel.open(UnixDomainSocketAddress.of(path));
            } catch (IOException e) {
                if (System.nanoTime() > deadline) {
                    throw new IOException("cannot connect to the console's socket " + path + ": " + e.getMessage(), e);
                }
                try {
                    Thread.sleep(5);
                } catch (InterruptedException ie) {
                    Thread.currentThread().interrupt();
                    throw new IOException("interrupted while connecting to the console", ie);
                }
            }
        }
    }

    private void copy(int chunk) {
        ByteBuffer buf = ByteBuffer.allocate(chunk);
        try {
            while (socket.read(buf) >= 0) {
                buf.flip();
                log.write(buf);
                buf.clear();
            }
        } catch (IOException e) {
            // QEMU ended, or the pump was closed
        } finally {
            try {
                socket.close();
            } catch (IOException ignored) {
                // closed already
            }
            release();
        }
    }

    /** This pump's share of the log, given back once. */
    private void release() {
        if (released.compareAndSet(false, true)) {
            log.close();
        }
    }

    /**
     * Stops reading, writing {@code note} in the log first when it is not
     * null (the daemon leaving a machine that runs on).
     */
    public void close(String note) {
        if (note != null && !released.get()) {
            log.note(note);
        }
        try {
            socket.close();
        } catch (IOException ignored) {
            // closed already
        }
        release();
    }

    @Override
    public void close() {
        close(null);
    }
}
