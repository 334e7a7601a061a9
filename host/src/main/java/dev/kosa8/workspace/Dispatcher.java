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
 * <p>Replies to changes are ordered against the notices of a cached folder ({@link FolderNotices}): a
 * request that may change the folder ({@link #changes}) is served and answered holding {@link #order}'s
 * read lock, and notices are read from the folder and sent holding its write lock ({@link #exclusively}).
 * So a change whose reply the guest receives before a notice was made before the notice's attributes were
 * read, and one whose reply comes after, after: the guest's module does not apply to a file a notice that
 * came before the reply to one of its own changes of that file.
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
            if (changes(framed.request())) {
                order.readLock().lock();
                try {
                    serveAndSend(tag, framed.request(), out);
                } finally {
                    order.readLock().unlock();
                }
            } else {
                serveAndSend(tag, framed.request(), out);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (RuntimeException e) {
            internalError(e, tag, out);
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

    /** Serves a request and sends its reply, or EIO where serving it failed on a bug. */
    private void serveAndSend(int tag, P9Request request, ByteBuffer out) {
        try {
            ops.serve(tag, request, out);
        } catch (RuntimeException e) {
            internalError(e, tag, out);
            return;
        }
        send(out);
    }

    /** A bug must not take the server down: answers EIO and says so in the log. */
    private void internalError(RuntimeException e, int tag, ByteBuffer out) {
        log.accept("internal error serving a request: " + e);
        if (out != null && tag >= 0) {
            out.clear().limit(ops.msize());
            P9Codec.encodeReply(tag, new P9Reply.Lerror(ErrnoException.EIO), out);
            send(out);
        }
    }

    /**
     * Whether a request may change what a notice would show (a file's content or attributes, a name): only
     * those are ordered against notices. Reads, listings, walks and attribute reads are not, so a notice
     * never waits behind a slow read, nor a read behind a notice.
     */
    static boolean changes(P9Request request) {
        return switch (request) {
            case P9Request.Write w -> true;
            case P9Request.Setattr s -> true;
            case P9Request.Lopen o -> true; // a truncating open changes the file; a read-only one comes quietly
            case P9Request.Lcreate c -> true;
            case P9Request.Mkdir m -> true;
            case P9Request.Symlink s -> true;
            case P9Request.Mknod m -> true;
            case P9Request.Link l -> true;
            case P9Request.Rename r -> true;
            case P9Request.RenameAt r -> true;
            case P9Request.UnlinkAt u -> true;
            case P9Request.Remove r -> true;
            case P9Request.XattrCreate x -> true;
            default -> false;
        };
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
        try {
            order.writeLock().lockInterruptibly(); // the server's close interrupts the notices' thread
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return;
        }
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
