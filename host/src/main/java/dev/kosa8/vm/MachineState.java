package dev.kosa8.vm;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.IOException;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.channels.FileChannel;
import java.nio.channels.SocketChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.List;
import java.util.Map;

/**
 * A machine's RAM, CPU and device state as a file: QEMU's migration stream,
 * written by a background snapshot and read back by a fresh QEMU started
 * with {@code -incoming defer}.
 *
 * <p>Why a migration stream and not {@code savevm}: {@code savevm} keeps the
 * machine stopped while it writes every RAM page (4.3 s for 1 GiB here,
 * bench/history/undo.md, run 1). With the {@code background-snapshot}
 * capability QEMU stops the machine only to save the devices and
 * write-protect RAM (userfaultfd), runs it on, and writes each page before
 * the guest's first write to it changes it: the stream holds RAM exactly as
 * it was at the instant, written while the guest runs.
 *
 * <p>The stream goes over a unix socket to a writer process of its own
 * ({@link StreamWriter}, which also says why that is not the daemon):
 * QEMU's {@code exec:} transport would need the seccomp filter's
 * {@code spawn} group, and {@code file:} came only in QEMU 9. Loading is the
 * other way: QEMU listens ({@code migrate-incoming}) and the daemon sends the
 * file; a load cut short only fails a QEMU that was not running yet.
 */
public final class MachineState {
    private static final Duration POLL = Duration.ofMillis(2);
    /** Bytes per second: no throttle (QEMU's own ceiling for the parameter is far above any disk). */
    private static final long UNLIMITED = 1L << 40;

    /** QEMU's migration states in which it still sends. */
    private static final List<String> UNDER_WAY = List.of("setup", "active", "device", "pre-switchover",
            "cancelling", "wait-unplug");

    private MachineState() {
    }

    /**
     * Gets a background snapshot ready without touching the machine: starts
     * the writer and sets QEMU's migration parameters, so that what happens
     * in the pause is only {@link Saving#start}. The caller then stops the
     * machine and starts the snapshot, or {@link Saving#cancel}s it.
     *
     * @param socket where the writer listens for QEMU's stream; removed when done
     */
    public static Saving prepareBackground(QmpClient qmp, Path socket, Path file, Duration timeout) throws IOException {
        return prepare(qmp, socket, file, true, false, timeout);
    }

    /**
     * Gets a save of a machine whose RAM is a shared file ready ({@link
     * CheckpointMode#FILE_RAM}): a plain migration with {@code x-ignore-shared},
     * which writes the devices and the small RAM blocks that are not the
     * guest's memory, and leaves the guest's RAM to the file. Started in the
     * pause ({@link Saving#start}) and awaited there ({@link Saving#awaitSaved}):
     * the machine stays stopped until the caller continues it.
     */
    public static Saving prepareDevices(QmpClient qmp, Path socket, Path file, Duration timeout) throws IOException {
        return prepare(qmp, socket, file, false, true, timeout);
    }

    /** Makes a state file written by a background snapshot durable, for a checkpoint that keeps it whole. */
    public static void makeDurable(Path file) throws IOException {
        StreamWriter.force(file);
    }

    /**
     * Ends any state writer still open on {@code file} (see {@code StreamWriter.endWritersOf}); for the sweep of
     * an unfinished checkpoint's files, once QEMU sends no stream. Returns how many were ended.
     */
    public static int endWritersOf(Path file) {
        return StreamWriter.endWritersOf(file);
    }

    /**
     * Waits until QEMU sends no machine state: a stream a daemon that died
     * left to its writer ({@link StreamWriter}) ends first, since QEMU saves
     * one machine at a time and refuses a new one meanwhile. Returns at once
     * when none is under way.
     */
    public static void awaitIdle(QmpClient qmp, Duration timeout) {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (true) {
            String status = qmp.execute("query-migrate", Map.of(), timeout).path("status").asText("none");
            if (!UNDER_WAY.contains(status)) {
                return;
            }
            if (System.nanoTime() > deadline) {
                throw new IllegalStateException("QEMU is still saving an earlier machine state (" + status
                        + ") after " + timeout.toSeconds() + " s");
            }
            sleep(Duration.ofMillis(20));
        }
    }

    /**
     * Saves a machine QEMU has stopped into {@code file} and leaves it
     * stopped: a plain migration of a stopped machine, for a machine that is
     * about to end ({@code kosa8 stop}). Returns the file's size.
     */
    public static long saveStopped(QmpClient qmp, Path socket, Path file, Duration timeout) throws IOException {
        Saving saving = prepare(qmp, socket, file, false, false, timeout);
        try {
            saving.start(timeout);
            return saving.awaitSaved(timeout);
        } catch (RuntimeException e) {
            saving.cancel();
            throw e;
        }
    }

