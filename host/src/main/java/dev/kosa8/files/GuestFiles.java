package dev.kosa8.files;

import dev.kosa8.protocol.FileOp;
import dev.kosa8.protocol.FileStat;
import dev.kosa8.protocol.Message;
import java.io.InputStream;
import java.io.OutputStream;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * File operations in sandboxes' guests, run by their agents (docs/api.md, "Files"): stat, list, mkdir -p, remove,
 * rename, whole-file read and write, and watches. Every path is checked first ({@link FilePaths}); every failure is
 * a {@link FileOpException} with an errno-like code. The agent runs each as root; a {@code user} given owns what is
 * made (directories, written files). Watches are kept here per sandbox, within {@link FileLimits}.
 */
public final class GuestFiles implements AutoCloseable {
    private final FileLimits limits;
    private final Map<String, Map<String, FileWatch>> watches = new ConcurrentHashMap<>();
    private final AtomicLong watchIds = new AtomicLong();

    public GuestFiles(FileLimits limits) {
        this.limits = limits;
    }

    public FileLimits limits() {
        return limits;
    }

    /** What {@code path} is; {@code follow}: a symbolic link's target rather than the link. */
    public FileStat stat(FileGuest guest, String path, boolean follow) {
        return FileCall.run(guest, "", new FileOp.Stat(FilePaths.check(path), follow), 1, limits.timeout()).getFirst();
    }

    /**
     * The entries of a directory down to {@code depth} levels (1: its own), at most {@code maxEntries} (capped by
     * {@link FileLimits#listEntries}); a listing with more says it was truncated.
     */
    public Listing list(FileGuest guest, String path, int depth, int maxEntries) {
        if (depth < 1 || depth > FileOp.MAX_DEPTH) {
            throw new FileOpException(Message.ErrorCode.INVALID, "depth " + depth + " is out of range 1.."
                    + FileOp.MAX_DEPTH);
        }
        int max = Math.max(1, Math.min(maxEntries, limits.listEntries()));
        List<FileStat> got = FileCall.run(guest, "", new FileOp.ListDir(FilePaths.check(path), depth, max + 1),
                max + 1, limits.timeout());
        return got.size() > max ? new Listing(got.subList(0, max), true) : new Listing(got, false);
    }

    /**
     * Makes a directory and its missing parents, owned by {@code user} (empty: root), mode 0755; with
     * {@code existOk} false a directory already there is an {@code EXISTS} failure. Returns the directory's stat.
     */
    public FileStat makeDir(FileGuest guest, String path, String user, boolean existOk) {
        return FileCall.run(guest, user(user), new FileOp.MakeDir(FilePaths.check(path), 0755, existOk), 1,
                limits.timeout()).getFirst();
    }

    /** Removes a file, link or empty directory; {@code recursive}: a directory with all in it. */
    public void remove(FileGuest guest, String path, boolean recursive) {
        FileCall.run(guest, "", new FileOp.Remove(FilePaths.check(path), recursive), 0, limits.timeout());
    }

    /** Renames (moves) {@code from} to {@code to}, replacing a file there only with {@code replace}; its new stat. */
    public FileStat rename(FileGuest guest, String from, String to, boolean replace) {
        return FileCall.run(guest, "", new FileOp.Rename(FilePaths.check(from), FilePaths.check(to), replace), 1,
                limits.timeout()).getFirst();
    }

    /**
     * Writes a whole file from {@code content} (to a temporary name beside it, renamed over it once all is there,
     * as {@code kosa8 cp} does) and returns its stat.
     */
    public FileStat write(FileGuest guest, String path, InputStream content, WriteOptions options) {
        FilePaths.check(path);
        String parent = path.substring(0, Math.max(1, path.lastIndexOf('/')));
        if (options.makeParents() && !parent.equals("/")) {
            makeDir(guest, parent, options.user(), true);
        }
        user(options.user());
        FileTransfer.put(guest, path, options, content, limits.timeout());
        return stat(guest, path, false);
    }

