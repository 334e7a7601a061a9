package dev.kosa8.vm;

import dev.kosa8.host.HostTools;
import dev.kosa8.host.KosaException;
import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * Writes QEMU's migration stream to a file from a process of its own:
 * {@code socat} listens on a unix socket and pipes what QEMU sends into
 * {@code cat > FILE}, in a session of its own ({@code setsid}).
 *
 * <p>Why not the daemon itself: the stream must never be cut. A background
 * snapshot that fails half-way leaves QEMU 7.2's guest stuck, its RAM still
 * write-protected (reproduced here: status "running", 0% CPU, forever). A
 * writer inside the daemon cuts it when the daemon dies or is restarted
 * (an upgrade) in the middle; this process outlives the daemon and finishes
 * the stream. And when the file cannot be written (a full disk), {@code cat}
 * fails but the rest of the stream is still read and dropped, and the exit
 * status (75) and {@code cat}'s message tell the daemon why.
 */
final class StreamWriter {
    /** Exit status when the file could not be written; the stream was still read to its end. */
    static final int WRITE_FAILED = 75;
    /** The writer's name ({@code $0} of its script), by which {@link #endWritersOf} finds it. */
    private static final String NAME = "kosa8-vmstate";
    private static final String SCRIPT = """
            set -o pipefail
            "$1" -u UNIX-LISTEN:"$2",unlink-early,unlink-close STDOUT | { cat > "$3" || { cat > /dev/null; exit 75; }; }
            """;

    private final Process process;
    private final Path socket;
    private final Path file;
    private final Path errors;

    private StreamWriter(Process process, Path socket, Path file, Path errors) {
        this.process = process;
        this.socket = socket;
        this.file = file;
        this.errors = errors;
    }

    /**
     * Starts the writer and waits until it listens on {@code socket}.
     * {@code file} must not exist yet (it is created, and the caller removes
     * it on failure); {@code socket} is removed once QEMU has connected.
     */
    static StreamWriter start(Path socket, Path file) throws IOException {
        return start(socket, file, true);
    }

    /** For tests: {@code create} false writes into an existing file (a device such as /dev/full). */
    static StreamWriter start(Path socket, Path file, boolean create) throws IOException {
        String socat = HostTools.which("socat");
        if (socat == null) {
            throw new KosaException(KosaException.Kind.HOST, "socat is not installed; kosa8 needs it to write a "
                    + "machine's state", "install it: apt-get install socat (kosa8 doctor checks everything)");
        }
        Files.deleteIfExists(socket);
        if (create) {
            Files.createFile(file); // refuses an existing file, as the stream must start a new one
        }
        Path errors = socket.resolveSibling(socket.getFileName() + ".err");
        Process p = new ProcessBuilder(List.of("setsid", "bash", "-c", SCRIPT, NAME, socat,
                socket.toString(), file.toString()))
                .redirectInput(ProcessBuilder.Redirect.from(new java.io.File("/dev/null")))
                .redirectOutput(ProcessBuilder.Redirect.DISCARD)
                .redirectError(errors.toFile())
                .start();
        // socat binds, then listens: a connection between the two is refused (a checkpoint's QEMU failed so on a
        // loaded host after a fixed 20 ms), so wait for the listening socket itself
        long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
        while (!listening(socket)) {
            if (!p.isAlive() || System.nanoTime() > deadline) {
                p.destroyForcibly();
                throw new IOException("the state writer did not start listening: " + errorText(errors));
            }
            sleep(2);
        }
        return new StreamWriter(p, socket, file, errors);
    }

    /** The flags {@code /proc/net/unix} shows for a listening socket ({@code __SO_ACCEPTCON}). */
    private static final String ACCEPTING = "00010000";

    /**
     * Whether a socket listens at {@code socket}: its line in {@code /proc/net/unix} (this network namespace's, the
     * writer's) has the accepting flag. Where that file cannot be read, the socket's existence and a moment more.
     */
    static boolean listening(Path socket) {
        if (!Files.exists(socket)) {
            return false;
        }
        // as bytes: another process's socket name there need not be UTF-8 (an abstract one is printed raw)
        String path = new String(socket.toString().getBytes(java.nio.charset.StandardCharsets.UTF_8),
                java.nio.charset.StandardCharsets.ISO_8859_1);
        try (var lines = Files.lines(Path.of("/proc/net/unix"), java.nio.charset.StandardCharsets.ISO_8859_1)) {
            return lines.map(l -> l.trim().split("\\s+", 8))
                    .anyMatch(f -> f.length == 8 && f[7].equals(path) && f[3].equals(ACCEPTING));
        } catch (IOException | java.io.UncheckedIOException e) {
            sleep(20);
            return true;
        }
    }

