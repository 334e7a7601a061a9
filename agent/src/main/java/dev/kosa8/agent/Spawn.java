package dev.kosa8.agent;

import dev.kosa8.protocol.LinuxAbi;
import java.io.FileInputStream;
import java.io.FileOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;
import java.util.List;
import java.util.Map;

/**
 * Starts processes with glibc's {@code posix_spawn} through FFM instead of
 * {@link ProcessBuilder}: one exec per command instead of three. Java's
 * launcher first execs {@code jspawnhelper}, and a new session needed a
 * {@code setsid} program on top; under TCG each exec costs about 50 ms
 * (bench/history/foundation.md, runs 1 and 2). {@code POSIX_SPAWN_SETSID} makes the child a session and
 * process-group leader in the same exec; for a TTY exec the child opens the
 * PTY's slave after {@code setsid}, which makes it the controlling terminal.
 * The child gets default signal dispositions, an empty signal mask and no
 * file descriptor of the agent's (close-from 3), so a guest process never
 * inherits the agent's port.
 *
 * <p>The agent reaps its children itself with {@code waitpid}, which also
 * tells a death by signal from an exit code.
 */
final class Spawn {
    private static final int POSIX_SPAWN_SETSIGDEF = 0x04;
    private static final int POSIX_SPAWN_SETSIGMASK = 0x08;
    private static final int POSIX_SPAWN_SETSID = 0x80;
    private static final int O_RDWR = LinuxAbi.O_RDWR;
    private static final int O_CLOEXEC = LinuxAbi.O_CLOEXEC;
    /** glibc's opaque spawn structures are 80 and 336 bytes; allocate with room to spare. */
    private static final long OPAQUE = 1024;

    private static final MethodHandle PIPE2 = h("pipe2", ValueLayout.JAVA_INT, ValueLayout.ADDRESS, ValueLayout.JAVA_INT);
    private static final MethodHandle CLOSE = h("close", ValueLayout.JAVA_INT, ValueLayout.JAVA_INT);
    private static final MethodHandle FA_INIT = h("posix_spawn_file_actions_init", ValueLayout.JAVA_INT, ValueLayout.ADDRESS);
    private static final MethodHandle FA_DESTROY = h("posix_spawn_file_actions_destroy", ValueLayout.JAVA_INT, ValueLayout.ADDRESS);
    private static final MethodHandle FA_DUP2 = h("posix_spawn_file_actions_adddup2", ValueLayout.JAVA_INT,
            ValueLayout.ADDRESS, ValueLayout.JAVA_INT, ValueLayout.JAVA_INT);
    private static final MethodHandle FA_OPEN = h("posix_spawn_file_actions_addopen", ValueLayout.JAVA_INT,
            ValueLayout.ADDRESS, ValueLayout.JAVA_INT, ValueLayout.ADDRESS, ValueLayout.JAVA_INT, ValueLayout.JAVA_INT);
    private static final MethodHandle FA_CHDIR = h("posix_spawn_file_actions_addchdir_np", ValueLayout.JAVA_INT,
            ValueLayout.ADDRESS, ValueLayout.ADDRESS);
    private static final MethodHandle FA_CLOSEFROM = h("posix_spawn_file_actions_addclosefrom_np", ValueLayout.JAVA_INT,
            ValueLayout.ADDRESS, ValueLayout.JAVA_INT);
    private static final MethodHandle ATTR_INIT = h("posix_spawnattr_init", ValueLayout.JAVA_INT, ValueLayout.ADDRESS);
    private static final MethodHandle ATTR_DESTROY = h("posix_spawnattr_destroy", ValueLayout.JAVA_INT, ValueLayout.ADDRESS);
    private static final MethodHandle ATTR_FLAGS = h("posix_spawnattr_setflags", ValueLayout.JAVA_INT,
            ValueLayout.ADDRESS, ValueLayout.JAVA_SHORT);
    private static final MethodHandle ATTR_SIGMASK = h("posix_spawnattr_setsigmask", ValueLayout.JAVA_INT,
            ValueLayout.ADDRESS, ValueLayout.ADDRESS);
    private static final MethodHandle ATTR_SIGDEF = h("posix_spawnattr_setsigdefault", ValueLayout.JAVA_INT,
            ValueLayout.ADDRESS, ValueLayout.ADDRESS);
    private static final MethodHandle SIGEMPTYSET = h("sigemptyset", ValueLayout.JAVA_INT, ValueLayout.ADDRESS);
    private static final MethodHandle SIGFILLSET = h("sigfillset", ValueLayout.JAVA_INT, ValueLayout.ADDRESS);
    private static final MethodHandle POSIX_SPAWN = h("posix_spawn", ValueLayout.JAVA_INT, ValueLayout.ADDRESS,
            ValueLayout.ADDRESS, ValueLayout.ADDRESS, ValueLayout.ADDRESS, ValueLayout.ADDRESS, ValueLayout.ADDRESS);
    private static final MethodHandle WAITPID = Libc.handle("waitpid",
            ValueLayout.JAVA_INT, ValueLayout.JAVA_INT, ValueLayout.ADDRESS, ValueLayout.JAVA_INT);

