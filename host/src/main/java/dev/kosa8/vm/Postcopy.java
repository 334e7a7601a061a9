package dev.kosa8.vm;

import java.io.IOException;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.BitSet;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Consumer;

/**
 * Loads a saved machine lazily: QEMU runs it as soon as its devices are
 * loaded, and its RAM arrives afterwards, each page the guest touches first
 * sent when QEMU asks for it and the rest behind, in the background. This is
 * QEMU's own postcopy migration with the daemon as the source, speaking the
 * stream QEMU 7.2's {@code migration/savevm.c} and {@code migration/ram.c}
 * write:
 *
 * <pre>
 * header, configuration                       (as saved)
 * 0x08 be16(1) be16(0)                        open the return path
 * 0x08 be16(3) be16(16) be64(4096) be64(4096) postcopy advise: page sizes (QEMU empties all RAM)
 * RAM's setup section                         (as saved)
 * 0x08 be16(6) be16(n) 0 s(block) 0 be64 be64 discard one page (see sendSetup)
 * 0x08 be16(7) be16(4) be32(n) package[n]:    packaged, read whole before any of it is run:
 *      0x08 be16(4) be16(0)                     listen: pages may come now (a thread of QEMU reads them)
 *      the devices' sections                    (as saved, without the end mark and description)
 *      0x08 be16(2) be16(4) be32(1)             ping: QEMU answers once the devices are loaded
 *      0x08 be16(5) be16(0)                     run
 * { 0x02 be32(id) pages be64(EOS) footer }    RAM's pages: asked-for ones first, the rest swept
 * 0x03 be32(id) be64(EOS) footer, 0x00        RAM's end, the stream's end
 * </pre>
 *
 * and reading QEMU's requests on the same socket ({@link ReturnPath}). Each
 * page is sent once: a request for a page already sent is already answered.
 * After a requested page, the next {@link #READ_AHEAD} pages of its block go
 * with it, as a guest that touches a page tends to touch the ones after.
 *
 * <p>What it costs: until the last page is sent the machine depends on the
 * daemon. If the daemon dies meanwhile, QEMU waits for pages that never
 * come; the next daemon finds a machine whose agent does not answer, and the
 * sandbox boots afresh (the checkpoint is intact). A failure to read a page
 * ends the QEMU ({@code onFailure}), as the guest cannot go on without it.
 * Needs userfaultfd on the host (Linux; root, or
 * {@code vm.unprivileged_userfaultfd=1}): {@link #supported}.
 */
public final class Postcopy {
    private static final int COMMAND = 0x08, PART = 0x02, END = 0x03, FOOTER = 0x7e, EOF = 0x00;
    private static final int OPEN_RETURN_PATH = 1, PING = 2, ADVISE = 3, LISTEN = 4, RUN = 5, DISCARD = 6, PACKAGED = 7;
    private static final long EOS = 0x10;
    private static final int PAGE = 4096;
    /** QEMU 7.2 refuses a package over 16 MiB ({@code MAX_VM_CMD_PACKAGED_SIZE}). */
    private static final int MAX_PACKAGE = 1 << 24;
    /** Pages per section of the sweep: a request waits behind at most this many (256 KiB). */
    private static final int SWEEP = 64;
    static final int READ_AHEAD = 15;
    /** The longest the sweep waits for {@link Loading#sweep} once the devices are in. */
    static final Duration SWEEP_AFTER = Duration.ofSeconds(5);
    /** The most pages a load remembers as asked for (64 MiB). */
    public static final int MAX_HOT = 16384;

    private Postcopy() {
    }

    /** QEMU refused the lazy load before the machine ran: a new QEMU can still load the state whole. */
    public static final class Refused extends IOException {
        Refused(String message, Throwable cause) {
            super(message, cause);
        }
    }

