package dev.kosa8.vm;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.IOException;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.channels.FileChannel;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * A machine's RAM, CPU and device state as a file: QEMU's migration stream,
 * written by a background snapshot and read back by a fresh QEMU started
 * with {@code -incoming defer} (DESIGN.md fact 11).
 *
 * <p>Why a migration stream and not {@code savevm}: {@code savevm} keeps the
 * machine stopped while it writes every RAM page (4.3 s for 1 GiB here,
 * BENCHMARKS.md "Undo" run 1). With the {@code background-snapshot}
 * capability QEMU stops the machine only to save the devices and
 * write-protect RAM (userfaultfd), runs it on, and writes each page before
 * the guest's first write to it changes it: the stream holds RAM exactly as
 * it was at the instant, written while the guest runs.
 *
 * <p>The stream goes over a unix socket that the daemon listens on and
 * copies to the file: QEMU's {@code exec:} transport would need the seccomp
 * filter's {@code spawn} group, and {@code file:} came only in QEMU 9. Loading
 * is the same the other way: QEMU listens ({@code migrate-incoming}) and the
 * daemon sends the file.
 */
public final class MachineState {
    private static final Duration POLL = Duration.ofMillis(2);
    /** Bytes per second: no throttle (QEMU's own ceiling for the parameter is far above any disk). */
    private static final long UNLIMITED = 1L << 40;

    private MachineState() {
    }

    /**
     * Starts a background snapshot of a machine QEMU has stopped, into
     * {@code file}. QEMU saves the devices, runs the machine on itself, and
     * goes on writing RAM; {@link Saving#awaitRunning} returns once the
     * machine runs, {@link Saving#awaitSaved} once every byte is in the file
     * and synced.
     *
     * @param socket where the daemon listens for QEMU's stream; removed when done
     */
    public static Saving saveInBackground(QmpClient qmp, Path socket, Path file, Duration timeout) throws IOException {
        return save(qmp, socket, file, true, timeout);
    }

    /**
     * Saves a machine QEMU has stopped into {@code file} and leaves it
     * stopped: a plain migration of a stopped machine, for a machine that is
     * about to end ({@code kosa8 stop}). Returns the file's size.
     */
    public static long saveStopped(QmpClient qmp, Path socket, Path file, Duration timeout) throws IOException {
        Saving saving = save(qmp, socket, file, false, timeout);
        try {
            return saving.awaitSaved(timeout);
        } catch (RuntimeException e) {
            saving.cancel();
            throw e;
        }
    }

    private static Saving save(QmpClient qmp, Path socket, Path file, boolean background, Duration timeout)
            throws IOException {
        Files.deleteIfExists(socket);
        ServerSocketChannel server = ServerSocketChannel.open(StandardProtocolFamily.UNIX);
        try {
            server.bind(UnixDomainSocketAddress.of(socket));
            FileChannel out = FileChannel.open(file, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE);
            CompletableFuture<Long> copied = new CompletableFuture<>();
            Thread.ofPlatform().daemon().name("vmstate-writer").start(() -> receive(server, socket, out, copied));
            try {
                // QEMU throttles migration to 128 MiB/s by default, a limit meant for a network shared with other
                // traffic; to a local file it only stretches the time until the checkpoint is stored (5.1 s instead
                // of about 1 s for 680 MB, measured)
                qmp.execute("migrate-set-parameters", Map.of("max-bandwidth", UNLIMITED), timeout);
                qmp.execute("migrate-set-capabilities", Map.of("capabilities",
                        List.of(Map.of("capability", "background-snapshot", "state", background))), timeout);
                qmp.execute("migrate", Map.of("uri", "unix:" + socket), timeout);
            } catch (RuntimeException e) {
                server.close(); // ends the writer's accept
                throw e;
            }
            return new Saving(qmp, server, copied);
        } catch (IOException | RuntimeException e) {
            server.close();
            Files.deleteIfExists(socket);
            throw e;
        }
    }

    /**
     * Copies QEMU's stream from the one connection to {@code server} into
     * {@code out}. If the file cannot be written (a full disk), the rest of
     * the stream is still read and dropped, so QEMU's side always completes:
     * QEMU 7.2 left a background snapshot that failed half-way with the
     * guest stuck (its RAM still write-protected, measured here), so the
     * stream must never be cut from this end. The failure is reported
     * through {@code done} once the stream has ended.
     */
    static void receive(ServerSocketChannel server, Path socket, FileChannel out, CompletableFuture<Long> done) {
        IOException writeFailure = null;
        try (server; out; SocketChannel in = server.accept()) {
            if (socket != null) {
                Files.deleteIfExists(socket);
            }
            // one large buffer: FileChannel.transferFrom from a socket copies through 8 KiB at a time
            java.nio.ByteBuffer buf = java.nio.ByteBuffer.allocateDirect(4 << 20);
            long total = 0;
            while (in.read(buf) >= 0) {
                if (buf.remaining() == 0) {
                    if (writeFailure == null) {
                        try {
                            total += drain(buf, out);
                        } catch (IOException e) {
                            writeFailure = e;
                        }
                    }
                    buf.clear();
                }
            }
            if (writeFailure == null) {
                total += drain(buf, out);
                out.force(true);
                done.complete(total);
            }
        } catch (IOException | RuntimeException e) {
            if (writeFailure == null) {
                writeFailure = e instanceof IOException io ? io : new IOException(e.getMessage(), e);
            }
        } finally {
            if (writeFailure != null) {
                done.completeExceptionally(writeFailure);
            }
            try {
                if (socket != null) {
                    Files.deleteIfExists(socket);
                }
            } catch (IOException ignored) {
                // a stale socket is removed before the next use
            }
        }
    }

