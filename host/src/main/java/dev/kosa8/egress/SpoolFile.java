package dev.kosa8.egress;

import io.netty.buffer.ByteBuf;
import java.io.IOException;
import java.nio.channels.FileChannel;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.atomic.AtomicLong;

/**
 * One request body on disk ({@link SpoolBudget#open()}): appended to as it arrives, read back as it goes upstream,
 * closed (its space and its bytes of the budget given back) once, when the request ends whichever way. The file's
 * reads and writes run on the spool's own threads ({@link SpoolBudget#io()}), never on a Netty event loop, whose
 * other connections a slow disk would otherwise stall: an append hands its bytes over and returns, the writes of one
 * file run in order, and {@link #pending()} says how far the disk is behind, which {@link BodySpool} keeps within
 * {@link #AHEAD} by not reading the guest meanwhile.
 */
final class SpoolFile implements AutoCloseable {
    /**
     * Bytes handed to the writer and not yet on disk past which the guest's connection (or HTTP/2 stream) is not
     * read; it is read again once the writer is back under half of it.
     */
    static final int AHEAD = 1 << 20;

    private final FileChannel file;
    private final SpoolBudget budget;
    private final Executor io;
    private final AtomicLong pending = new AtomicLong();
    private long size;
    /** The last write handed over: each of the file's writes runs after the one before. */
    private CompletableFuture<Void> tail = CompletableFuture.completedFuture(null);
    private volatile IOException failure;
    private volatile boolean closed;

    SpoolFile(FileChannel file, SpoolBudget budget) {
        this.file = file;
        this.budget = budget;
        this.io = budget.io();
    }

    /**
     * Takes the readable bytes of {@code b} to write at the end of the file, on the spool's threads, and releases
     * {@code b} once written (or once the file is closed); {@code written} is told then, on that thread.
     *
     * @return false, taking nothing ({@code b} stays the caller's), when the sandbox's spool would pass its bound
     */
    boolean append(ByteBuf b, Runnable written) {
        int n = b.readableBytes();
        if (!budget.reserve(n)) {
            return false;
        }
        long at = size;
        size += n; // reserved, so given back on close even if the write fails
        pending.addAndGet(n);
        tail = tail.thenRunAsync(() -> {
            try {
                if (!closed && failure == null) {
                    budget.slowDown();
                    // through buffers of this thread's own: a pooled buffer's internal one is shared with the event
                    // loop, which may be using it for another slice of the same memory
                    long to = at;
                    for (java.nio.ByteBuffer bb : b.nioBuffers()) {
                        while (bb.hasRemaining()) {
                            to += file.write(bb, to);
                        }
                    }
                }
            } catch (IOException e) {
                failure = e;
            } catch (RuntimeException e) {
                failure = new IOException(e);
            } finally {
                b.release();
                pending.addAndGet(-n);
                written.run();
            }
        }, io);
        return true;
    }

    /** Bytes handed over and not yet written. */
    long pending() {
        return pending.get();
    }

    /** Completes once every append so far is on disk, or failed ({@link #failure()}). */
    CompletableFuture<Void> written() {
        return tail;
    }

    /** Why a write failed, or null. */
    IOException failure() {
        return failure;
    }

    long size() {
        return size;
    }

    FileChannel channel() {
        return file;
    }

    Executor io() {
        return io;
    }

    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        budget.free(size);
        // after the writes handed over, which see it closed and write no more: a write is never cut off mid-way
        tail.whenComplete((v, e) -> {
            try {
                file.close();
            } catch (IOException ignored) {
                // the file is unlinked: closing is all that frees it, and it is closed now whatever the error
            }
        });
    }
}