    private Spawn() {
    }

    /** A libc function that reports failure by its result, not errno. */
    private static MethodHandle h(String name, java.lang.foreign.MemoryLayout ret, java.lang.foreign.MemoryLayout... args) {
        return Libc.plain(name, FunctionDescriptor.of(ret, args));
    }

    /** A started process: its pid and, for pipes, the agent's ends of its standard streams. */
    record Child(long pid, OutputStream stdin, InputStream stdout, InputStream stderr) {
    }

    /** How a process ended: its exit code, or the signal that killed it (then the code is 128 + signal). */
    record Status(int exitCode, int signal) {
        static Status decode(int raw) {
            int sig = raw & 0x7f;
            if (sig == 0) {
                return new Status((raw >> 8) & 0xff, 0);
            }
            return new Status(128 + sig, sig);
        }
    }

    /** posix_spawn failed; {@code errno} says why (ENOENT, EACCES, ...). */
    static final class SpawnException extends IOException {
        final int errno;

        SpawnException(String what, int errno) {
            super(what + " failed: errno " + errno);
            this.errno = errno;
        }
    }

    /** Starts {@code path} with pipes for stdin, stdout and stderr. */
    static Child withPipes(String path, List<String> argv, Map<String, String> env, String cwd) throws IOException {
        try (Arena arena = Arena.ofConfined()) {
            int[] in = pipe(arena);
            int[] out = pipe(arena);
            int[] err = pipe(arena);
            // Adopt the agent's ends while both ends of every pipe are open here: opening a pipe
            // through /proc blocks like a FIFO when its other end is gone (a child that already exited).
            OutputStream stdin = null;
            InputStream stdout = null;
            InputStream stderr = null;
            try {
                stdin = adoptOut(in[1]);
                stdout = adoptIn(out[0]);
                stderr = adoptIn(err[0]);
                long pid = spawn(arena, path, argv, env, cwd, fa -> {
                    check((int) FA_DUP2.invokeExact(fa, in[0], 0), "dup2 stdin");
                    check((int) FA_DUP2.invokeExact(fa, out[1], 1), "dup2 stdout");
                    check((int) FA_DUP2.invokeExact(fa, err[1], 2), "dup2 stderr");
                });
                return new Child(pid, stdin, stdout, stderr);
            } catch (IOException | RuntimeException e) {
                closeQuietly(stdin);
                closeQuietly(stdout);
                closeQuietly(stderr);
                throw e;
            } finally {
                close(in[0]);
                close(out[1]);
                close(err[1]);
            }
        }
    }

    private static void closeQuietly(java.io.Closeable c) {
        if (c != null) {
            try {
                c.close();
            } catch (IOException ignored) {
                // already failing
            }
        }
    }

