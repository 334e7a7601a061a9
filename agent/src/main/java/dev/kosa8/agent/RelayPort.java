package dev.kosa8.agent;

import java.lang.foreign.MemorySegment;

/**
 * The workspace's port as the relay's pumps share it. It is opened once for
 * the agent's life (a virtio-serial port opens only once) and read by the
 * down pump alone for that life. Both pumps write to it (the Treturns and
 * Tquiets come from the port's reader), so each writes whole messages under
 * one lock, and no message is cut into by another.
 */
final class RelayPort {
    private final int fd;
    private final Object lock = new Object();

    RelayPort(int fd) {
        this.fd = fd;
    }

    /** One read(2) of at most {@code length} bytes into {@code buf}; -1 while no host is connected to the port. */
    int read(MemorySegment buf, long length, MemorySegment st) {
        return RelayIo.readSome(fd, buf, length, st);
    }

    /**
     * Writes {@code length} bytes of {@code m} for the connection {@code of},
     * then {@code then} whole if not null, unless the connection is closed:
     * nothing of a detached mount follows the next mount's Tversion. False
     * if it was closed.
     */
    boolean send(RelayConnection of, MemorySegment m, long length, MemorySegment then, MemorySegment st) {
        synchronized (lock) {
            if (of.closed) {
                return false;
            }
            Posix.writeAll(fd, m, length, st);
            if (then != null) {
                Posix.writeAll(fd, then, then.byteSize(), st);
            }
        }
        return true;
    }

    /** Writes one of the relay's own messages, which belongs to no mount (a Treturn). */
    void sendOwn(MemorySegment m, long length, MemorySegment st) {
        synchronized (lock) {
            Posix.writeAll(fd, m, length, st);
        }
    }

    /** From now on nothing of {@code c} goes to the port; none of its messages is half written when this returns. */
    void close(RelayConnection c) {
        synchronized (lock) {
            c.closed = true;
        }
    }
}
