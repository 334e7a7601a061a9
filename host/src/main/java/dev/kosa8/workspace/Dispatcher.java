package dev.kosa8.workspace;

import dev.kosa8.protocol.Ws9p;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.SocketChannel;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.ReentrantLock;
import java.util.concurrent.locks.ReentrantReadWriteLock;
import java.util.function.Consumer;

/**
 * The workers of a {@link WorkspaceServer}: each request the reader ({@link PortReader}) hands over
 * is served on a pool of threads by {@link P9Operations}, and its reply written back to the guest in
 * whatever order it finishes, as 9p allows, one whole reply at a time. A Tflush is answered only
 * after the request it names, by the ticket the reader takes for every request in the order the
 * guest sent it.
 *
 * <p>Replies are ordered against the notices of a cached folder ({@link FolderNotices}): a request is
 * served and answered holding {@link #order}'s read lock, and notices are read from the folder and sent
 * holding its write lock ({@link #exclusively}). So a reply the guest receives before a notice was served
 * before the notice's attributes were read, and one received after, after: the guest's module does not
 * apply to a file a notice that came before the reply to one of its own changes of that file.
 *
 * <p>Memory stays bounded whatever the guest queues: each request holds one buffer of at most msize
 * bytes from {@link #requests()}, each reply one from a pool of its own.
 */
final class Dispatcher {
    private static final int WORKERS = 8;

    private final SocketChannel channel;
    /** Where large Rreads' data goes past the port; null when QEMU gives the guest none. */
    private final ReadWindow window;
    /** Where large Twrites' data comes past the port; null when QEMU gives the guest none. */
    private final WriteWindow writes;
    private final P9Operations ops;
    private final PauseGate gate;
    private final Consumer<String> log;
    private final ExecutorService workers;
    /** Requests: twice the workers, so the reader can read on while every worker is busy. */
    private final BufferPool requests = new BufferPool(WORKERS * 2, WorkspaceServer.MSIZE);
    private final BufferPool replies = new BufferPool(WORKERS, WorkspaceServer.MSIZE);
    private final ReentrantLock writeLock = new ReentrantLock();
    /** Read: a request being served and answered. Write: notices being read and sent. */
    private final ReentrantReadWriteLock order = new ReentrantReadWriteLock();
    private final Map<Integer, CountDownLatch> running = new ConcurrentHashMap<>();

    Dispatcher(SocketChannel channel, ReadWindow window, WriteWindow writes, P9Operations ops, PauseGate gate,
               Consumer<String> log) {
        this.channel = channel;
        this.window = window;
        this.writes = writes;
        this.ops = ops;
        this.gate = gate;
        this.log = log;
        this.workers = Executors.newFixedThreadPool(WORKERS, r -> {
            Thread t = new Thread(r, "ws9p-worker");
            t.setDaemon(true);
            return t;
        });
    }

    /** The buffers requests are read into: taken by the reader, given back here once served. */
    BufferPool requests() {
        return requests;
    }

    /**
     * What the reader notes about a request before any worker takes it.
     *
     * @param done    opened once the request has answered; null for a Tflush
     * @param flushed for a Tflush, the latch of the request it names, or null
     */
    record Ticket(CountDownLatch done, CountDownLatch flushed) {
    }

    /**
     * Notes a request in the order the guest sent it, so a Tflush waits for the reply of the
     * request it names however the workers are scheduled. A flush waits only for a request that
     * came before it and is not a flush: the workers take requests in order, so that one is
     * already being served and never waits itself; flushes cannot wait in a circle, nor for a
     * request queued behind them.
     */
    Ticket ticket(ByteBuffer request) {
        ByteBuffer le = request.duplicate().order(ByteOrder.LITTLE_ENDIAN);
        if ((le.get(4) & 0xff) == P9Codec.TFLUSH) {
            boolean hasOldTag = le.limit() >= P9Codec.HEADER + 2;
            return new Ticket(null, hasOldTag ? running.get(le.getShort(P9Codec.HEADER) & 0xffff) : null);
        }
        CountDownLatch done = new CountDownLatch(1);
        running.put(le.getShort(5) & 0xffff, done);
        return new Ticket(done, null);
    }

    /** Serves an admitted request on a worker; then its buffer goes back to {@link #requests()}, and it is done. */
    void dispatch(ByteBuffer request, Ticket ticket) {
        workers.execute(() -> {
            try {
                serveOne(request, ticket);
            } finally {
                requests.give(request);
                gate.done();
            }
        });
    }

    /** Runs {@code task} on a worker; throws {@link java.util.concurrent.RejectedExecutionException} once closing. */
    void execute(Runnable task) {
        workers.execute(task);
    }

    private void serveOne(ByteBuffer request, Ticket ticket) {
        CountDownLatch done = ticket.done();
        ByteBuffer out = null;
        int tag = -1;
        try {
            out = replies.take();
            out.clear().limit(ops.msize());
            P9Framed framed;
            try {
                if (writes != null && request.limit() > 4 && (request.get(4) & 0xff) == Ws9p.TWRITEW) {
                    writes.expand(request, ops.msize()); // now the Twrite it stands for
                }
                framed = P9Codec.decodeRequest(request, ops.msize());
            } catch (P9Exception e) {
                tag = e.tag();
                P9Codec.encodeReply(tag, new P9Reply.Lerror(e.errno()), out);
                send(out);
                return;
            }
            tag = framed.tag();
            if (framed.request() instanceof P9Request.Flush && ticket.flushed() != null) {
                // answer the flush only after the request it names has answered
                ticket.flushed().await(30, TimeUnit.SECONDS);
            }
            order.readLock().lock();
            try {
                ops.serve(tag, framed.request(), out);
                send(out);
            } finally {
                order.readLock().unlock();
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (RuntimeException e) {
            // a bug must not take the server down: answer EIO and say so in the log
            log.accept("internal error serving a request: " + e);
            if (out != null && tag >= 0) {
                out.clear().limit(ops.msize());
                P9Codec.encodeReply(tag, new P9Reply.Lerror(ErrnoException.EIO), out);
                send(out);
            }
        } finally {
            if (done != null) {
                running.values().remove(done);
                done.countDown();
            }
            if (out != null) {
                replies.give(out);
            }
        }
    }

    /** Writes a reply, from its start to its position, to the guest: whole, never interleaved with another. */
    void send(ByteBuffer out) {
        out.flip();
        if (window != null) {
            window.divert(out);
        }
        writeLock.lock();
        try {
            while (out.hasRemaining()) {
                channel.write(out);
            }
        } catch (IOException e) {
            if (!gate.closed()) {
                log.accept("cannot answer the guest: " + e.getMessage());
            }
        } finally {
            writeLock.unlock();
        }
    }

    /**
     * Runs {@code batch} with no request being served or answered meanwhile: what it reads of the folder
     * shows every request answered before it and none answered after.
     */
    void exclusively(Runnable batch) {
        order.writeLock().lock();
        try {
            batch.run();
        } finally {
            order.writeLock().unlock();
        }
    }

    /** Stops the workers, interrupting those serving: the first step of a close. */
    void shutdownNow() {
        workers.shutdownNow();
    }

    /** Whether every worker has stopped within the timeout. */
    boolean awaitTermination(long timeout, TimeUnit unit) throws InterruptedException {
        return workers.awaitTermination(timeout, unit);
    }
}
