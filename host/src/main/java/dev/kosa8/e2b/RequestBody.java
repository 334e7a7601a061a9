package dev.kosa8.e2b;

import io.netty.channel.Channel;
import java.io.IOException;
import java.io.InputStream;
import java.util.ArrayDeque;

/**
 * A request's body as an input stream, fed by the event loop as it arrives and read by the request's own thread.
 * At most {@link #HIGH} bytes wait here: past that the connection stops reading from the socket until the reader
 * has taken them, so a 100 MB upload holds no more than that much in the daemon.
 */
final class RequestBody extends InputStream {
    static final int HIGH = 1 << 20;

    private final Channel channel;
    private final ArrayDeque<byte[]> chunks = new ArrayDeque<>();
    private byte[] current;
    private int at;
    private long buffered;
    private boolean ended;
    private boolean broken;
    private long read;

    RequestBody(Channel channel) {
        this.channel = channel;
    }

    /** From the event loop: more of the body. */
    synchronized void offer(byte[] bytes) {
        if (bytes.length == 0) {
            return;
        }
        chunks.add(bytes);
        buffered += bytes.length;
        if (buffered > HIGH) {
            channel.config().setAutoRead(false);
        }
        notifyAll();
    }

    /** From the event loop: the body is complete. */
    synchronized void end() {
        ended = true;
        notifyAll();
    }

    /** The connection went before the body was complete. */
    synchronized void broken() {
        broken = true;
        notifyAll();
    }

    synchronized boolean complete() {
        return ended && chunks.isEmpty() && (current == null || at == current.length);
    }

    /**
     * Reads and drops what is left of the body, at most {@code maxBytes} and {@code millis}.
     *
     * @return whether the body is now read to its end
     */
    boolean drain(int maxBytes, long millis) {
        long deadline = System.currentTimeMillis() + millis;
        long dropped = 0;
        synchronized (this) {
            while (!complete()) {
                if (broken || dropped > maxBytes) {
                    return false;
                }
                if (current != null && at < current.length) {
                    dropped += current.length - at;
                    at = current.length;
                    continue;
                }
                byte[] next = chunks.poll();
                if (next != null) {
                    buffered -= next.length;
                    dropped += next.length;
                    continue;
                }
                long left = deadline - System.currentTimeMillis();
                if (left <= 0) {
                    return false;
                }
                try {
                    wait(left);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    return false;
                }
            }
            return true;
        }
    }

    /** Bytes read so far. */
    synchronized long count() {
        return read;
    }

    @Override
    public synchronized int read() throws IOException {
        byte[] one = new byte[1];
        int n = read(one, 0, 1);
        return n < 0 ? -1 : one[0] & 0xff;
    }

    @Override
    public synchronized int read(byte[] b, int off, int len) throws IOException {
        if (len == 0) {
            return 0;
        }
        while (current == null || at == current.length) {
            current = chunks.poll();
            at = 0;
            if (current != null) {
                buffered -= current.length;
                if (buffered <= HIGH / 4 && !channel.config().isAutoRead()) {
                    channel.config().setAutoRead(true);
                    channel.read();
                }
                continue;
            }
            if (ended) {
                return -1;
            }
            if (broken) {
                throw new IOException("the client closed the connection before sending the whole body");
            }
            try {
                wait();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IOException("interrupted reading the request body");
            }
        }
        int n = Math.min(len, current.length - at);
        System.arraycopy(current, at, b, off, n);
        at += n;
        read += n;
        return n;
    }

    /**
     * The whole body, at most {@code max} bytes.
     *
     * @return null when it is longer
     */
    byte[] readAll(int max) throws IOException {
        java.io.ByteArrayOutputStream out = new java.io.ByteArrayOutputStream();
        byte[] buf = new byte[16384];
        int n;
        while ((n = read(buf, 0, buf.length)) >= 0) {
            if (out.size() + n > max) {
                return null;
            }
            out.write(buf, 0, n);
        }
        return out.toByteArray();
    }
}