    /**
     * Whether QEMU can load lazily here: userfaultfd exists (Linux) and this
     * process may use it for a QEMU it starts (root, or the sysctl
     * {@code vm.unprivileged_userfaultfd} is 1), and the daemon was not
     * started with {@code KOSA8_LAZY_RESTORE=0}.
     */
    public static boolean supported() {
        // a host-side way out for a user whose machines load faster whole (the daemon's environment)
        return !"0".equals(System.getenv("KOSA8_LAZY_RESTORE")) && CheckpointMode.Userfaultfd.usable().usable();
    }

    /**
     * Starts loading a machine ({@code name}, for messages) into a QEMU started with {@code -S
     * -incoming defer} and returns once QEMU has loaded its devices, so that
     * the machine can be continued; its RAM goes on arriving until
     * {@link Loading#await}.
     *
     * @param pages     its pages, opened ({@link PagedMachine#openPages}); closed when done
     * @param onFailure run if a page cannot be sent once the machine may run (it ends QEMU)
     * @throws Refused     when QEMU refused or failed before the devices were loaded: its load failed, and a fresh
     *                     QEMU can load the state whole
     */
    public static Loading start(QmpClient qmp, Path socket, String name, PagedMachine.Pages pages,
                                Duration timeout, Runnable onFailure, Consumer<String> log) throws IOException {
        SocketChannel channel;
        try {
            byte[] devices = pages.devices();
            if (devices.length > MAX_PACKAGE - 64) {
                throw new Refused(name + " has " + devices.length + " bytes of device state, more than"
                        + " QEMU takes in one package", null);
            }
            try {
                Files.deleteIfExists(socket);
                qmp.execute("migrate-set-capabilities", Map.of("capabilities",
                        List.of(Map.of("capability", "postcopy-ram", "state", true))), timeout);
                MachineState.withoutAnnouncements(qmp, timeout);
                qmp.execute("migrate-incoming", Map.of("uri", "unix:" + socket), timeout);
            } catch (RuntimeException e) {
                throw new Refused("QEMU would not load lazily: " + e.getMessage(), e);
            }
            channel = SocketChannel.open(StandardProtocolFamily.UNIX);
            try {
                channel.connect(UnixDomainSocketAddress.of(socket));
                Files.deleteIfExists(socket);
            } catch (IOException e) {
                channel.close();
                throw new Refused("QEMU did not take the stream: " + e.getMessage(), e);
            }
        } catch (IOException | RuntimeException e) {
            pages.close();
            throw e;
        }
        return stream(channel, pages, name, timeout, onFailure, log,
                () -> qmp.execute("query-migrate", Map.of(), timeout).path("status").asText("").equals("failed"));
    }

    /**
     * The stream half of {@link #start}, on a connection to a QEMU that
     * listens for it: sends everything up to the pages, starts the threads
     * that answer requests and sweep, and returns once QEMU answered the
     * ping after the devices. On failure everything is closed.
     *
     * @param loadFailed asked while waiting: whether QEMU reports its load failed
     */
    public static Loading stream(SocketChannel channel, PagedMachine.Pages pages, String name, Duration timeout,
                                 Runnable onFailure, Consumer<String> log,
                                 java.util.function.BooleanSupplier loadFailed) throws IOException {
        Loading loading = new Loading(channel, pages, name, onFailure, log);
        try {
            try {
                loading.sendSetup(pages.devices());
            } catch (IOException e) {
                throw new Refused("QEMU did not take the start of the stream: " + e.getMessage(), e);
            }
            loading.begin();
            loading.awaitDevices(timeout, loadFailed);
            loading.sweepBy = System.nanoTime() + SWEEP_AFTER.toNanos();
            return loading;
        } catch (IOException | RuntimeException e) {
            loading.abort();
            throw e;
        }
    }

