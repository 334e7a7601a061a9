package dev.kosa8.agent;

import dev.kosa8.protocol.Message;
import dev.kosa8.protocol.ReceiveWindow;
import java.io.IOException;
import java.util.concurrent.LinkedBlockingQueue;

/**
 * Moves a channel's stdin from the session's reader to a sink on its own
 * thread, so a process that does not read its stdin blocks only its own
 * channel. The queue is bounded by the protocol's window, which the host must
 * respect ({@link ReceiveWindow}); each chunk written is credited back.
 */
final class StdinPump {
    interface Sink {
        void write(byte[] bytes) throws IOException;

        void close() throws IOException;
    }

    private static final byte[] END = new byte[0];

    private final int channel;
    private final Outbox outbox;
    private final Sink sink;
    private final ReceiveWindow window;
    private final LinkedBlockingQueue<byte[]> queue = new LinkedBlockingQueue<>();
    private final Runnable onClosed;

    StdinPump(int channel, Outbox outbox, Sink sink, Runnable onClosed) {
        this(channel, outbox, sink, onClosed, dev.kosa8.protocol.Limits.INITIAL_WINDOW, true);
    }

    /**
     * @param window         the stream's window ({@link dev.kosa8.protocol.Limits#INITIAL_WINDOW} for an exec's)
     * @param platformThread whether the sink blocks in native code (a pipe, a PTY), which pins a virtual thread;
     *                       a socket's writes do not
     */
    StdinPump(int channel, Outbox outbox, Sink sink, Runnable onClosed, int window, boolean platformThread) {
        this.window = new ReceiveWindow(window);
        this.channel = channel;
        this.outbox = outbox;
        this.sink = sink;
        this.onClosed = onClosed;
        // Writes to a pipe or a PTY block in native code, which pins a virtual thread to its carrier;
        // with two carriers (two vCPUs) two such threads would starve every other one.
        (platformThread ? Thread.ofPlatform().daemon() : Thread.ofVirtual()).name("stdin-" + channel).start(this::run);
    }

    void offer(byte[] bytes) {
        window.received(bytes.length);
        queue.add(bytes);
    }

    void end() {
        queue.add(END);
    }

    private void run() {
        boolean broken = false;
        try {
            while (true) {
                byte[] chunk = queue.take();
                if (chunk == END) {
                    break;
                }
                if (!broken) {
                    try {
                        sink.write(chunk);
                    } catch (IOException e) {
                        // the process closed its stdin: drop the rest, as a pipe would
                        broken = true;
                    }
                }
                window.consumed(chunk.length);
                if (chunk.length > 0) {
                    outbox.send(new Message.Credit(channel, Message.Stream.STDIN, chunk.length));
                }
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } finally {
            try {
                sink.close();
            } catch (IOException ignored) {
                // already closed by the process
            }
            onClosed.run();
        }
    }
}
