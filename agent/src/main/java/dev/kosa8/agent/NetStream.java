package dev.kosa8.agent;

import dev.kosa8.protocol.Message;
import dev.kosa8.protocol.NetLink;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.SelectionKey;
import java.nio.channels.SocketChannel;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;

/**
 * One guest connection to the broker's address, as the agent relays it: its
 * socket, the window it may still send the host ({@code up}), and the bytes
 * from the host it has not yet written into the socket ({@code down}), which
 * it writes and credits back in steps ({@link #credited}). Used
 * by {@link NetRelay}'s thread alone.
 */
final class NetStream {
    final int channel;
    final SocketChannel socket;
    final SelectionKey key;
    /** Bytes the host has credited and the guest may still send it. */
    int upWindow = NetLink.WINDOW;
    /** The guest has closed its side for writing (its Eof is sent), or the stream broke. */
    boolean upEnded;
    /** Reading is paused until the host's outbox drains ({@link NetRelay}'s budget), not for want of window. */
    boolean starved;
    /** The host's bytes for the guest not yet written into its socket, oldest first. */
    final ArrayDeque<Down> down = new ArrayDeque<>();
    /** The window the host has towards the guest: {@link NetLink#OPEN_WINDOW}, grown by {@link DownWindows}. */
    int downWindow;
    /** The host's bytes received and not yet credited back: at most {@link #downWindow}. */
    int downUncredited;
    /** Of those, the bytes written into the guest's socket, credited once they reach {@link #creditStep}. */
    int creditDue;
    /** The host has sent its Eof; once {@link #down} is written the socket is shut for writing. */
    boolean downEof;
    /** The socket is shut for writing. */
    boolean downEnded;

    /**
     * A piece of the host's bytes for the guest: a Data's bytes, or a network window slot's read into one of the
     * reader's own buffers ({@link NetWindowReader}), which {@code release} gives back once written or dropped.
     */
    record Down(ByteBuffer bytes, Runnable release) {
        void done() {
            if (release != null) {
                release.run();
            }
        }
    }

    /** Drops what the host sent and the guest did not get, giving back the buffers it was in. */
    void dropDown() {
        List<Down> dropped = new ArrayList<>(down);
        down.clear();
        RuntimeException first = null;
        for (Down d : dropped) {
            try {
                d.done();
            } catch (RuntimeException e) {
                first = first == null ? e : first; // every other piece still goes back
            }
        }
        if (first != null) {
            throw first;
        }
    }

    NetStream(int channel, SocketChannel socket, SelectionKey key, int downWindow) {
        this.channel = channel;
        this.socket = socket;
        this.key = key;
        this.downWindow = downWindow;
    }

    /**
     * How much written the host is credited for at once: a window slot's worth ({@link NetLink#SLOT_DATA}), or half
     * the window while it is smaller. Never more than the window, so a host that filled it always gets its credit
     * once the guest has read what it sent.
     */
    int creditStep() {
        return Math.min(NetLink.SLOT_DATA, Math.max(1, downWindow / 2));
    }

    /** Takes a piece of the host's bytes to write into the socket; false (the piece dropped) if it overran the window. */
    boolean take(Down piece) {
        int n = piece.bytes().remaining();
        if (downUncredited + n > downWindow) {
            piece.done();
            return false;
        }
        try {
            down.add(piece);
        } catch (RuntimeException | OutOfMemoryError e) {
            // this piece at least goes back to the reader (ArrayDeque stores before it grows, so a growth that
            // failed leaves the queue looking empty: the pieces before it are then lost to the reader, and the
            // stream, reset, downloads slower for want of buffers; the agent has bigger troubles then)
            piece.done();
            throw e;
        }
        downUncredited += n;
        return true;
    }

    /**
     * Reads what the guest sent into {@code buffer}, at most the window's worth, as the message the host gets: its
     * Data, its Eof once the guest closed its side, or null when nothing was there.
     */
    Message readUp(ByteBuffer buffer) throws IOException {
        buffer.clear().limit(Math.min(upWindow, NetLink.CHUNK));
        int n = socket.read(buffer);
        if (n < 0) {
            upEnded = true;
            return new Message.Eof(channel, Message.Stream.STDOUT);
        }
        if (n == 0) {
            return null;
        }
        byte[] bytes = new byte[n];
        buffer.flip().get(bytes);
        upWindow -= n;
        return new Message.Data(channel, Message.Stream.STDOUT, bytes);
    }

    /** Ends the guest's connection with a reset (its program sees ECONNRESET) and stops watching it. */
    void abort() {
        key.cancel();
        NetListeners.abort(socket);
    }

    /** Writes the host's bytes into the socket as far as it takes them, giving back each piece once written; the bytes written. */
    int writeDown() throws IOException {
        int written = 0;
        while (!down.isEmpty()) {
            ByteBuffer b = down.peek().bytes();
            written += socket.write(b);
            if (b.hasRemaining()) {
                break;
            }
            down.poll().done();
        }
        return written;
    }

    /**
     * Counts what went into the socket, and returns the credit for it once it is {@link #creditStep} or more, the
     * window grown by what {@code windows} allows; null until then. The host reads its broker socket for as much as
     * its window has room ({@code dev.kosa8.egress.LinkStream}), so a credit for each piece written would keep a
     * window-bound download in pieces the size of the first ones; credits of a slot's worth make every piece a whole
     * slot, and halve the messages. A stream the host has filled is credited all the same: its whole window is at
     * least the step.
     */
    Message.Credit credited(int written, DownWindows windows) {
        creditDue += written;
        if (written <= 0 || creditDue < creditStep()) {
            return null;
        }
        // a credit carries at most a whole window (DOWN_WINDOW, within what a Credit may carry: CodecTest); it is
        // made before anything is counted, so a credit that cannot be made takes nothing from the budget
        int more = windows.room(downWindow);
        Message.Credit credit = new Message.Credit(channel, Message.Stream.STDIN, creditDue + more);
        windows.grant(more);
        downUncredited -= creditDue;
        downWindow += more;
        creditDue = 0;
        return credit;
    }

    /** Both ways are over: the socket can close. */
    boolean finished() {
        return upEnded && downEnded;
    }

    /** Whether the socket should be read now: the guest may send, with window, and the budget allows. */
    boolean wantsRead() {
        return !upEnded && upWindow > 0 && !starved;
    }

    /** Sets what the selector watches for: reads while {@link #wantsRead}, writes while bytes wait. */
    void updateInterest() {
        if (!key.isValid()) {
            return;
        }
        int ops = (wantsRead() ? SelectionKey.OP_READ : 0) | (down.isEmpty() ? 0 : SelectionKey.OP_WRITE);
        if (key.interestOps() != ops) {
            key.interestOps(ops);
        }
    }
}
