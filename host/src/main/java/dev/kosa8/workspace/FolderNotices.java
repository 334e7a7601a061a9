package dev.kosa8.workspace;

import dev.kosa8.protocol.Ws9p;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.function.Consumer;
import java.util.function.Function;
import java.util.function.Predicate;
import java.util.function.ToLongFunction;

/**
 * Keeps a guest's cache of the folder true to the host: once the guest's mount says it caches
 * ({@code Tcache}, {@link Ws9p}), a thread watches the folder ({@link FolderWatch}) and sends the
 * names that changed as {@code Rnotice}s, a few milliseconds' worth at a time, each with what is
 * there now as the guest would see it (a Tgetattr's attributes, the held layer's where a path is
 * held, or nothing); the guest's module brings its cache up to date with them (docs/workspace.md,
 * "Caching in the guest"). Where not every directory
 * can be watched, everything is dropped every {@link #FALLBACK_MILLIS} instead, and
 * {@link #state()} says so.
 *
 * <p>Before a command the agent starts, the module asks for a sync ({@code Tsync}): every change
 * seen so far is sent at once, then an {@code Rsync}, so the command sees every change the host made
 * before it was asked for.
 *
 * <p>The guest asks once per mount; a server restored under a guest that cached (a rewind, a fork,
 * a resume) starts again with everything dropped: the folder may have changed while nobody watched.
 */
final class FolderNotices implements AutoCloseable {
    /** Where notices go, and their order against the server's replies. */
    @FunctionalInterface
    interface Line {
        /**
         * Runs {@code batch}, which reads the folder and writes whole notices to the sink it is given, with
         * no request of the guest's served meanwhile: each reply sent before the notices was served before
         * their attributes were read, each one after, after. The guest's module relies on it: a notice it
         * received before the reply to one of its own changes of a file may show the file as it was before
         * that change, and is not applied to it.
         */
        void exclusively(Consumer<Consumer<ByteBuffer>> batch);
    }

    /** How long events are gathered into one notice: a save or a checkout is one notice, not hundreds. */
    static final int GATHER_MILLIS = 5;
    /** With not every directory watched, the guest drops everything this often. */
    static final int FALLBACK_MILLIS = 1000;
    /** The most syncs waiting for an answer: the guest asks one before each command; more are dropped. */
    static final int MAX_SYNCS = 64;
    /** The most names whose attributes are read, and notices sent, while the guest's changes wait. */
    static final int NAMES_AT_ONCE = 256;

    private final int rootFd;
    private final ToLongFunction<LinuxFs.Stat> qidPath;
    /** What a Tgetattr of a path answers now, or null where there is nothing. */
    private final Function<String, P9Reply.Getattr> attributes;
    /** Whether a file is just as the guest's own last change left it: its echo is not sent ({@link GuestChanges}). */
    private final Predicate<P9Reply.Getattr> guestsOwn;
    /** Run once, as the watch starts: the server notes the guest's changes from then on. */
    private final Runnable onStart;
    private final Line send;
    private final Consumer<String> log;
    private final int maxDirectories;
    private Thread thread;
    /** The watch, once the thread has set it; woken for a sync. */
    private volatile FolderWatch watch;
    /** Syncs the guest asked for and the thread has not answered yet. */
    private final java.util.concurrent.ConcurrentLinkedQueue<Integer> syncs =
            new java.util.concurrent.ConcurrentLinkedQueue<>();
    /** Paths the daemon changed in the guest's view (held changes accepted or rejected), not yet sent. */
    private final java.util.concurrent.ConcurrentLinkedQueue<String> toldPaths =
            new java.util.concurrent.ConcurrentLinkedQueue<>();
    private volatile boolean closed;
    private volatile String state = "not cached: the guest's mount does not cache";

    /**
     * @param attributes what a Tgetattr of a path (in the server's form) answers now, or null where there is nothing
     * @param send       where notices go (each buffer's position at its end), ordered against the server's replies
     */
    FolderNotices(int rootFd, ToLongFunction<LinuxFs.Stat> qidPath, Function<String, P9Reply.Getattr> attributes,
                  Predicate<P9Reply.Getattr> guestsOwn, Runnable onStart, Line send,
                  Consumer<String> log) {
        this(rootFd, qidPath, attributes, guestsOwn, onStart, send, log, FolderWatch.MAX_DIRECTORIES);
    }

