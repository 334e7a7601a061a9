package dev.kosa8.files;

import dev.kosa8.protocol.FileOp;
import dev.kosa8.protocol.FileStat;
import dev.kosa8.protocol.Message;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * One {@link Message.FileRequest} and its answer: the stats the agent sends, at most {@code maxEntries} of them (a
 * guest that sends more breaks off the call, so what it can make the daemon keep is what was asked for), then its
 * Exited or Failed.
 */
final class FileCall {
    private FileCall() {
    }

    static List<FileStat> run(FileGuest guest, String user, FileOp op, int maxEntries, Duration timeout) {
        List<FileStat> entries = new ArrayList<>();
        CompletableFuture<List<FileStat>> done = new CompletableFuture<>();
        int channel = guest.open(m -> {
            switch (m) {
                case Message.FileEntries f -> {
                    synchronized (entries) {
                        if (entries.size() + f.entries().size() > maxEntries) {
                            done.completeExceptionally(new FileOpException(Message.ErrorCode.INTERNAL,
                                    "the guest sent more entries than the " + maxEntries + " asked for"));
                        } else {
                            entries.addAll(f.entries());
                        }
                    }
                }
                case Message.Exited x -> {
                    synchronized (entries) {
                        done.complete(List.copyOf(entries));
                    }
                }
                case Message.Failed f -> done.completeExceptionally(new FileOpException(f.code(), f.message()));
                default -> { }
            }
        });
        guest.send(new Message.FileRequest(channel, user, op));
        try {
            return done.get(timeout.toMillis(), TimeUnit.MILLISECONDS);
        } catch (TimeoutException e) {
            guest.abandon(channel);
            throw new FileOpException(Message.ErrorCode.RESOURCES, "the guest did not finish "
                    + describe(op) + " within " + timeout.toSeconds() + " s");
        } catch (ExecutionException e) {
            guest.abandon(channel);
            throw (RuntimeException) e.getCause();
        } catch (InterruptedException e) {
            guest.abandon(channel);
            Thread.currentThread().interrupt();
            throw new FileOpException(Message.ErrorCode.INTERNAL, "interrupted");
        }
    }

    static String describe(FileOp op) {
        return switch (op) {
            case FileOp.Stat s -> "stat of " + s.path();
            case FileOp.ListDir l -> "listing of " + l.path();
            case FileOp.MakeDir m -> "mkdir of " + m.path();
            case FileOp.Remove r -> "removal of " + r.path();
            case FileOp.Rename r -> "rename of " + r.from();
            case FileOp.Watch w -> "watch of " + w.path();
        };
    }
}