    /** A lazy load under way. */
    public static final class Loading {
        private final SocketChannel channel;
        private final PagedMachine.Pages pages;
        private final String name;
        private final Runnable onFailure;
        private final Consumer<String> log;
        private final StreamOutput out;
        private final BitSet sent = new BitSet();
        /**
         * Held while a section is written: by the sender, or by the reader answering a request. Fair, so that
         * an answer goes out after the section being written: the sender takes the lock again at once after each
         * section, and with a barging lock it kept it ahead of the woken reader, section after section, while
         * the guest waited for the page (answers during a wake waited up to 69 ms; fair, 10 ms at most;
         * bench/history/undo.md, run 13).
         */
        private final java.util.concurrent.locks.ReentrantLock sending =
                new java.util.concurrent.locks.ReentrantLock(true);
        /** Set once RAM's end is written: requests after it are for pages on their way. */
        private boolean ended;
        private final CompletableFuture<Void> devices = new CompletableFuture<>();
        private final CompletableFuture<Void> shut = new CompletableFuture<>();
        private final CompletableFuture<Void> done = new CompletableFuture<>();
        private final long started = System.nanoTime();
        /** Opened by {@link #sweep}: until then only pages QEMU asks for are sent. */
        private final CompletableFuture<Void> sweeping = new CompletableFuture<>();
        /** When the sweep starts even if no one opened it: the machine must not need the daemon for long. */
        private volatile long sweepBy = Long.MAX_VALUE;
        private volatile boolean aborted;
        /** The pages sent because QEMU asked for them; written under {@link #sending}. */
        private volatile int requested;
        /**
         * Set by {@link #sweep}: the restore's own steps are done. A request that arrives before is part of the
         * guest's wake (a load whose sweep started on its own, at {@link #SWEEP_AFTER}, has only such requests).
         */
        private volatile boolean stepsDone;
        /** Of {@link #requested}, those that arrived before {@link #stepsDone}; written under {@link #sending}. */
        private volatile int requestedEarly;
        /** When the last hot page was written, in ms from the start; -1 until then. */
        private volatile long hotSentMs = -1;
        private int prefetched;
        /** How far the sender is in the hot pages. */
        private int hotAt;
        /**
         * The pages asked for while the restore's own steps ran (before {@link #sweep}), in order: the next
         * load of the same store sends them first. Pages asked for after that are the guest's work, not its
         * wake: they do not delay a restore, differ from one load to the next (a workload that dirties memory
         * asks for a thousand or more) and, kept, made every later load send them beside the wake
         * (bench/history/undo.md, run 13).
         */
        private final java.util.List<Integer> asked = new ArrayList<>();
        private int readAhead;
        /** How long answers waited for the stream (written under {@link #sending}), for the log. */
        private final long[] answerWaitMax = new long[2];
        private final long[] answerWaitSum = new long[2];
        private final int[] answers = new int[2];

        private Loading(SocketChannel channel, PagedMachine.Pages pages, String name, Runnable onFailure,
                        Consumer<String> log) {
            this.channel = channel;
            this.pages = pages;
            this.name = name;
            this.onFailure = onFailure;
            this.log = log;
            this.out = new StreamOutput(channel);
        }

        private void sendSetup(byte[] devices) throws IOException {
            out.bytes(pages.header());
            command(out, OPEN_RETURN_PATH, new byte[0]);
            command(out, ADVISE, ByteBuffer.allocate(16).putLong(PAGE).putLong(PAGE).array());
            out.bytes(pages.setup());
            // one discard before listen: QEMU 7.2 empties all RAM at the advise anyway, but its listen, when no
            // discard came first, sets its postcopy state back to "discard" after "listening" (savevm.c,
            // loadvm_postcopy_handle_listen), and its listen thread then loads every page as precopy: into RAM
            // that now faults, and waits forever
            byte[] block = pages.blocks().getFirst().getBytes(java.nio.charset.StandardCharsets.ISO_8859_1);
            command(out, DISCARD, ByteBuffer.allocate(3 + block.length + 16).put((byte) 0).put((byte) block.length)
                    .put(block).put((byte) 0).putLong(0).putLong(PAGE).array());
            ByteBuffer pkg = ByteBuffer.allocate(5 + devices.length + 9 + 5);
            pkg.put((byte) COMMAND).putShort((short) LISTEN).putShort((short) 0);
            pkg.put(devices);
            pkg.put((byte) COMMAND).putShort((short) PING).putShort((short) 4).putInt(1);
            pkg.put((byte) COMMAND).putShort((short) RUN).putShort((short) 0);
            command(out, PACKAGED, ByteBuffer.allocate(4).putInt(pkg.capacity()).array());
            out.bytes(pkg.array());
            out.flush();
        }

