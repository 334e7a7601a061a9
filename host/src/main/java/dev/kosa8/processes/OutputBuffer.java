package dev.kosa8.processes;

import dev.kosa8.protocol.Message;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;

/**
 * The output of one process the daemon owns, kept within a bound while no
 * client reads it. Every byte the process writes, stdout and stderr
 * together in the order the daemon received them, has an offset: the first
 * byte is 0, and offsets never repeat. A client that reads from where it
 * left off ({@link Slice#next}) gets each byte exactly once. When the
 * process writes more than {@code capacity} bytes that no one has read,
 * the oldest are dropped, and a read from before them says how many it
 * missed ({@link Slice#dropped}).
 */
public final class OutputBuffer {
    /** Bytes of one stream, starting at {@code offset}. */
    public record Chunk(Message.Stream stream, long offset, byte[] bytes) {
        public Chunk {
            if (stream == Message.Stream.STDIN) {
                throw new IllegalArgumentException("output is stdout or stderr");
            }
        }

        long end() {
            return offset + bytes.length;
        }

        @Override
        public String toString() {
            return "Chunk[" + stream + " @" + offset + ", " + bytes.length + " bytes]";
        }
    }

    /**
     * What one read found.
     *
     * @param from    the offset asked for
     * @param next    where the next read should start: past every byte in {@code chunks}
     * @param dropped bytes between {@code from} and the first byte kept, dropped because the buffer was full
     * @param end     the offset of the next byte the process writes: everything it has written so far
     * @param closed  whether the process's output is over: no byte past {@code end} will come
     */
    public record Slice(long from, long next, long dropped, long end, boolean closed, List<Chunk> chunks) {
        public Slice {
            chunks = List.copyOf(chunks);
        }

        /** Whether this read reached the end of output that will never grow. */
        public boolean complete() {
            return closed && next == end;
        }
    }

    private final ReentrantLock lock = new ReentrantLock();
    private final Condition grew = lock.newCondition();
    private final ArrayDeque<Chunk> chunks = new ArrayDeque<>();
    private final long capacity;
    private long start;
    private long end;
    private boolean closed;

    /** @param capacity the most bytes kept; at least 1 */
    public OutputBuffer(long capacity) {
        if (capacity < 1) {
            throw new IllegalArgumentException("an output buffer holds at least one byte, not " + capacity);
        }
        this.capacity = capacity;
    }

    /** Keeps {@code bytes} of {@code stream}, dropping the oldest bytes beyond the capacity. */
    public void append(Message.Stream stream, byte[] bytes) {
        if (bytes.length == 0) {
            return;
        }
        lock.lock();
        try {
            if (closed) {
                throw new IllegalStateException("output appended after its end");
            }
            end += bytes.length;
            if (bytes.length >= capacity) {
                // it fills the buffer alone: everything before it goes, and so does its own head
                chunks.clear();
                chunks.addLast(new Chunk(stream, end - capacity,
                        Arrays.copyOfRange(bytes, (int) (bytes.length - capacity), bytes.length)));
            } else {
                chunks.addLast(new Chunk(stream, end - bytes.length, bytes));
                trim();
            }
            start = chunks.getFirst().offset();
            grew.signalAll();
        } finally {
            lock.unlock();
        }
    }

    private void trim() {
        long excess = buffered() - capacity;
        while (excess > 0) {
            Chunk head = chunks.removeFirst();
            if (head.bytes().length > excess) {
                int cut = (int) excess;
                chunks.addFirst(new Chunk(head.stream(), head.offset() + cut,
                        Arrays.copyOfRange(head.bytes(), cut, head.bytes().length)));
                excess = 0;
            } else {
                excess -= head.bytes().length;
            }
        }
    }

    /** The chunks follow one another without a gap, so what they hold is the span from the first to the end. */
    private long buffered() {
        return chunks.isEmpty() ? 0 : end - chunks.getFirst().offset();
    }

    /** The output is over: the process ended. Readers waiting are woken. */
    public void close() {
        lock.lock();
        try {
            closed = true;
            grew.signalAll();
        } finally {
            lock.unlock();
        }
    }

    /**
     * Reads from {@code from}, at most {@code max} bytes, waiting up to {@code waitMillis} while there is none
     * yet and the output is not over.
     *
     * @throws IllegalArgumentException when {@code from} is past every byte written so far, or negative
     */
    public Slice read(long from, int max, long waitMillis) throws InterruptedException {
        if (max < 1) {
            throw new IllegalArgumentException("a read takes at least one byte, not " + max);
        }
        lock.lock();
        try {
            if (from < 0 || from > end) {
                throw new IllegalArgumentException("offset " + from + " is not in the output, which has "
                        + end + " bytes so far");
            }
            long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(waitMillis);
            while (from == end && !closed) {
                long left = deadline - System.nanoTime();
                if (left <= 0) {
                    break;
                }
                grew.awaitNanos(left);
            }
            return slice(from, max);
        } finally {
            lock.unlock();
        }
    }

    private Slice slice(long from, int max) {
        long at = Math.max(from, start);
        List<Chunk> out = new ArrayList<>();
        long budget = max;
        for (Chunk c : chunks) {
            if (budget == 0) {
                break;
            }
            if (c.end() <= at) {
                continue;
            }
            int skip = (int) (at - c.offset());
            int take = (int) Math.min(budget, c.bytes().length - skip);
            out.add(skip == 0 && take == c.bytes().length ? c
                    : new Chunk(c.stream(), at, Arrays.copyOfRange(c.bytes(), skip, skip + take)));
            at += take;
            budget -= take;
        }
        return new Slice(from, at, Math.max(0, start - from), end, closed, out);
    }

    /** What the buffer holds now. */
    public record Stats(long end, long buffered, long dropped, long capacity, boolean closed) {
    }

    public Stats stats() {
        lock.lock();
        try {
            return new Stats(end, buffered(), start, capacity, closed);
        } finally {
            lock.unlock();
        }
    }
}
