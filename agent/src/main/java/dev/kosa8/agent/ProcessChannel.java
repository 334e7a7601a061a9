package dev.kosa8.agent;

import dev.kosa8.protocol.Message;
import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * A process started by the host: with pipes (stdout and stderr apart) or on a
 * pseudo-terminal. Every process is its own session and process group
 * ({@link Spawn}), so a signal from the host reaches the whole job, and a
 * hang-up reaches it as SIGHUP, as when a terminal closes.
 */
final class ProcessChannel implements Channel {
    static final String DEFAULT_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";

    private final int channel;
    private final Outbox outbox;
    private final long pid;
    private final Spawn.Child child;
    private final Pty pty;
    private final StdinPump stdin;
    private final OutputPump stdout;
    private final OutputPump stderr;

    private ProcessChannel(int channel, Outbox outbox, long pid, Spawn.Child child, Pty pty) {
        this.channel = channel;
        this.outbox = outbox;
        this.pid = pid;
        this.child = child;
        this.pty = pty;
        if (pty == null) {
            OutputStream in = child.stdin();
            this.stdin = new StdinPump(channel, outbox, new StdinPump.Sink() {
                @Override
                public void write(byte[] bytes) throws IOException {
                    in.write(bytes);
                    in.flush();
                }

                @Override
                public void close() throws IOException {
                    in.close();
                }
            }, () -> { });
            this.stdout = new OutputPump(channel, Message.Stream.STDOUT, outbox, reader(child.stdout()), true);
            this.stderr = new OutputPump(channel, Message.Stream.STDERR, outbox, reader(child.stderr()), true);
        } else {
            this.stdin = new StdinPump(channel, outbox, new StdinPump.Sink() {
                @Override
                public void write(byte[] bytes) {
                    pty.write(bytes);
                }

                @Override
                public void close() {
                    // a terminal has no end of input; the program sees ^D if the user types it
                }
            }, () -> { });
            this.stdout = new OutputPump(channel, Message.Stream.STDOUT, outbox, pty::read, true);
            this.stderr = null;
        }
        // waitpid is a blocking native call: a platform thread, not a virtual one
        Thread.ofPlatform().daemon().name("wait-" + channel).start(this::awaitExit);
    }

    private static OutputPump.Source reader(InputStream in) {
        return max -> {
            byte[] buf = new byte[max];
            int n = in.read(buf);
            return n <= 0 ? new byte[0] : (n == max ? buf : java.util.Arrays.copyOf(buf, n));
        };
    }

    /** Starts the process, or answers Failed and returns null. */
    static ProcessChannel start(int channel, Message.ExecSpec spec, Outbox outbox) {
        WorkspaceMount.syncCached(); // the command sees every change the host made to the folder before it
        Map<String, String> env = environment(spec);
        String program = spec.argv().getFirst();
        String resolved = resolve(program, env.get("PATH"));
        if (resolved == null) {
            outbox.send(new Message.Failed(channel, Message.ErrorCode.NOT_FOUND, program + ": command not found"));
            return null;
        }
        File cwd = new File(spec.cwd().isEmpty() ? defaultCwd() : spec.cwd());
        if (!cwd.isDirectory()) {
            outbox.send(new Message.Failed(channel, Message.ErrorCode.INVALID,
                    "working directory " + cwd + " does not exist in the sandbox"));
            return null;
        }
        List<String> argv = new ArrayList<>();
        String path = resolved;
        if (!spec.user().isEmpty() && !spec.user().equals("root") && !spec.user().equals("0")) {
            path = UserSwitch.program();
            argv.addAll(UserSwitch.prefix(spec.user()));
        }
        argv.add(resolved);
        argv.addAll(spec.argv().subList(1, spec.argv().size()));
        if (path.equals(resolved)) {
            argv.set(0, program); // argv[0] as the user typed it, as a shell passes it
        }
        Pty pty = null;
        try {
            if (spec.tty()) {
                pty = Pty.open(spec.rows(), spec.columns());
                long pid = Spawn.onTerminal(path, argv, env, cwd.getPath(), pty.slavePath());
                outbox.send(new Message.Started(channel, pid));
                return new ProcessChannel(channel, outbox, pid, null, pty);
            }
            Spawn.Child child = Spawn.withPipes(path, argv, env, cwd.getPath());
            outbox.send(new Message.Started(channel, child.pid()));
            return new ProcessChannel(channel, outbox, child.pid(), child, null);
        } catch (Spawn.SpawnException e) {
            if (pty != null) {
                pty.close();
            }
            Message.ErrorCode code = switch (e.errno) {
                case 2 -> Message.ErrorCode.NOT_FOUND;
                case 13 -> Message.ErrorCode.PERMISSION;
                case 11, 12, 24 -> Message.ErrorCode.RESOURCES;
                default -> Message.ErrorCode.INTERNAL;
            };
            outbox.send(new Message.Failed(channel, code, "cannot start " + program + ": " + e.getMessage()));
            return null;
        } catch (IOException | RuntimeException e) {
            if (pty != null) {
                pty.close();
            }
            outbox.send(new Message.Failed(channel, Message.ErrorCode.INTERNAL, "cannot start " + program + ": " + e.getMessage()));
            return null;
        }
    }