        private static void command(StreamOutput out, int command, byte[] data) throws IOException {
            out.header(5 + data.length).put((byte) COMMAND).putShort((short) command).putShort((short) data.length)
                    .put(data);
        }

        private void begin() {
            Thread.ofPlatform().daemon().name("kosa8-postcopy-requests").start(this::readRequests);
            Thread.ofPlatform().daemon().name("kosa8-postcopy-pages").start(this::sendPages);
        }

        /** Waits for QEMU's answer to the ping after the devices; a failure before it is a {@link Refused}. */
        private void awaitDevices(Duration timeout, java.util.function.BooleanSupplier loadFailed) throws IOException {
            long deadline = System.nanoTime() + timeout.toNanos();
            while (true) {
                try {
                    // QEMU's answer ends this wait at once; asking QMP meanwhile would wait for QEMU's main loop,
                    // which is busy loading the devices
                    devices.get(250, TimeUnit.MILLISECONDS);
                    return;
                } catch (TimeoutException e) {
                    if (loadFailed.getAsBoolean()) {
                        throw new Refused("QEMU could not load the devices of " + name, null);
                    }
                    if (System.nanoTime() > deadline) {
                        throw new Refused("QEMU did not load the devices of " + name + " within "
                                + timeout.toSeconds() + " s", null);
                    }
                } catch (ExecutionException e) {
                    throw new Refused("QEMU could not load " + name + ": " + e.getCause().getMessage(), e.getCause());
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    throw new IOException("interrupted", e);
                }
            }
        }

        /** The return path: page requests (answered here), the ping's answer, the end. */
        private void readRequests() {
            String last = null;
            List<String> blocks = pages.blocks();
            try {
                while (true) {
                    ReturnPath m = ReturnPath.read(channel);
                    switch (m) {
                        case ReturnPath.Pong p -> devices.complete(null);
                        case ReturnPath.Shut s -> {
                            if (s.failed()) {
                                throw new IOException("QEMU reports that its load failed");
                            }
                            shut.complete(null);
                            return;
                        }
                        case ReturnPath.RequestPages r -> {
                            String block = r.block() != null ? r.block() : last;
                            int b = block == null ? -1 : blocks.indexOf(block);
                            if (b < 0) {
                                throw new IOException("QEMU asked for pages of an unknown RAM block " + block);
                            }
                            last = block;
                            long first = r.start() / PAGE;
                            long end = (r.start() + Math.max(r.length(), 1) + PAGE - 1) / PAGE;
                            if (r.start() < 0 || r.length() < 0 || end > pages.blockPages(b) || end - first > 512) {
                                throw new IOException("QEMU asked for pages " + first + "-" + end + " of block "
                                        + block + ", which has " + pages.blockPages(b));
                            }
                            answer(b, first, end);
                        }
                    }
                }
            } catch (IOException | RuntimeException e) {
                IOException why = e instanceof IOException io ? io : new IOException(e.toString(), e);
                devices.completeExceptionally(why);
                shut.completeExceptionally(why);
            }
        }