    private static Saving prepare(QmpClient qmp, Path socket, Path file, boolean background, boolean ignoreShared,
                                  Duration timeout) throws IOException {
        StreamWriter writer = StreamWriter.start(socket, file);
        try {
            // QEMU throttles migration to 128 MiB/s by default, a limit meant for a network shared with other
            // traffic, not for a local file
            qmp.execute("migrate-set-parameters", Map.of("max-bandwidth", UNLIMITED), timeout);
            // postcopy-ram is on in a QEMU that was restored lazily (Postcopy), and QEMU refuses background
            // snapshots beside it; x-ignore-shared is on in one restored from file RAM, and a save that is to
            // hold all of RAM (a pause to disk) must turn it off
            qmp.execute("migrate-set-capabilities", Map.of("capabilities",
                    List.of(Map.of("capability", "postcopy-ram", "state", false),
                            Map.of("capability", "x-ignore-shared", "state", ignoreShared),
                            Map.of("capability", "background-snapshot", "state", background))), timeout);
        } catch (RuntimeException e) {
            writer.stop(Duration.ZERO); // QEMU never connected: nothing to cut
            throw e;
        }
        // a pause to disk's state is made durable as it ends; a checkpoint's, by its commit
        return new Saving(qmp, writer, socket, background, !background && !ignoreShared);
    }

    /** A snapshot under way. */
    public static final class Saving {
        /** How long a background snapshot being ended is let run before it is cancelled after all. */
        static final Duration END = Duration.ofMinutes(5);
        private final QmpClient qmp;
        private final StreamWriter writer;
        private final Path socket;
        private final boolean background;
        private final boolean durable;
        private volatile boolean started;

        private Saving(QmpClient qmp, StreamWriter writer, Path socket, boolean background, boolean durable) {
            this.qmp = qmp;
            this.writer = writer;
            this.socket = socket;
            this.background = background;
            this.durable = durable;
        }

        /**
         * Starts the stream: for a background snapshot, QEMU saves the devices,
         * write-protects RAM and runs the machine on by itself
         * ({@link #awaitRunning}).
         */
        public void start(Duration timeout) {
            started = true;
            qmp.execute("migrate", Map.of("uri", "unix:" + socket), timeout);
        }

        /** Waits until QEMU has saved the devices and runs the machine again. */
        public void awaitRunning(Duration timeout) {
            long deadline = System.nanoTime() + timeout.toNanos();
            while (true) {
                if (qmp.execute("query-status", Map.of(), timeout).path("running").asBoolean()) {
                    return;
                }
                String status = migrationStatus(timeout);
                if (status.equals("failed") || status.equals("cancelled")) {
                    throw new IllegalStateException("QEMU's snapshot " + status + migrationError());
                }
                if (System.nanoTime() > deadline) {
                    throw new IllegalStateException("the machine did not run again within " + timeout.toMillis()
                            + " ms of the snapshot's start");
                }
                sleep(POLL);
            }
        }

        /**
         * Waits until QEMU has sent all of RAM and the file holds it; returns
         * its size. A stopped machine's state is synced; a background
         * snapshot's is not (a checkpoint takes it apart into pages, synced
         * themselves, and deletes it), nor a file-RAM checkpoint's devices
         * (synced by its commit, off the pause): one kept whole is made
         * durable by {@link MachineState#makeDurable}.
         */
        public long awaitSaved(Duration timeout) {
            long deadline = System.nanoTime() + timeout.toNanos();
            String status;
            while (true) {
                status = migrationStatus(timeout);
                if (status.equals("completed") || status.equals("failed") || status.equals("cancelled")) {
                    break;
                }
                if (System.nanoTime() > deadline) {
                    throw new IllegalStateException("QEMU's snapshot did not finish within " + timeout.toSeconds() + " s");
                }
                sleep(Duration.ofMillis(20));
            }
            String qemuError = status.equals("completed") ? "" : "QEMU's snapshot " + status + migrationError();
            try {
                // the writer's own failure (a full disk) says more than QEMU's, so it is asked first
                long size = writer.finish(Duration.ofSeconds(60), durable);
                if (!qemuError.isEmpty()) {
                    throw new IllegalStateException(qemuError);
                }
                return size;
            } catch (IOException e) {
                throw new IllegalStateException(e.getMessage(), e);
            }
        }

        /**
         * Whether QEMU still sends RAM: until it has, a guest write to a page
         * not yet sent waits for that page to be sent first, so the guest may
         * be slow to answer. False when QEMU does not answer within
         * {@code timeout} either.
         */
        public boolean streaming(Duration timeout) {
            try {
                return UNDER_WAY.contains(migrationStatus(timeout));
            } catch (RuntimeException e) {
                return false;
            }
        }

        /** What QEMU says of the stream, for an error message: its status and how much it has sent. */
        public String describe() {
            try {
                JsonNode m = qmp.execute("query-migrate", Map.of(), Duration.ofSeconds(10));
                return "QEMU's snapshot " + m.path("status").asText("none") + ", "
                        + m.path("ram").path("transferred").asLong() / (1 << 20) + " MiB of RAM sent"
                        + errorOf(m);
            } catch (RuntimeException e) {
                return "QEMU did not answer (" + e.getMessage() + ")";
            }
        }

