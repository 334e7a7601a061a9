package dev.kosa8.vm;

import java.io.File;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;

/**
 * One QEMU process. Started with its output going to a file, never to a pipe,
 * so it outlives the daemon that started it: a restarted daemon re-attaches
 * by pid, checking the process's start time so a reused pid is never taken
 * for the old QEMU.
 */
public final class QemuProcess {
    private final ProcessHandle handle;
    private final Process child; // null when re-attached
    private final Path log;

    private QemuProcess(ProcessHandle handle, Process child, Path log) {
        this.handle = handle;
        this.child = child;
        this.log = log;
    }

    public static QemuProcess start(List<String> argv, Path log) throws IOException {
        Files.createDirectories(log.getParent());
        Process p = new ProcessBuilder(argv)
                .redirectInput(ProcessBuilder.Redirect.from(new File("/dev/null")))
                .redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.appendTo(log.toFile()))
                .start();
        return new QemuProcess(p.toHandle(), p, log);
    }

    /** Finds a QEMU started earlier, if it still runs and is the same process. */
    public static Optional<QemuProcess> attach(long pid, Instant started, Path log) {
        return ProcessHandle.of(pid)
                .filter(ProcessHandle::isAlive)
                .filter(h -> h.info().startInstant().map(s -> sameInstant(s, started)).orElse(false))
                .map(h -> new QemuProcess(h, null, log));
    }

    /**
     * The arguments (without the program) process {@code pid} was started
     * with. On Linux read whole from {@code /proc}: the JDK's
     * {@code ProcessHandle.Info.arguments()} reads only a page there and gives
     * no arguments at all for a longer command line (measured with a
     * 6,000-byte argument, JDK 25), and a sandbox's QEMU command line runs
     * to about 3 KB before a long home directory makes it longer.
     */
    public static Optional<String[]> arguments(long pid) {
        Path cmdline = Path.of("/proc", Long.toString(pid), "cmdline");
        if (Files.isDirectory(cmdline.getParent())) {
            try {
                String all = new String(Files.readAllBytes(cmdline), java.nio.charset.StandardCharsets.UTF_8);
                String[] argv = all.split("\0", -1);
                // NUL-terminated: the last piece is empty
                int n = argv.length > 0 && argv[argv.length - 1].isEmpty() ? argv.length - 1 : argv.length;
                return n == 0 ? Optional.empty() : Optional.of(java.util.Arrays.copyOfRange(argv, 1, n));
            } catch (IOException e) {
                return Optional.empty();
            }
        }
        return ProcessHandle.of(pid).flatMap(h -> h.info().arguments());
    }

    private static boolean sameInstant(Instant a, Instant b) {
        // /proc reports start times in clock ticks; allow for the rounding
        return b != null && Duration.between(a, b).abs().toMillis() < 1000;
    }

    private static final java.lang.invoke.MethodHandle SETPRIORITY = dev.kosa8.host.NativeCall.handle("setpriority",
            -1, java.lang.foreign.ValueLayout.JAVA_INT, java.lang.foreign.ValueLayout.JAVA_INT,
            java.lang.foreign.ValueLayout.JAVA_INT, java.lang.foreign.ValueLayout.JAVA_INT);
    private static final int PRIO_PROCESS = 0, LOWEST = 19;

    /**
     * Puts every thread of the process at the lowest CPU priority (nice 19),
     * for a QEMU about to end while another takes its place: the kernel
     * frees an exiting process's memory in that process's own time (30-100
     * ms for a 1 GiB guest loaded lazily, its RAM in small pages), and at
     * nice 19 that work yields the two cores to the new machine's first
     * steps instead of sharing them. Linux only; elsewhere, and for threads
     * that are gone already, nothing. Returns how many threads it lowered.
     */
    public int lowerPriority() {
        Path tasks = Path.of("/proc", Long.toString(pid()), "task");
        if (SETPRIORITY == null || !Files.isDirectory(tasks)) {
            return 0;
        }
        int lowered = 0;
        try (var threads = Files.list(tasks); var arena = java.lang.foreign.Arena.ofConfined()) {
            for (Path t : threads.toList()) {
                int tid = Integer.parseInt(t.getFileName().toString());
                try {
                    dev.kosa8.host.NativeCall.call(arena, "setpriority", state -> (int) SETPRIORITY.invokeExact(
                            state, PRIO_PROCESS, tid, LOWEST), true, errno -> new IOException("errno " + errno));
                    lowered++;
                } catch (IOException e) {
                    // the thread ended meanwhile
                }
            }
        } catch (IOException | RuntimeException e) {
            // the process ended meanwhile
        }
        return lowered;
    }

    public long pid() {
        return handle.pid();
    }

    public Instant startInstant() {
        return handle.info().startInstant().orElse(null);
    }

    public boolean isAlive() {
        return handle.isAlive();
    }

    /** How it ended, for error messages: "exit status N", "killed by signal", or "still running". */
    public String exitDescription() {
        if (handle.isAlive()) {
            return "still running";
        }
        if (child != null) {
            int code = child.exitValue();
            return code > 128 ? "killed by signal " + (code - 128) : "exit status " + code;
        }
        return "exited";
    }

    public boolean waitFor(Duration timeout) {
        try {
            if (child != null) {
                return child.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS);
            }
            handle.onExit().get(timeout.toMillis(), TimeUnit.MILLISECONDS);
            return true;
        } catch (java.util.concurrent.TimeoutException e) {
            return false;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        } catch (java.util.concurrent.ExecutionException e) {
            return !handle.isAlive();
        }
    }

    /** SIGKILL, then wait for it to be gone. */
    public void kill() {
        handle.destroyForcibly();
        waitFor(Duration.ofSeconds(10));
    }

    public java.util.concurrent.CompletableFuture<ProcessHandle> onExit() {
        return handle.onExit();
    }

    /** The last lines QEMU itself printed (not the guest's console). */
    public String outputTail(int lines) {
        return Tail.of(log, lines);
    }
}
