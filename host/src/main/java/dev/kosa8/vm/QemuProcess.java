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
        return start(argv, log, false);
    }

    /**
     * Starts {@code argv}; with {@code jailed}, a {@link Jail}'s command
     * line, whose program (bubblewrap) makes the jail's PID namespace and
     * waits in the host's for it to end. The process to record, watch and
     * kill is then its first child, PID 1 of the namespace and QEMU's
     * parent: killing it ends everything in the namespace, QEMU first, and
     * it exits when QEMU does. The jail gets an empty environment but a
     * {@code PATH}: the daemon's variables (a key a user exported, say) are
     * none of QEMU's business.
     */
    public static QemuProcess start(List<String> argv, Path log, boolean jailed) throws IOException {
        Files.createDirectories(log.getParent());
        ProcessBuilder pb = new ProcessBuilder(argv)
                .redirectInput(ProcessBuilder.Redirect.from(new File("/dev/null")))
                .redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.appendTo(log.toFile()));
        if (jailed) {
            pb.environment().clear();
            pb.environment().put("PATH", "/usr/bin:/bin");
        }
        Process p = pb.start();
        if (!jailed) {
            return new QemuProcess(p.toHandle(), p, log);
        }
        try {
            return new QemuProcess(firstChild(p, JAIL_START), p, log);
        } catch (IOException e) {
            p.destroyForcibly();
            throw e;
        }
    }

    /** How long bubblewrap may take to make its namespace's first process. */
    private static final Duration JAIL_START = Duration.ofSeconds(10);

    /**
     * The first child of {@code parent}, as soon as it exists: read from
     * {@code /proc/PID/task/PID/children} (every 0.2 ms: it appears within
     * a millisecond or two of the start), else from the JDK's scan of all
     * processes. Fails when the parent ends first (bubblewrap said why in
     * the log) or takes longer than {@code timeout}.
     */
    static ProcessHandle firstChild(Process parent, Duration timeout) throws IOException {
        Path children = Path.of("/proc", Long.toString(parent.pid()), "task", Long.toString(parent.pid()), "children");
        long deadline = System.nanoTime() + timeout.toNanos();
        while (true) {
            Optional<ProcessHandle> child;
            if (Files.exists(children)) {
                String pids = readQuietly(children).strip();
                child = pids.isEmpty() ? Optional.empty()
                        : ProcessHandle.of(Long.parseLong(pids.split("\\s+")[0]));
            } else {
                child = parent.children().findFirst();
            }
            if (child.isPresent()) {
                return child.get();
            }
            if (!parent.isAlive()) {
                throw new IOException("the jail ended before it started QEMU (exit status " + parent.exitValue() + ")");
            }
            if (System.nanoTime() > deadline) {
                throw new IOException("the jail did not start QEMU within " + timeout.toSeconds() + " s");
            }
            java.util.concurrent.locks.LockSupport.parkNanos(200_000);
        }
    }

    private static String readQuietly(Path file) {
        try {
            return Files.readString(file);
        } catch (IOException e) {
            return ""; // the process ended meanwhile
        }
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

    /**
     * How far apart two readings of one process's start may be. The JDK reads a start on Linux as the boot time
     * of {@code /proc/stat}'s {@code btime}, in whole seconds, plus the process's start in clock ticks since boot
     * (checked against JDK 25). The kernel works {@code btime} out afresh from the wall clock on each read, so a
     * clock adjusted by a few milliseconds moves it by a whole second across the rounding: a daemon started after
     * that reads every running QEMU as started one second away from its record. That cost a CI run every sandbox
     * across a daemon restart ("no longer running", then its live jail killed as unknown). A clock stepped by more
     * than this while no daemon ran still loses them, with that message; a pid reused within two seconds of the
     * recorded QEMU's start, by a process that outlived it, cannot happen.
     */
    static final Duration SAME_START = Duration.ofSeconds(2);

    static boolean sameInstant(Instant a, Instant b) {
        return b != null && Duration.between(a, b).abs().compareTo(SAME_START) < 0;
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
        if (SETPRIORITY == null) {
            return 0;
        }
        int lowered = 0;
        try (var arena = java.lang.foreign.Arena.ofConfined()) {
            for (long p : withJailed(pid())) {
                Path tasks = Path.of("/proc", Long.toString(p), "task");
                if (!Files.isDirectory(tasks)) {
                    continue;
                }
                try (var threads = Files.list(tasks)) {
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
            }
        }
        return lowered;
    }

    /**
     * {@code pid}, and when it is a jail's first process (bubblewrap, {@link
     * #start(List, Path, boolean)}) the processes under it, QEMU among them:
     * read from {@code /proc/PID/task/TID/children}, no scan of every process.
     */
    static List<Long> withJailed(long pid) {
        List<Long> pids = new java.util.ArrayList<>(List.of(pid));
        if (!readQuietly(Path.of("/proc", Long.toString(pid), "comm")).strip().equals("bwrap")) {
            return pids;
        }
        for (int i = 0; i < pids.size() && pids.size() < 64; i++) {
            Path tasks = Path.of("/proc", Long.toString(pids.get(i)), "task");
            try (var threads = Files.list(tasks)) {
                for (Path t : threads.toList()) {
                    for (String c : readQuietly(t.resolve("children")).strip().split("\\s+")) {
                        if (!c.isEmpty()) {
                            pids.add(Long.parseLong(c));
                        }
                    }
                }
            } catch (IOException | RuntimeException e) {
                // the process ended meanwhile
            }
        }
        return pids;
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
        long deadline = System.nanoTime() + timeout.toNanos();
        try {
            if (child != null && !child.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
                return false;
            }
            if (!handle.isAlive()) {
                return true;
            }
            // re-attached, or a jail whose first process outlived bubblewrap (killed on its own)
            handle.onExit().get(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
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

    /**
     * Completes when the process has ended. For a process started here, at
     * once: the JDK learns of a child's end from the kernel, of any other
     * process's by looking every 0.3-5 s, so a jail's first process is
     * waited for through bubblewrap, which ends right after it.
     */
    public java.util.concurrent.CompletableFuture<ProcessHandle> onExit() {
        if (child == null || child.toHandle().equals(handle)) {
            return handle.onExit();
        }
        return child.onExit().thenCompose(p -> handle.onExit());
    }

    /** The last lines QEMU itself printed (not the guest's console). */
    public String outputTail(int lines) {
        return Tail.of(log, lines);
    }
}
