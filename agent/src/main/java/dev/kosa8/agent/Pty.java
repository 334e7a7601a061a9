package dev.kosa8.agent;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

/** A pseudo-terminal's master side, owned by one TTY exec. */
final class Pty implements AutoCloseable {
    record Opened(int masterFd, String slavePath) {
    }

    private final Opened opened;
    private final Arena arena = Arena.ofAuto();
    private final MemorySegment readBuffer;
    private volatile boolean closed;

    private Pty(Opened opened) {
        this.opened = opened;
        this.readBuffer = arena.allocate(dev.kosa8.protocol.Limits.MAX_DATA);
    }

    static Pty open(int rows, int columns) {
        Pty pty = new Pty(Posix.openPty());
        pty.resize(rows, columns);
        return pty;
    }

    String slavePath() {
        return opened.slavePath();
    }

    synchronized void resize(int rows, int columns) {
        if (!closed) {
            Posix.setWindowSize(opened.masterFd(), rows, columns);
        }
    }

    /** Reads what the terminal's programs wrote, at most {@code max} bytes; empty at hang-up. */
    byte[] read(int max) {
        MemorySegment slice = readBuffer.asSlice(0, Math.min(max, readBuffer.byteSize()));
        int n = Posix.read(opened.masterFd(), slice, arena);
        return slice.asSlice(0, n).toArray(java.lang.foreign.ValueLayout.JAVA_BYTE);
    }

    /**
     * Types into the terminal. Not under the lock: a write can block while the
     * program does not read, and close() must still go through when it exits.
     */
    void write(byte[] bytes) {
        if (!closed) {
            Posix.writeFully(opened.masterFd(), bytes);
        }
    }

    @Override
    public synchronized void close() {
        if (!closed) {
            closed = true;
            Posix.close(opened.masterFd());
        }
    }
}
