package dev.kosa8.agent;

import java.io.IOException;
import java.lang.foreign.FunctionDescriptor;
import java.lang.invoke.MethodHandle;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;

/**
 * The cgroup every process the host starts lives in, so that a checkpoint can
 * freeze them all at one instant while the agent, which must go on talking to
 * the host (and relaying the workspace), stays outside.
 *
 * <p>A new process is born in its parent's cgroup, and posix_spawn cannot
 * name another. So the agent steps into the sandbox cgroup for the moment of
 * each spawn and back out after: the child is born inside, and so is
 * everything it ever forks, with no window in which a fork could escape. The
 * steps, and freezing, hold one lock, so the agent is never inside a frozen
 * cgroup. Writing a pid to {@code cgroup.procs} moves the whole process, all
 * its threads.
 *
 * <p>Layout under the unified hierarchy: {@code /sys/fs/cgroup/kosa8-agent}
 * (the agent) and {@code /sys/fs/cgroup/kosa8-sandbox} (the rest). No
 * controllers are enabled, so neither has resource limits; the freezer is
 * part of every cgroup v2.
 */
final class SandboxCgroup {
    static final Path ROOT = Path.of("/sys/fs/cgroup");
    private static final Path AGENT = ROOT.resolve("kosa8-agent");
    private static final Path SANDBOX = ROOT.resolve("kosa8-sandbox");
    private static final Object LOCK = new Object();
    private static volatile boolean ready;
    private static volatile String unavailable = "not set up yet";
    /**
     * The sandbox's {@code cgroup.freeze}, open for the agent's life: a thaw is the first thing a restored guest's
     * agent does for its processes, and opening the file by name each time (a path walk, a truncation) was code a
     * fresh QEMU translated anew on every wake under TCG.
     */
    private static FileChannel freezeFile;

    private SandboxCgroup() {
    }

    /** At agent start: makes both cgroups and moves the agent into its own. Without cgroup v2 the agent runs on, unable to freeze. */
    static void setUp() {
        try {
            if (!Files.exists(ROOT.resolve("cgroup.controllers"))) {
                throw new IOException(ROOT + " is not a cgroup v2 mount");
            }
            Files.createDirectories(AGENT);
            Files.createDirectories(SANDBOX);
            moveSelf(AGENT);
            freezeFile = FileChannel.open(SANDBOX.resolve("cgroup.freeze"), StandardOpenOption.WRITE);
            ready = true;
            unavailable = null;
        } catch (IOException | RuntimeException e) {
            unavailable = e.getMessage();
            Log.info("no sandbox cgroup, so no checkpoints: " + e.getMessage());
        }
    }

    /** Runs {@code spawn} with the agent inside the sandbox cgroup, so what it starts is born there. */
    static <T> T spawnInside(Spawner<T> spawn) throws Throwable {
        if (!ready) {
            return spawn.call();
        }
        synchronized (LOCK) {
            moveSelf(SANDBOX);
            try {
                return spawn.call();
            } finally {
                moveSelf(AGENT);
            }
        }
    }

    /**
     * Freezes every process in the sandbox cgroup and waits until the kernel
     * says all are frozen (none is inside a system call then), then syncs.
     * On timeout it thaws them again and fails.
     */
    static void freeze(long timeoutMillis) throws IOException, InterruptedException {
        if (!ready) {
            throw new IOException("the guest has no sandbox cgroup: " + unavailable);
        }
        synchronized (LOCK) {
            setFrozen(true);
            long deadline = System.nanoTime() + timeoutMillis * 1_000_000L;
            long pause = 1;
            while (!frozen()) {
                if (System.nanoTime() > deadline) {
                    setFrozen(false);
                    throw new IOException("the sandbox's processes did not freeze within " + timeoutMillis + " ms");
                }
                Thread.sleep(pause);
                pause = Math.min(pause * 2, 20);
            }
        }
        sync();
    }

    /**
     * sync(2): flushes every file system's dirty data to its device; it cannot fail. Its handle is made
     * at the first freeze, not at the agent's start ({@link #setUp}), which is on every boot's path.
     */
    private static final class Sync {
        static final MethodHandle SYNC = Libc.plain("sync", FunctionDescriptor.ofVoid());
    }

    private static void sync() {
        try {
            Sync.SYNC.invokeExact();
        } catch (Throwable t) {
            throw new IllegalStateException(t);
        }
    }

    static void thaw() throws IOException {
        if (ready) {
            synchronized (LOCK) {
                setFrozen(false);
            }
        }
    }

    /** A native call, which may throw anything. */
    @FunctionalInterface
    interface Spawner<T> {
        T call() throws Throwable;
    }

    private static boolean frozen() throws IOException {
        for (String line : Files.readAllLines(SANDBOX.resolve("cgroup.events"), StandardCharsets.US_ASCII)) {
            if (line.equals("frozen 1")) {
                return true;
            }
        }
        return false;
    }

    private static void moveSelf(Path cgroup) {
        try {
            write(cgroup.resolve("cgroup.procs"), Long.toString(ProcessHandle.current().pid()));
        } catch (IOException e) {
            throw new IllegalStateException("cannot move the agent to " + cgroup + ": " + e.getMessage(), e);
        }
    }

    /** One write of the whole value: the kernel takes a cgroup file's value per write, whatever the offset. */
    private static void setFrozen(boolean frozen) throws IOException {
        ByteBuffer value = ByteBuffer.wrap(frozen ? ONE : ZERO);
        if (freezeFile.write(value, 0) != 1) {
            throw new IOException("cgroup.freeze took a short write");
        }
    }

    private static final byte[] ONE = {'1'};
    private static final byte[] ZERO = {'0'};

    private static void write(Path file, String value) throws IOException {
        Files.writeString(file, value, StandardCharsets.US_ASCII);
    }
}