        /**
         * Answers a request at once, on the thread that read it (a hand-over
         * to another thread cost every page the guest waits for a wake-up):
         * the pages asked for, each with the {@link #READ_AHEAD} after it in
         * its block, those not sent yet.
         */
        private void answer(int b, long first, long end) throws IOException {
            long arrived = System.nanoTime();
            // whether the request is part of the wake is decided as it arrives: once a page is written (a stored
            // page goes straight to the socket), the restore may see it and end its steps before this goes on
            boolean early = !stepsDone;
            int phase = early ? 0 : 1;
            inSection(() -> {
                long waited = System.nanoTime() - arrived;
                answerWaitMax[phase] = Math.max(answerWaitMax[phase], waited);
                answerWaitSum[phase] += waited;
                answers[phase]++;
                boolean continues = false;
                for (long asked = first; asked < end; asked++) {
                    long stop = Math.min(pages.blockPages(b), asked + 1 + READ_AHEAD);
                    for (long p = asked; p < stop; p++) {
                        int i = pages.index(b, p);
                        if (sendOnce(i, b, p, continues)) {
                            continues = true;
                            if (p == asked) {
                                requested++;
                                if (early) {
                                    requestedEarly++;
                                    if (this.asked.size() < MAX_HOT) {
                                        this.asked.add(i);
                                    }
                                }
                            } else {
                                readAhead++;
                            }
                        }
                    }
                }
                return 0;
            });
        }

        /**
         * The pages the last load of this machine's store was asked for
         * ({@link PagedMachine.Pages#hotPages}) first, then, once allowed,
         * the sweep; then RAM's end and the stream's. Requests are answered
         * meanwhile by {@link #answer}, between two sections of this.
         */
        private void sendPages() {
            int id = pages.sectionId();
            int[] hot = pages.hotPages();
            try {
                boolean swept = false;
                while (!swept) {
                    if (aborted) {
                        throw new IOException("the load was abandoned");
                    }
                    if (hotAt < hot.length) {
                        inSection(() -> {
                            int last = -1;
                            for (int n = 0; n < SWEEP && hotAt < hot.length; hotAt++) {
                                int i = hot[hotAt];
                                int b = pages.blockOf(i);
                                if (sendOnce(i, b, i - pages.index(b, 0), last == b)) {
                                    last = b;
                                    prefetched++;
                                    n++;
                                }
                            }
                            return 0;
                        });
                        continue;
                    }
                    if (hotSentMs < 0) {
                        hotSentMs = (System.nanoTime() - started) / 1_000_000;
                    }
                    if (!sweeping.isDone() && System.nanoTime() <= sweepBy) {
                        try {
                            sweeping.get(5, TimeUnit.MILLISECONDS);
                        } catch (TimeoutException e) {
                            // look again: aborted, or past the time
                        }
                        continue;
                    }
                    swept = inSection(() -> pages.sweep(sent, SWEEP, out)) == 0;
                }
                sending.lock();
                try {
                    ended = true;
                    out.header(5).put((byte) END).putInt(id);
                    sectionEnd(id);
                    out.header(1).put((byte) EOF);
                    out.flush();
                } finally {
                    sending.unlock();
                }
                shut.get(5, TimeUnit.MINUTES);
                long ms = (System.nanoTime() - started) / 1_000_000;
                log.accept(name + " loaded lazily: all of its RAM in place after " + ms + " ms; " + prefetched
                        + " pages sent first (asked for in an earlier load, all sent after " + hotSentMs + " ms), "
                        + requested + " as the guest asked for them (" + requestedEarly
                        + " of them before the restore's steps were done), " + readAhead + " read ahead with them; "
                        + waits(0) + " before the restore's steps were done, " + waits(1) + " after");
                rememberHot(hot);
                done.complete(null);
            } catch (Exception e) {
                if (e instanceof InterruptedException) {
                    Thread.currentThread().interrupt();
                }
                if (!aborted) {
                    log.accept("the lazy load of " + name + " failed: " + e.getMessage()
                            + "; the machine cannot run without its RAM, so its QEMU is ended");
                    onFailure.run();
                }
                devices.completeExceptionally(e);
                done.completeExceptionally(e);
            } finally {
                close();
            }
        }