        /**
         * Ends the snapshot, then the writer; the caller removes the file. A
         * background snapshot under way is let run to its end rather than
         * cancelled: QEMU 7.2 cancelling one hangs for good — the guest stops
         * and QMP answers no more (the fault walk, CheckpointFaultIT, found
         * it at the step after the stream's start). The stream ends by itself
         * once it has sent RAM, seconds at most; only a stream still running
         * after {@link #END} is cancelled.
         */
        public void cancel() {
            if (!started) {
                writer.stop(Duration.ZERO); // QEMU never connected: nothing to cut
                return;
            }
            if (background && runsToItsEnd(END)) {
                writer.stop(Duration.ofSeconds(5));
                return;
            }
            try {
                qmp.execute("migrate_cancel", Map.of(), Duration.ofSeconds(10));
            } catch (RuntimeException ignored) {
                // QEMU may have gone; the writer ends with the stream either way
            }
            writer.stop(Duration.ofSeconds(5));
        }

        /** Whether QEMU's stream ended (or QEMU went) within {@code timeout}. */
        private boolean runsToItsEnd(Duration timeout) {
            long deadline = System.nanoTime() + timeout.toNanos();
            while (System.nanoTime() < deadline) {
                if (!streaming(Duration.ofSeconds(10))) {
                    return true;
                }
                sleep(Duration.ofMillis(50));
            }
            return false;
        }

        private String migrationStatus(Duration timeout) {
            return qmp.execute("query-migrate", Map.of(), timeout).path("status").asText("none");
        }

        private String migrationError() {
            return errorOf(qmp.execute("query-migrate", Map.of(), Duration.ofSeconds(10)));
        }

        private static String errorOf(JsonNode queryMigrate) {
            String why = queryMigrate.path("error-desc").asText("");
            return why.isEmpty() ? "" : ": " + why;
        }
    }

    /**
     * Tells a QEMU about to load a machine not to announce it on the network
     * once loaded. QEMU does so after every incoming migration, five times
     * in the first 0.8 s, so that switches learn where the guest's MAC
     * address moved; with virtio-net it asks the guest to do it, which the
     * guest's kernel answers with gratuitous ARP and neighbour advertisements,
     * a netlink notice of the link, and an acknowledgement on the control
     * queue it waits for. A sandbox's network is QEMU's user-mode stack in
     * the same process, with no switch to tell; but under TCG that guest work,
     * each path translated anew, ran beside the wake of every restore, about a
     * tenth of the guest code a rewind's wake translated
     * (bench/history/undo.md, run 15). Invisible to the guest, so a machine saved before this loads
     * as it did.
     */
    static void withoutAnnouncements(QmpClient qmp, Duration timeout) {
        qmp.execute("migrate-set-parameters", Map.of("announce-rounds", 0), timeout);
    }

    /**
     * Loads {@code machine} into a QEMU started with {@code -incoming defer}
     * (and {@code -S}, so it stays stopped after): QEMU listens on
     * {@code socket}, the daemon sends the stream, and this returns when QEMU
     * reports the load completed.
     */
    public static void load(QmpClient qmp, Path socket, SavedMachine machine, Duration timeout) throws IOException {
        Files.deleteIfExists(socket);
        withoutAnnouncements(qmp, timeout);
        if (machine instanceof FileRamMachine) {
            // its RAM is already in the machine's memory file (Vm.restore); the stream holds the rest
            qmp.execute("migrate-set-capabilities", Map.of("capabilities",
                    List.of(Map.of("capability", "x-ignore-shared", "state", true))), timeout);
        }
        qmp.execute("migrate-incoming", Map.of("uri", "unix:" + socket), timeout);
        long deadline = System.nanoTime() + timeout.toNanos();
        try (SocketChannel out = SocketChannel.open(StandardProtocolFamily.UNIX)) {
            out.connect(UnixDomainSocketAddress.of(socket));
            machine.writeTo(out);
            out.shutdownOutput();
            while (true) {
                JsonNode m = qmp.execute("query-migrate", Map.of(), timeout);
                String status = m.path("status").asText("none");
                if (status.equals("completed")) {
                    return;
                }
                if (status.equals("failed")) {
                    throw new IOException("QEMU could not load " + machine.name() + ": "
                            + m.path("error-desc").asText("the stream does not fit this machine"));
                }
                if (System.nanoTime() > deadline) {
                    throw new IOException("QEMU did not finish loading " + machine.name() + " within "
                            + timeout.toSeconds() + " s");
                }
                sleep(POLL);
            }
        } finally {
            Files.deleteIfExists(socket);
        }
    }

    private static void sleep(Duration d) {
        try {
            Thread.sleep(d);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted");
        }
    }
}