    private static String defaultCwd() {
        Path workspace = WorkspaceMount.defaultDirectory();
        return workspace != null ? workspace.toString() : "/";
    }

    static Map<String, String> environment(Message.ExecSpec spec) {
        Map<String, String> env = new HashMap<>();
        env.put("PATH", DEFAULT_PATH);
        env.put("HOME", spec.user().isEmpty() || spec.user().equals("root") ? "/root" : "/home/" + spec.user());
        env.put("LANG", "C.UTF-8");
        env.put("USER", spec.user().isEmpty() ? "root" : spec.user());
        if (spec.tty()) {
            env.put("TERM", "xterm-256color");
        }
        env.putAll(SandboxEnvironment.load());
        env.putAll(spec.env());
        return env;
    }

    /** Looks a program up on PATH as execvp would; null if there is no executable file of that name. */
    static String resolve(String program, String path) {
        if (program.contains("/")) {
            File f = new File(program);
            return f.isFile() && f.canExecute() ? program : null;
        }
        for (String dir : (path == null ? DEFAULT_PATH : path).split(":")) {
            File f = new File(dir.isEmpty() ? "." : dir, program);
            if (f.isFile() && f.canExecute()) {
                return f.getPath();
            }
        }
        return null;
    }

    private void awaitExit() {
        try {
            Spawn.Status status = Spawn.waitFor(pid);
            if (pty == null) {
                stdout.awaitDone();
            } else if (!stdout.awaitDone(500)) {
                // a background job still holds the terminal; the exit of the main process ends the exec
                stdout.close();
            }
            if (stderr != null) {
                stderr.awaitDone();
            }
            stdin.end();
            WorkspaceMount.flushCached(); // what it wrote to the folder is on the host before it is said to have ended
            outbox.send(new Message.Exited(channel, status.exitCode(), status.signal()));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } finally {
            if (pty != null) {
                pty.close();
            }
            if (child != null) {
                closeQuietly(child.stdout());
                closeQuietly(child.stderr());
            }
            outbox.done(channel);
        }
    }

    private static void closeQuietly(java.io.Closeable c) {
        try {
            c.close();
        } catch (IOException ignored) {
            // already closed
        }
    }

    @Override
    public void onData(byte[] bytes) {
        stdin.offer(bytes);
    }

    @Override
    public void onEof() {
        stdin.end();
    }

    @Override
    public void onCredit(Message.Stream stream, int bytes) {
        switch (stream) {
            case STDOUT -> stdout.credit(bytes);
            case STDERR -> {
                if (stderr != null) {
                    stderr.credit(bytes);
                }
            }
            case STDIN -> throw new dev.kosa8.protocol.ProtocolException("credit for stdin sent to the guest");
        }
    }

    @Override
    public void onSignal(int signal) {
        try {
            kill(-pid, signal);
        } catch (PosixException e) {
            // the group is gone; the exit is on its way
        }
    }

    @Override
    public void onResize(int rows, int columns) {
        if (pty != null) {
            try {
                pty.resize(rows, columns);
            } catch (PosixException e) {
                // the terminal closed as the process ended
            }
        }
    }

    @Override
    public void hangUp() {
        stdout.close();
        if (stderr != null) {
            stderr.close();
        }
        stdin.end();
        onSignal(1); // SIGHUP
    }

    /** Sends a signal to a process ({@code pid > 0}) or a process group ({@code pid < 0}). */
    private static void kill(long pid, int signal) {
        Libc.call("kill", st -> (int) Kill.KILL.invokeExact(st, (int) pid, signal));
    }

    /** kill(2)'s handle, made at the first signal rather than on every exec's path. */
    private static final class Kill {
        static final MethodHandle KILL = Libc.handle("kill",
                ValueLayout.JAVA_INT, ValueLayout.JAVA_INT, ValueLayout.JAVA_INT);
    }
}