        /** How long the requests of {@code phase} (0: during the restore's steps, 1: after) waited for the stream. */
        private String waits(int phase) {
            return answers[phase] + " answers waited for the stream " + answerWaitSum[phase] / 1_000_000
                    + " ms in all, " + String.format(java.util.Locale.ROOT, "%.1f", answerWaitMax[phase] / 1e6)
                    + " ms at most";
        }

        /**
         * Keeps the pages asked for in an earlier load and in this one's wake
         * ({@link #asked}) for the next: a guest restored from the same store touches much the same
         * pages first (its kernel, its agent, the virtio rings), and each one
         * asked for costs a round trip while the guest waits.
         */
        private void rememberHot(int[] before) {
            java.util.LinkedHashSet<Integer> all = new java.util.LinkedHashSet<>();
            for (int i : before) {
                all.add(i);
            }
            all.addAll(asked);
            int[] keep = all.stream().limit(MAX_HOT).mapToInt(Integer::intValue).toArray();
            try {
                pages.rememberHot(keep);
            } catch (IOException e) {
                log.accept("cannot keep the pages " + name + " was asked for (" + e.getMessage() + "); the next load"
                        + " asks again");
            }
        }

        /** What goes in one section of RAM's pages; returns the pages it wrote, for the caller. */
        @FunctionalInterface
        private interface SectionBody {
            int write() throws IOException;
        }

        /**
         * Writes one section of RAM's pages, holding the stream (the sender
         * and the reader answering a request take turns by section); nothing,
         * once RAM's end is written: every page is on its way then.
         */
        private int inSection(SectionBody body) throws IOException {
            sending.lock();
            try {
                if (ended) {
                    return 0;
                }
                int id = pages.sectionId();
                out.header(5).put((byte) PART).putInt(id);
                int n = body.write();
                sectionEnd(id);
                out.flush();
                return n;
            } finally {
                sending.unlock();
            }
        }

        /** Sends page {@code page} of {@code block} (index {@code i}) unless it went already; whether it did. */
        private boolean sendOnce(int i, int block, long page, boolean continues) throws IOException {
            if (sent.get(i)) {
                return false;
            }
            pages.writePage(block, page, continues, out);
            sent.set(i);
            return true;
        }

        private void sectionEnd(int id) throws IOException {
            ByteBuffer h = out.header(13).putLong(EOS);
            if (pages.footers()) {
                h.put((byte) FOOTER).putInt(id);
            }
        }

        private void close() {
            try {
                channel.close();
            } catch (IOException e) {
                // closing only
            }
            try {
                pages.close();
            } catch (IOException e) {
                // read-only files
            }
        }

        /**
         * Lets the rest of the RAM follow: until this (or {@link #SWEEP_AFTER}
         * after the devices are in) only the pages the guest touches are sent,
         * so that the first steps of a restored guest (its agent's hello, the
         * thaw) do not share two cores with a copy of all of its memory. The
         * restore calls it when its own steps are done.
         */
        public void sweep() {
            stepsDone = true;
            sweeping.complete(null);
        }

        /** Whether all of the RAM is in place. */
        public boolean isDone() {
            return done.isDone() && !done.isCompletedExceptionally();
        }

        /** Waits until all of the RAM is in place. */
        public void await(Duration timeout) throws IOException {
            sweep();
            try {
                done.get(timeout.toMillis(), TimeUnit.MILLISECONDS);
            } catch (TimeoutException e) {
                throw new IOException("the machine's RAM was not all in place within " + timeout.toSeconds() + " s");
            } catch (ExecutionException e) {
                throw new IOException("the machine's RAM could not be loaded: " + e.getCause().getMessage(),
                        e.getCause());
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IOException("interrupted", e);
            }
        }

        /** Stops sending, for a QEMU that is being ended anyway. */
        public void abort() {
            aborted = true;
            close();
        }
    }
}