    /** As above, watching at most {@code maxDirectories} directories (tests take a small number). */
    FolderNotices(int rootFd, ToLongFunction<LinuxFs.Stat> qidPath, Function<String, P9Reply.Getattr> attributes,
                  Predicate<P9Reply.Getattr> guestsOwn, Runnable onStart, Line send,
                  Consumer<String> log, int maxDirectories) {
        this.guestsOwn = guestsOwn;
        this.onStart = onStart;
        this.maxDirectories = maxDirectories;
        this.attributes = attributes;
        this.rootFd = rootFd;
        this.qidPath = qidPath;
        this.send = send;
        this.log = log;
    }

    /** The guest caches: starts watching, once. */
    synchronized void start() {
        if (thread != null || closed) {
            return;
        }
        onStart.run();
        thread = new Thread(this::run, "ws9p-notices");
        thread.setDaemon(true);
        thread.start();
    }

    synchronized boolean started() {
        return thread != null;
    }

    /**
     * The guest's Tsync {@code seq}: the thread sends every change seen so far, then the Rsync; a server
     * that does not watch answers it at once (nothing is told, so nothing is waited for).
     */
    void sync(int seq) {
        if (!started()) {
            send.exclusively(sink -> sink.accept(NoticeCodec.rsync(seq)));
            return;
        }
        if (closed || syncs.size() >= MAX_SYNCS) {
            return; // a guest that asks faster than it reads is not answered: its module stops waiting after a second
        }
        syncs.add(seq);
        FolderWatch w = watch;
        if (w != null) {
            w.wake();
        }
    }

    /**
     * The daemon changed what the guest sees at {@code paths} (in the server's form) without a change in the
     * folder that the watch would see: the held layer's accept or reject. Sent as notices of those names, with
     * what is there now, echo or not; ignored while the guest does not cache.
     */
    void told(Collection<String> paths) {
        if (!started() || closed) {
            return;
        }
        toldPaths.addAll(paths);
        FolderWatch w = watch;
        if (w != null) {
            w.wake();
        }
    }

    /** The names of the paths told since the last call; "everything" for one whose directory cannot be looked at. */
    private Set<FolderWatch.Name> takeTold() {
        Set<FolderWatch.Name> names = new LinkedHashSet<>();
        for (String p; (p = toldPaths.poll()) != null; ) {
            String dir = Fid.parent(p);
            P9Reply.Getattr d = p.isEmpty() ? null : attributes.apply(dir);
            names.add(d == null ? FolderWatch.EVERYTHING : new FolderWatch.Name(d.qid().path(), dir, Fid.lastName(p)));
        }
        return names;
    }

    /** Answers the syncs asked for before now: after what was sent before it, every change seen before it. */
    private void answer(List<Integer> due) {
        if (!due.isEmpty()) {
            send.exclusively(sink -> due.forEach(seq -> sink.accept(NoticeCodec.rsync(seq))));
        }
    }

    private List<Integer> takeSyncs() {
        List<Integer> due = new ArrayList<>();
        for (Integer s; (s = syncs.poll()) != null; ) {
            due.add(s);
        }
        return due;
    }

    /** How the guest's cache is kept true, for {@code kosa8 inspect}. */
    String state() {
        return state;
    }

