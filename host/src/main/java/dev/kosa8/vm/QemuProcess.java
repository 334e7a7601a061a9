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

    private static boolean sameInstant(Instant a, Instant b) {
        // /proc reports start times in clock ticks; allow for the rounding
        return b != null && Duration.between(a, b).abs().toMillis() < 1000;
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