    /**
     * Waits for the end of the stream, then, when {@code durable}, makes the
     * file durable.
     *
     * @param durable false for a stream the caller takes apart and deletes
     *                (a checkpoint's, kept as pages that are synced
     *                themselves): forcing 0.5-1 GiB to disk only to delete it
     *                seconds later was most of a commit's disk writes
     * @return the file's size
     * @throws IOException with the writer's reason when the file could not be written
     */
    long finish(Duration timeout, boolean durable) throws IOException {
        try {
            if (!process.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
                throw new IOException("the machine's state was not written within " + timeout.toSeconds() + " s");
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException("interrupted while the machine's state was written", e);
        }
        int status = process.exitValue();
        String why = errorText(errors);
        Files.deleteIfExists(errors);
        Files.deleteIfExists(socket);
        if (status != 0) {
            throw new IOException((status == WRITE_FAILED ? "cannot write " + file.getFileName() : "the state writer failed")
                    + (why.isEmpty() ? " (exit status " + status + ")" : ": " + why));
        }
        if (!durable) {
            return Files.size(file);
        }
        force(file);
        return Files.size(file);
    }

    /** Makes {@code file}'s content durable. */
    static void force(Path file) throws IOException {
        try (FileChannel ch = FileChannel.open(file, StandardOpenOption.WRITE)) {
            ch.force(true);
        }
    }

    /** The writer's process id (its session's leader). */
    long pid() {
        return process.pid();
    }

    /**
     * Ends the writer when QEMU is no longer sending (it was cancelled, or
     * died) or never connected: then cutting it costs nothing. Waits up to
     * {@code grace} for the stream's natural end first.
     */
    void stop(Duration grace) {
        try {
            if (!process.waitFor(grace.toMillis(), TimeUnit.MILLISECONDS)) {
                process.descendants().forEach(ProcessHandle::destroyForcibly);
                process.destroyForcibly();
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        try {
            Files.deleteIfExists(errors);
            Files.deleteIfExists(socket);
        } catch (IOException ignored) {
            // stale files are replaced on the next start
        }
    }

    /**
     * Ends every writer (of any daemon, this one's or a dead one's) still open on {@code file}: the
     * {@code kosa8-vmstate} session whose last argument it is, with what it started. For a file whose stream
     * QEMU no longer sends, or never began: a daemon killed between starting a writer and QEMU connecting left
     * one listening for ever, holding the file. Returns how many writers were ended.
     */
    static int endWritersOf(Path file) {
        Path wanted = file.toAbsolutePath().normalize();
        java.util.Map<Long, ProcessHandle> matching = new java.util.HashMap<>();
        for (ProcessHandle p : ProcessHandle.allProcesses().toList()) {
            String[] args = QemuProcess.arguments(p.pid()).orElse(null); // whole, where info() reads one page
            // bash -c SCRIPT kosa8-vmstate SOCAT SOCKET FILE (and the subshell of its pipeline, a copy of it)
            if (args != null && args.length >= 4 && args[args.length - 4].equals(NAME)
                    && Path.of(args[args.length - 1]).toAbsolutePath().normalize().equals(wanted)) {
                matching.put(p.pid(), p);
            }
        }
        // one writer is one session (setsid): its bash and the subshells of its pipeline, however many of them the
        // listing caught, and whichever of them it caught (a subshell whose parent was read as gone is no writer
        // of its own: counting by parent found two writers where there was one)
        java.util.Map<Long, java.util.List<ProcessHandle>> bySession = new java.util.HashMap<>();
        for (ProcessHandle p : matching.values()) {
            long sid = session(p.pid());
            bySession.computeIfAbsent(sid > 0 ? sid : p.pid(), k -> new java.util.ArrayList<>()).add(p);
        }
        for (java.util.List<ProcessHandle> writer : bySession.values()) {
            for (ProcessHandle p : writer) {
                p.descendants().forEach(ProcessHandle::destroyForcibly);
                p.destroyForcibly();
            }
        }
        return bySession.size();
    }

    /** The session of process {@code pid} ({@code /proc/PID/stat}), or 0 when it cannot be read. */
    private static long session(long pid) {
        try {
            String stat = Files.readString(Path.of("/proc/" + pid + "/stat"));
            String[] f = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
            return Long.parseLong(f[3]); // state, ppid, pgrp, session
        } catch (IOException | RuntimeException e) {
            return 0;
        }
    }

    private static String errorText(Path errors) {
        try {
            return Files.exists(errors) ? Files.readString(errors).strip().replace('\n', ' ') : "";
        } catch (IOException e) {
            return "";
        }
    }

    private static void sleep(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