    private void run() {
        FolderWatch watch;
        try {
            watch = FolderWatch.open(rootFd, qidPath, maxDirectories, () -> closed);
        } catch (ErrnoException | RuntimeException e) {
            state = "cached, dropped every " + FALLBACK_MILLIS + " ms: cannot watch the folder (" + e.getMessage()
                    + ")";
            log.accept("the guest's cache of the folder is " + state);
            fallback();
            return;
        }
        this.watch = watch;
        try {
            // the guest may have cached before the last watch was set: it starts afresh
            sendAll(List.of(FolderWatch.EVERYTHING));
            if (!watch.complete()) {
                state = "cached, dropped every " + FALLBACK_MILLIS + " ms: " + watch.incomplete();
                log.accept("the guest's cache of the folder is " + state);
            } else {
                state = "cached, kept true by watching " + watch.directories() + " directories";
            }
            long lastAll = System.nanoTime();
            while (!closed) {
                Set<FolderWatch.Name> names = new LinkedHashSet<>(
                        watch.poll(syncs.isEmpty() && toldPaths.isEmpty() ? 250 : 0));
                Set<FolderWatch.Name> told = takeTold();
                names.addAll(told);
                // syncs asked for by now are answered after every event queued by now: read to the end at once
                List<Integer> due = takeSyncs();
                if (!due.isEmpty()) {
                    for (List<FolderWatch.Name> more; !(more = watch.poll(0)).isEmpty(); ) {
                        names.addAll(more);
                    }
                } else if (!names.isEmpty()) {
                    long until = System.nanoTime() + GATHER_MILLIS * 1_000_000L;
                    int left;
                    while ((left = (int) ((until - System.nanoTime()) / 1_000_000L)) > 0 && !closed) {
                        names.addAll(watch.poll(left));
                    }
                }
                if (!watch.complete() && (!due.isEmpty() || System.nanoTime() - lastAll > FALLBACK_MILLIS * 1_000_000L)) {
                    names.add(FolderWatch.EVERYTHING);
                    lastAll = System.nanoTime();
                }
                if (!names.isEmpty()) {
                    sendAll(names, told);
                }
                answer(due);
            }
        } catch (ErrnoException | RuntimeException e) {
            state = "cached, dropped every " + FALLBACK_MILLIS + " ms: the folder's watch failed (" + e.getMessage()
                    + ")";
            log.accept("the guest's cache of the folder is " + state);
            this.watch = null;
            watch.close();
            fallback();
            return;
        }
        this.watch = null;
        watch.close();
    }

    /** Without a watch: everything, every second, and before each sync's answer. */
    private void fallback() {
        long lastAll = 0;
        while (!closed) {
            List<Integer> due = takeSyncs();
            boolean told = !takeTold().isEmpty();
            if (told || !due.isEmpty() || System.nanoTime() - lastAll >= FALLBACK_MILLIS * 1_000_000L) {
                sendAll(List.of(FolderWatch.EVERYTHING));
                lastAll = System.nanoTime();
            }
            answer(due);
            try {
                Thread.sleep(10);
            } catch (InterruptedException e) {
                return;
            }
        }
    }

    private void sendAll(Collection<FolderWatch.Name> names) {
        sendAll(names, Set.of());
    }

    /** Notices of {@code names}; those in {@code told} are sent even where they look like the guest's own change. */
    private void sendAll(Collection<FolderWatch.Name> names, Set<FolderWatch.Name> told) {
        List<FolderWatch.Name> all = List.copyOf(names);
        // a few hundred names at a time: the guest's changes wait while the host's are read, not for a checkout's
        for (int from = 0; from < all.size() && !closed; from += NAMES_AT_ONCE) {
            List<FolderWatch.Name> some = all.subList(from, Math.min(all.size(), from + NAMES_AT_ONCE));
            send.exclusively(sink -> {
                for (ByteBuffer b : NoticeCodec.encode(some, n -> {
                    P9Reply.Getattr now = attributes.apply(n.path());
                    return now != null && !told.contains(n) && guestsOwn.test(now) ? NoticeCodec.ECHO : now;
                }, NoticeCodec.MAX_NOTICE)) {
                    if (closed) {
                        return;
                    }
                    sink.accept(b);
                }
            });
        }
    }

    /** Stops watching; false if the thread did not stop within 5 s (it may still resolve paths from the root). */
    boolean stop() {
        closed = true;
        Thread t;
        synchronized (this) {
            t = thread;
        }
        FolderWatch w = watch;
        if (w != null) {
            w.wake();
        }
        if (t != null) {
            t.interrupt();
            try {
                t.join(5000);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            return !t.isAlive();
        }
        return true;
    }

    @Override
    public void close() {
        stop();
    }
}
