package dev.kosa8.workspace;

import java.nio.ByteBuffer;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A fixed number of direct buffers of one size, made on first need. When all
 * are out, {@link #take} waits for one to come back: that wait is how the
 * server bounds its memory and pushes back on a guest that sends faster
 * than it is served.
 */
final class BufferPool {
    private final BlockingQueue<ByteBuffer> free;
    private final AtomicInteger made = new AtomicInteger();
    private final int count;
    private final int size;

    BufferPool(int count, int size) {
        this.free = new ArrayBlockingQueue<>(count);
        this.count = count;
        this.size = size;
    }

    ByteBuffer take() throws InterruptedException {
        ByteBuffer b = free.poll();
        if (b != null) {
            return b;
        }
        if (made.incrementAndGet() <= count) {
            return ByteBuffer.allocateDirect(size);
        }
        made.decrementAndGet();
        return free.take();
    }

    void give(ByteBuffer b) {
        free.offer(b);
    }
}
