package dev.kosa8.agent;

import dev.kosa8.protocol.FileOp;
import dev.kosa8.protocol.FileStat;
import dev.kosa8.protocol.Limits;
import dev.kosa8.protocol.Message;
import dev.kosa8.protocol.WatchEvent;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A {@link Message.FileRequest} on its channel: the operation runs on a thread of its own (a watch on a platform
 * thread, since it blocks in poll(2)), its answer sent as {@link FileOp} says, its failure as Failed with the
 * operation's code. A Signal or the host's going stops it: a listing or a recursive remove where it is, a watch at
 * its next poll. At most {@link #MAX_WATCHES} watches at once, whatever the host asks.
 */
final class FileOpChannel implements Channel {
    /** Watches at once in this agent: each is an inotify instance and a thread. */
    static final int MAX_WATCHES = 64;
    /** Directories one recursive watch watches; events beneath the rest are reported lost (OVERFLOW). */
    static final int MAX_WATCHED_DIRS = 8192;
    /** A batch's bytes on the wire, well inside a frame. */
    static final int BATCH_BYTES = 128 * 1024;

    private static final AtomicInteger WATCHES = new AtomicInteger();

    private final int channel;
    private final Outbox outbox;
    private volatile boolean stopped;

    private FileOpChannel(int channel, Outbox outbox) {
        this.channel = channel;
        this.outbox = outbox;
    }

    static FileOpChannel start(Message.FileRequest req, Outbox outbox) {
        FileOpChannel c = new FileOpChannel(req.channel(), outbox);
        if (req.op() instanceof FileOp.Watch w) {
            if (WATCHES.incrementAndGet() > MAX_WATCHES) {
                WATCHES.decrementAndGet();
                outbox.send(new Message.Failed(req.channel(), Message.ErrorCode.LIMIT, "the guest has "
                        + MAX_WATCHES + " watches open, its bound"));
                return null;
            }
            Thread.ofPlatform().daemon().name("watch-" + req.channel()).start(() -> c.watch(w));
        } else {
            Thread.ofVirtual().name("file-" + req.channel()).start(() -> c.run(req));
        }
        return c;
    }

    private void run(Message.FileRequest req) {
        try {
            FileOps ops = new FileOps(GuestUsers.guest());
            switch (req.op()) {
                case FileOp.Stat s -> send(List.of(ops.stat(s.path(), s.follow())));
                case FileOp.ListDir l -> {
                    Batches<FileStat> b = new Batches<>(e -> e.path().length() + e.symlinkTarget().length()
                            + e.owner().length() + e.group().length() + 64, this::send);
                    ops.list(l, b::add, () -> stopped);
                    b.flush();
                }
                case FileOp.MakeDir m -> send(List.of(ops.makeDir(m, req.user())));
                case FileOp.Remove r -> ops.remove(r, () -> stopped);
                case FileOp.Rename r -> send(List.of(ops.rename(r)));
                case FileOp.Watch w -> throw new IllegalStateException("a watch runs on its own thread");
            }
            outbox.send(new Message.Exited(channel, 0, 0));
        } catch (FileOps.Failure f) {
            outbox.send(new Message.Failed(channel, f.code, Limits.fit(f.getMessage())));
        } catch (RuntimeException e) {
            outbox.send(new Message.Failed(channel, Message.ErrorCode.INTERNAL, Limits.fit(String.valueOf(e))));
        } finally {
            outbox.done(channel);
        }
    }

    private void send(List<FileStat> entries) {
        outbox.send(new Message.FileEntries(channel, entries));
    }

    private void watch(FileOp.Watch op) {
        try (DirWatch w = new DirWatch(op, MAX_WATCHED_DIRS)) {
            outbox.send(new Message.Started(channel, 0));
            w.run(events -> {
                Batches<WatchEvent> b = new Batches<>(e -> e.path().length() + 8,
                        list -> outbox.send(new Message.WatchEvents(channel, list)));
                events.forEach(b::add);
                b.flush();
            }, () -> stopped);
            outbox.send(new Message.Exited(channel, 0, 0));
        } catch (FileOps.Failure f) {
            outbox.send(new Message.Failed(channel, f.code, Limits.fit(f.getMessage())));
        } catch (PosixException e) {
            outbox.send(new Message.Failed(channel, Message.ErrorCode.LIMIT, Limits.fit("cannot watch " + op.path()
                    + ": " + e.getMessage())));
        } catch (RuntimeException e) {
            outbox.send(new Message.Failed(channel, Message.ErrorCode.INTERNAL, Limits.fit(String.valueOf(e))));
        } finally {
            WATCHES.decrementAndGet();
            outbox.done(channel);
        }
    }

    /** Items sent in messages of at most {@link #BATCH_BYTES} (by a generous estimate: UTF-8 is up to 3 bytes). */
    private static final class Batches<T> {
        private final java.util.function.ToIntFunction<T> size;
        private final java.util.function.Consumer<List<T>> send;
        private List<T> items = new ArrayList<>();
        private long bytes;

        Batches(java.util.function.ToIntFunction<T> size, java.util.function.Consumer<List<T>> send) {
            this.size = size;
            this.send = send;
        }

        void add(T item) {
            int n = size.applyAsInt(item) * 3;
            if (bytes + n > BATCH_BYTES) {
                flush();
            }
            items.add(item);
            bytes += n;
        }

        void flush() {
            if (!items.isEmpty()) {
                send.accept(items);
                items = new ArrayList<>();
                bytes = 0;
            }
        }
    }

    @Override
    public void onData(byte[] bytes) {
        throw new dev.kosa8.protocol.ProtocolException("data sent to a file operation");
    }

    @Override
    public void onEof() {
        // nothing to read
    }

    @Override
    public void onCredit(Message.Stream stream, int bytes) {
        throw new dev.kosa8.protocol.ProtocolException("credit sent to a file operation");
    }

    @Override
    public void onSignal(int signal) {
        stopped = true;
    }

    @Override
    public void onResize(int rows, int columns) {
        // not a terminal
    }

    @Override
    public void hangUp() {
        stopped = true;
    }
}