    /**
     * Streams a whole regular file to {@code out}; a file of more than {@code maxBytes} is a {@code LIMIT} failure
     * (found before any byte is written, unless it grows while read). Returns the bytes written.
     */
    public long read(FileGuest guest, String path, OutputStream out, long maxBytes) {
        return FileTransfer.get(guest, FilePaths.check(path), out, maxBytes, limits.timeout());
    }

    /**
     * Starts a watch on a directory (and with {@code recursive}, everything beneath it); returns once the guest
     * has it in place, so a change made after this returns is seen. At most {@link FileLimits#watches} per sandbox.
     */
    public FileWatch watch(String sandbox, FileGuest guest, String path, boolean recursive) {
        FilePaths.check(path);
        Map<String, FileWatch> table = watches.computeIfAbsent(sandbox, k -> new ConcurrentHashMap<>());
        FileWatch w;
        synchronized (table) {
            table.values().removeIf(x -> x.ended() && x.pending() == 0);
            if (table.size() >= limits.watches()) {
                throw new FileOpException(Message.ErrorCode.LIMIT, "the sandbox has " + table.size()
                        + " watches open, its bound; remove one first");
            }
            w = new FileWatch("w" + watchIds.incrementAndGet(), path, recursive, limits.pendingEvents());
            table.put(w.id(), w);
        }
        CompletableFuture<Void> started = new CompletableFuture<>();
        int channel = guest.open(m -> {
            if (m instanceof Message.Started) {
                started.complete(null);
                return;
            }
            if (m instanceof Message.Failed f) {
                started.completeExceptionally(new FileOpException(f.code(), f.message()));
            } else if (m instanceof Message.Exited) {
                started.complete(null);
            }
            w.accept(m);
        });
        w.onClose(() -> guest.abandon(channel));
        guest.send(new Message.FileRequest(channel, "", new FileOp.Watch(path, recursive)));
        try {
            started.get(limits.timeout().toMillis(), TimeUnit.MILLISECONDS);
            return w;
        } catch (java.util.concurrent.ExecutionException e) {
            table.remove(w.id());
            throw (RuntimeException) e.getCause();
        } catch (java.util.concurrent.TimeoutException | InterruptedException e) {
            w.close();
            table.remove(w.id());
            throw new FileOpException(Message.ErrorCode.RESOURCES, "the guest did not start watching " + path);
        }
    }

    /** A sandbox's watch by id; {@code NOT_FOUND} when there is none (removed, or ended and drained). */
    public FileWatch watch(String sandbox, String id) {
        FileWatch w = watches.getOrDefault(sandbox, Map.of()).get(id);
        if (w == null) {
            throw new FileOpException(Message.ErrorCode.NOT_FOUND, "no watch " + id + " in this sandbox");
        }
        return w;
    }

    /** A sandbox's watches, ended ones not yet drained included. */
    public List<FileWatch> watches(String sandbox) {
        return List.copyOf(watches.getOrDefault(sandbox, Map.of()).values());
    }

    /**
     * Takes a watch's events ({@link FileWatch#poll}); a watch that has ended and been drained is forgotten, so
     * its id then answers {@code NOT_FOUND}.
     */
    public WatchBatch poll(String sandbox, String id, int max, Duration wait) throws InterruptedException {
        FileWatch w = watch(sandbox, id);
        WatchBatch b = w.poll(max, wait);
        if (b.ended()) {
            watches.getOrDefault(sandbox, Map.of()).remove(id);
        }
        return b;
    }

    /** Ends and forgets a watch. */
    public void unwatch(String sandbox, String id) {
        FileWatch w = watch(sandbox, id);
        w.close();
        watches.getOrDefault(sandbox, Map.of()).remove(id);
    }

    /** The sandbox is gone, or its machine: its watches end. */
    public void forget(String sandbox) {
        Map<String, FileWatch> table = watches.remove(sandbox);
        if (table != null) {
            table.values().forEach(FileWatch::close);
        }
    }

    @Override
    public void close() {
        List.copyOf(watches.keySet()).forEach(this::forget);
    }

    private static String user(String user) {
        return FilePaths.checkUser(user);
    }
}
