package dev.kosa8.files;

import dev.kosa8.protocol.Limits;
import dev.kosa8.protocol.Message;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;

/**
 * Whole-file reads and writes over the agent's {@link Message.GetFile} and {@link Message.PutFile} channels, the
 * ones {@code kosa8 cp} uses, within the protocol's flow control: a write sends no more than the guest has credited,
 * a read credits only what it has passed on, so neither holds more than one window.
 */
final class FileTransfer {
    private FileTransfer() {
    }

    static void put(FileGuest guest, String path, WriteOptions options, InputStream content, Duration timeout) {
        Semaphore window = new Semaphore(Limits.INITIAL_WINDOW);
        CompletableFuture<Void> done = new CompletableFuture<>();
        int channel = guest.open(m -> {
            switch (m) {
                case Message.Credit c -> window.release(c.bytes());
                case Message.Exited x -> done.complete(null);
                case Message.Failed f -> done.completeExceptionally(new FileOpException(f.code(), f.message()));
                default -> { }
            }
        });
        guest.send(new Message.PutFile(channel, path, options.mode(), options.user()));
        try {
            byte[] buf = new byte[Limits.MAX_DATA];
            int n;
            while ((n = content.readNBytes(buf, 0, buf.length)) > 0) {
                while (!window.tryAcquire(n, 100, TimeUnit.MILLISECONDS)) {
                    if (done.isDone()) {
                        await(done, guest, channel, timeout);
                        throw new FileOpException(Message.ErrorCode.INTERNAL, "the guest ended the write early");
                    }
                }
                guest.send(new Message.Data(channel, Message.Stream.STDIN, java.util.Arrays.copyOf(buf, n)));
                if (n < buf.length) {
                    break;
                }
            }
            guest.send(new Message.Eof(channel, Message.Stream.STDIN));
        } catch (IOException e) {
            guest.abandon(channel);
            throw new FileOpException(Message.ErrorCode.INVALID, "reading what to write failed: " + e.getMessage());
        } catch (InterruptedException e) {
            guest.abandon(channel);
            Thread.currentThread().interrupt();
            throw new FileOpException(Message.ErrorCode.INTERNAL, "interrupted");
        }
        await(done, guest, channel, timeout);
    }

    private static void await(CompletableFuture<?> done, FileGuest guest, int channel, Duration timeout) {
        try {
            done.get(timeout.toMillis(), TimeUnit.MILLISECONDS);
        } catch (java.util.concurrent.TimeoutException e) {
            guest.abandon(channel);
            throw new FileOpException(Message.ErrorCode.RESOURCES, "the guest did not finish within "
                    + timeout.toSeconds() + " s");
        } catch (java.util.concurrent.ExecutionException e) {
            throw (RuntimeException) e.getCause();
        } catch (InterruptedException e) {
            guest.abandon(channel);
            Thread.currentThread().interrupt();
            throw new FileOpException(Message.ErrorCode.INTERNAL, "interrupted");
        }
    }

    /** What the reader thread hands the caller: Data, FileInfo, or the end (Exited, Failed). */
    static long get(FileGuest guest, String path, OutputStream out, long maxBytes, Duration timeout) {
        LinkedBlockingQueue<Message> queue = new LinkedBlockingQueue<>();
        int channel = guest.open(queue::add);
        guest.send(new Message.GetFile(channel, path));
        long written = 0;
        long deadline = System.nanoTime() + timeout.toNanos();
        try {
            while (true) {
                Message m = queue.poll(Math.max(1, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
                if (m == null) {
                    guest.abandon(channel);
                    throw new FileOpException(Message.ErrorCode.RESOURCES, "reading " + path
                            + " did not finish within " + timeout.toSeconds() + " s");
                }
                switch (m) {
                    case Message.FileInfo i -> {
                        if (i.size() > maxBytes) {
                            guest.abandon(channel);
                            throw tooBig(path, i.size(), maxBytes);
                        }
                    }
                    case Message.Data d -> {
                        written += d.bytes().length;
                        if (written > maxBytes) {
                            guest.abandon(channel);
                            throw tooBig(path, written, maxBytes);
                        }
                        out.write(d.bytes());
                        guest.send(new Message.Credit(channel, d.stream(), d.bytes().length));
                    }
                    case Message.Exited x -> {
                        return written;
                    }
                    case Message.Failed f -> throw new FileOpException(f.code(), f.message());
                    default -> { }
                }
            }
        } catch (IOException e) {
            guest.abandon(channel);
            throw new FileOpException(Message.ErrorCode.INTERNAL, "passing " + path + " on failed: " + e.getMessage());
        } catch (InterruptedException e) {
            guest.abandon(channel);
            Thread.currentThread().interrupt();
            throw new FileOpException(Message.ErrorCode.INTERNAL, "interrupted");
        }
    }

    private static FileOpException tooBig(String path, long size, long max) {
        return new FileOpException(Message.ErrorCode.LIMIT, path + " is " + size + " bytes, more than the "
                + max + " this read takes");
    }
}
