package dev.kosa8.client;

import dev.kosa8.protocol.Message;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * One sandbox: a microVM with its own kernel, at most one live host folder, a
 * closed network and keys kept outside. Closing it removes it, unless it was
 * made with {@link SandboxSpec#keep} or found with {@link Kosa8#sandbox}.
 * <pre>{@code
 * try (Sandbox s = kosa8.create(SandboxSpec.builder().build())) {
 *     ExecResult r = s.exec("python3", "-c", "print(6*7)");
 *     Checkpoint before = s.checkpoint("before");
 *     s.files().write("/root/x", "changed".getBytes());
 *     s.rewind(before);                      // the machine is back as it was
 * }
 * }</pre>
 */
public final class Sandbox implements AutoCloseable {
    /** The most {@link #exec(Command)} keeps of each stream; stream larger output with the other exec. */
    public static final int MAX_COLLECTED = 64 << 20;

    private final DaemonConnection daemon;
    private final String id;
    private final boolean removeOnClose;
    private final AtomicBoolean closed = new AtomicBoolean();

    Sandbox(DaemonConnection daemon, String id, boolean removeOnClose) {
        this.daemon = daemon;
        this.id = id;
        this.removeOnClose = removeOnClose;
    }

    public String id() {
        return id;
    }

    private String path() {
        return "/v1/sandboxes/" + id;
    }

    /** Its state and settings now. */
    public SandboxInfo info() {
        return SandboxInfo.of(daemon.call("GET", path()));
    }

    /** Runs a program (no shell) and waits for it: its exit code and output. */
    public ExecResult exec(String... argv) {
        return exec(Command.of(argv));
    }

    /**
     * Runs {@code command} and waits for it. Each stream is collected up to {@link #MAX_COLLECTED}; past that the
     * command is hung up on and this throws {@link LimitExceededException}.
     */
    public ExecResult exec(Command command) {
        Collector out = new Collector();
        Collector err = new Collector();
        Outcome o = run(command, out, err);
        if (out.over || err.over) {
            throw new LimitExceededException("the command wrote more than " + (MAX_COLLECTED >> 20) + " MiB to "
                    + (out.over ? "stdout" : "stderr"), "stream it: exec(command, out, err)", 8);
        }
        return new ExecResult(o.exitCode, out.toByteArray(), err.toByteArray(), o.timedOut);
    }

    /** Runs {@code command}, streaming its output into {@code out} and {@code err} as it comes: its exit code. */
    public int exec(Command command, OutputStream out, OutputStream err) {
        return run(command, out, err).exitCode;
    }

    private record Outcome(int exitCode, boolean timedOut) {
    }

    private Outcome run(Command c, OutputStream out, OutputStream err) {
        ExecChannel ch = new ExecChannel(daemon.upgrade(path() + "/exec"));
        ch.send(new Message.Exec(ExecChannel.CH, new Message.ExecSpec(c.argv(), c.env(), c.cwd(), c.user(), false, 0,
                0)));
        if (c.stdin() != null) {
            ch.pumpStdin(new ByteArrayInputStream(c.stdin()));
        } else {
            ch.send(new Message.Eof(ExecChannel.CH, Message.Stream.STDIN));
        }
        AtomicBoolean timedOut = new AtomicBoolean();
        Thread timer = c.timeout() == null ? null : Thread.ofVirtual().start(() -> {
            try {
                Thread.sleep(c.timeout());
                timedOut.set(true);
                ch.send(new Message.Signal(ExecChannel.CH, 9));
            } catch (InterruptedException e) {
                // it ended in time
            }
        });
        try {
            int code = ch.await(out, err, null);
            return new Outcome(code, timedOut.get());
        } finally {
            if (timer != null) {
                timer.interrupt();
            }
        }
    }

    /** Starts a background process the daemon keeps (docs/processes.md); it runs on whether or not you read it. */
    public BackgroundProcess start(Command command) {
        return BackgroundProcess.start(daemon, id, command);
    }

    /** A background process by id ({@code p1}...). */
    public BackgroundProcess process(String processId) {
        return new BackgroundProcess(daemon, id, processId);
    }

    /** Its background processes: those running and the last ones that ended. */
    public List<ProcessInfo> processes() {
        return Json.list(daemon.call("GET", path() + "/processes")).stream().map(ProcessInfo::of).toList();
    }

    /** Its files, by absolute guest path. */
    public SandboxFiles files() {
        return new SandboxFiles(daemon, id);
    }

    /** Takes a whole-machine checkpoint and returns once it is committed to disk. */
    public Checkpoint checkpoint(String message) {
        return Checkpoint.of(daemon.call("POST", path() + "/checkpoints?message=" + enc(message) + "&wait=true"));
    }

    /** Its checkpoints, oldest first. */
    public List<Checkpoint> checkpoints() {
        return Json.list(daemon.call("GET", path() + "/checkpoints")).stream().map(Checkpoint::of).toList();
    }

    /** Rewinds the whole machine, in place, to {@code checkpoint}: memory, processes, disk and folder. */
    public void rewind(Checkpoint checkpoint) {
        daemon.call("POST", path() + "/rewind?checkpoint=" + enc(checkpoint.id()));
    }

    /** Rewinds to its latest checkpoint that did not fail. */
    public void rewind() {
        daemon.call("POST", path() + "/rewind");
    }

    /**
     * A new sandbox running on from {@code checkpoint}, with its own disk, folder copy and broker; closing the
     * returned sandbox removes it.
     */
    public Sandbox fork(Checkpoint checkpoint) {
        Object s = daemon.call("POST", path() + "/fork?checkpoint=" + enc(checkpoint.id()));
        return new Sandbox(daemon, Json.text(s, "id"), true);
    }

    /** Pauses it to disk (its machine saved as it runs); {@link #resume()} goes on from there. */
    public void stop() {
        daemon.call("POST", path() + "/stop");
    }

    /** Resumes a stopped sandbox where it stopped. */
    public void resume() {
        daemon.call("POST", path() + "/start");
    }

    /** Removes it now, running or not (held changes to its folder are kept for review). */
    public void remove() {
        closed.set(true);
        daemon.call("DELETE", path() + "?force=true");
    }

    /** Removes it, unless it is kept; again does nothing. */
    @Override
    public void close() {
        if (removeOnClose && closed.compareAndSet(false, true)) {
            daemon.call("DELETE", path() + "?force=true");
        }
    }

    static String enc(String s) {
        return java.net.URLEncoder.encode(s, java.nio.charset.StandardCharsets.UTF_8);
    }

    @Override
    public String toString() {
        return "Sandbox[" + id + "]";
    }

    /** Collects a stream up to {@link #MAX_COLLECTED}, then refuses, which hangs the command up. */
    private static final class Collector extends OutputStream {
        private final java.io.ByteArrayOutputStream bytes = new java.io.ByteArrayOutputStream();
        boolean over;

        @Override
        public void write(int b) throws IOException {
            write(new byte[] {(byte) b}, 0, 1);
        }

        @Override
        public void write(byte[] b, int off, int len) throws IOException {
            if (bytes.size() + len > MAX_COLLECTED) {
                over = true;
                throw new IOException("more than " + MAX_COLLECTED + " bytes");
            }
            bytes.write(b, off, len);
        }

        byte[] toByteArray() {
            return bytes.toByteArray();
        }
    }
}