    private static long drain(java.nio.ByteBuffer buf, FileChannel out) throws IOException {
        buf.flip();
        long n = buf.remaining();
        while (buf.hasRemaining()) {
            out.write(buf);
        }
        buf.clear();
        return n;
    }

    /** A background snapshot under way. */
    public static final class Saving {
        private final QmpClient qmp;
        private final ServerSocketChannel server;
        private final CompletableFuture<Long> copied;

        private Saving(QmpClient qmp, ServerSocketChannel server, CompletableFuture<Long> copied) {
            this.qmp = qmp;
            this.server = server;
            this.copied = copied;
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

        /** Waits until QEMU has sent all of RAM and the file holds it, synced; returns its size. */
        public long awaitSaved(Duration timeout) {
            long deadline = System.nanoTime() + timeout.toNanos();
            while (true) {
                if (copied.isCompletedExceptionally()) {
                    break; // the file could not be written (a full disk): that is the error to report, not QEMU's
                }
                String status = migrationStatus(timeout);
                if (status.equals("completed")) {
                    break;
                }
                if (status.equals("failed") || status.equals("cancelled")) {
                    throw new IllegalStateException("QEMU's snapshot " + status + migrationError());
                }
                if (System.nanoTime() > deadline) {
                    throw new IllegalStateException("QEMU's snapshot did not finish within " + timeout.toSeconds() + " s");
                }
                sleep(Duration.ofMillis(20));
            }
            try {
                return copied.get(Math.max(1, (deadline - System.nanoTime()) / 1_000_000), TimeUnit.MILLISECONDS);
            } catch (ExecutionException e) {
                throw new IllegalStateException("cannot write the machine's state: " + e.getCause().getMessage(),
                        e.getCause());
            } catch (TimeoutException e) {
                throw new IllegalStateException("the machine's state was not written within " + timeout.toSeconds() + " s");
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException("interrupted while writing the machine's state");
            }
        }

        /** Stops the snapshot (if QEMU still sends) and the writer. The caller removes the file. */
        public void cancel() {
            try {
                qmp.execute("migrate_cancel", Map.of(), Duration.ofSeconds(10));
            } catch (RuntimeException ignored) {
                // QEMU may have gone; the writer ends with the socket either way
            }
            try {
                server.close();
            } catch (IOException ignored) {
                // nothing more to stop
            }
            try {
                copied.get(30, TimeUnit.SECONDS);
            } catch (Exception ignored) {
                // the writer ended one way or the other
            }
        }

        private String migrationStatus(Duration timeout) {
            return qmp.execute("query-migrate", Map.of(), timeout).path("status").asText("none");
        }

        private String migrationError() {
            JsonNode m = qmp.execute("query-migrate", Map.of(), Duration.ofSeconds(10));
            String why = m.path("error-desc").asText("");
            return why.isEmpty() ? "" : ": " + why;
        }
    }

    /**
     * Loads {@code file} into a QEMU started with {@code -incoming defer}
     * (and {@code -S}, so it stays stopped after): QEMU listens on
     * {@code socket}, the daemon sends the file, and this returns when QEMU
     * reports the load completed.
     */
    public static void load(QmpClient qmp, Path socket, Path file, Duration timeout) throws IOException {
        Files.deleteIfExists(socket);
        qmp.execute("migrate-incoming", Map.of("uri", "unix:" + socket), timeout);
        long deadline = System.nanoTime() + timeout.toNanos();
        try (FileChannel in = FileChannel.open(file, StandardOpenOption.READ);
             SocketChannel out = SocketChannel.open(StandardProtocolFamily.UNIX)) {
            out.connect(UnixDomainSocketAddress.of(socket));
            long size = in.size();
            long sent = 0;
            while (sent < size) {
                sent += in.transferTo(sent, size - sent, out);
            }
            out.shutdownOutput();
            while (true) {
                JsonNode m = qmp.execute("query-migrate", Map.of(), timeout);
                String status = m.path("status").asText("none");
                if (status.equals("completed")) {
                    return;
                }
                if (status.equals("failed")) {
                    throw new IOException("QEMU could not load " + file.getFileName() + ": "
                            + m.path("error-desc").asText("the stream does not fit this machine"));
                }
                if (System.nanoTime() > deadline) {
                    throw new IOException("QEMU did not finish loading " + file.getFileName() + " within "
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