    /** Starts {@code path} with the PTY slave at {@code tty} as its controlling terminal and standard streams. */
    static long onTerminal(String path, List<String> argv, Map<String, String> env, String cwd, String tty)
            throws IOException {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment ttyPath = arena.allocateFrom(tty);
            return spawn(arena, path, argv, env, cwd, fa -> {
                check((int) FA_OPEN.invokeExact(fa, 0, ttyPath, O_RDWR, 0), "open the terminal");
                check((int) FA_DUP2.invokeExact(fa, 0, 1), "dup2 stdout");
                check((int) FA_DUP2.invokeExact(fa, 0, 2), "dup2 stderr");
            });
        }
    }

    /** Waits for the child to end; blocks the calling (platform) thread. */
    static Status waitFor(long pid) {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment status = arena.allocate(ValueLayout.JAVA_INT);
            Libc.call(Libc.callState(arena), "waitpid(" + pid + ")",
                    st -> (int) WAITPID.invokeExact(st, (int) pid, status, 0));
            return Status.decode(status.get(ValueLayout.JAVA_INT, 0));
        }
    }

    private interface FileActions {
        void add(MemorySegment fa) throws Throwable;
    }

    private static long spawn(Arena arena, String path, List<String> argv, Map<String, String> env, String cwd,
                              FileActions actions) throws IOException {
        MemorySegment fa = arena.allocate(OPAQUE, 16);
        MemorySegment attr = arena.allocate(OPAQUE, 16);
        try {
            check((int) FA_INIT.invokeExact(fa), "file actions");
            check((int) ATTR_INIT.invokeExact(attr), "spawn attributes");
            try {
                actions.add(fa);
                check((int) FA_CLOSEFROM.invokeExact(fa, 3), "close the agent's descriptors");
                check((int) FA_CHDIR.invokeExact(fa, arena.allocateFrom(cwd)), "chdir");
                MemorySegment none = arena.allocate(128, 8);
                MemorySegment all = arena.allocate(128, 8);
                int ignored = (int) SIGEMPTYSET.invokeExact(none);
                ignored = (int) SIGFILLSET.invokeExact(all);
                check((int) ATTR_SIGMASK.invokeExact(attr, none), "signal mask");
                check((int) ATTR_SIGDEF.invokeExact(attr, all), "signal defaults");
                check((int) ATTR_FLAGS.invokeExact(attr,
                        (short) (POSIX_SPAWN_SETSID | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF)), "flags");
                MemorySegment pid = arena.allocate(ValueLayout.JAVA_INT);
                MemorySegment file = arena.allocateFrom(path);
                MemorySegment args = strings(arena, argv);
                MemorySegment envp = strings(arena, env.entrySet().stream().map(e -> e.getKey() + "=" + e.getValue()).toList());
                // born in the sandbox cgroup, which a checkpoint freezes (SandboxCgroup)
                int r = SandboxCgroup.spawnInside(() -> (int) POSIX_SPAWN.invokeExact(pid, file, fa, attr, args, envp));
                if (r != 0) {
                    throw new SpawnException("posix_spawn " + path, r);
                }
                return pid.get(ValueLayout.JAVA_INT, 0);
            } finally {
                int a = (int) FA_DESTROY.invokeExact(fa);
                int b = (int) ATTR_DESTROY.invokeExact(attr);
            }
        } catch (IOException | RuntimeException e) {
            throw e;
        } catch (Throwable t) {
            throw new IOException(t);
        }
    }

    private static void check(int r, String what) throws SpawnException {
        if (r != 0) {
            throw new SpawnException(what, r);
        }
    }

    private static MemorySegment strings(Arena arena, List<String> items) {
        MemorySegment array = arena.allocate(ValueLayout.ADDRESS, items.size() + 1L);
        for (int i = 0; i < items.size(); i++) {
            array.setAtIndex(ValueLayout.ADDRESS, i, arena.allocateFrom(items.get(i)));
        }
        array.setAtIndex(ValueLayout.ADDRESS, items.size(), MemorySegment.NULL);
        return array;
    }

    private static int[] pipe(Arena arena) throws IOException {
        MemorySegment fds = arena.allocate(ValueLayout.JAVA_INT, 2);
        try {
            if ((int) PIPE2.invokeExact(fds, O_CLOEXEC) != 0) {
                throw new IOException("pipe2 failed");
            }
        } catch (IOException e) {
            throw e;
        } catch (Throwable t) {
            throw new IOException(t);
        }
        return new int[] {fds.getAtIndex(ValueLayout.JAVA_INT, 0), fds.getAtIndex(ValueLayout.JAVA_INT, 1)};
    }

    /*
     * Gives a raw pipe descriptor to Java: opening /proc/self/fd/N of a pipe
     * opens the same pipe, as a file Java owns and closes; the raw descriptor
     * is then closed.
     */
    private static InputStream adoptIn(int fd) throws IOException {
        try {
            return new FileInputStream("/proc/self/fd/" + fd);
        } finally {
            close(fd);
        }
    }

    private static OutputStream adoptOut(int fd) throws IOException {
        try {
            return new FileOutputStream("/proc/self/fd/" + fd);
        } finally {
            close(fd);
        }
    }

    static void close(int fd) {
        try {
            int ignored = (int) CLOSE.invokeExact(fd);
        } catch (Throwable t) {
            throw new IllegalStateException(t);
        }
    }
}
