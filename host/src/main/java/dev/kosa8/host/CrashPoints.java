package dev.kosa8.host;

import static java.lang.foreign.ValueLayout.JAVA_INT;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.invoke.MethodHandle;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.function.LongSupplier;

/**
 * For tests only: the fault-injection hook of the crash walk
 * (docs/checkpoints.md, "Crash walk"). Every named step of checkpoint,
 * rewind, fork, stop, start, template creation, image build, secret set and accept
 * calls {@link #reached} as it completes; with the hook off (the default, and
 * always in use) that does nothing. The hook is set once, when the process
 * starts, from its own environment variable {@value #ENVIRONMENT}, and from
 * nothing else: no API call, no file a guest could write, no message from a
 * guest sets it ({@code CrashPointsTest} checks that {@link #install} is
 * called from the entry points alone, with the process's environment).
 *
 * <pre>KOSA8_TEST_CRASH="record=/tmp/steps"                           every point reached, one line each
 *KOSA8_TEST_CRASH="record=/tmp/steps;kill=checkpoint/disk:daemon"  SIGKILL this process at that point
 *KOSA8_TEST_CRASH="record=/tmp/steps;kill=rewind/quit:qemu"        SIGKILL the sandbox's QEMU there
 *KOSA8_TEST_CRASH="record=/tmp/steps;fail=checkpoint/disk,rewind/quit"  those steps throw (each once), their clean-ups run</pre>
 *
 * The record file gets a line {@code operation/step} for each point reached
 * ({@code operation/step +qemu} where the sandbox's QEMU runs there, so the
 * walk kills QEMU only where there is one), and {@code killed operation/step target} (written and forced to disk
 * first) for the kill: the walk learns the step names from the record of one
 * run, so a step added to the code is walked without the test naming it, and
 * it knows whether its kill happened. A point is killed at its first reach
 * only.
 */
public final class CrashPoints {
    public static final String ENVIRONMENT = "KOSA8_TEST_CRASH";

    /** Whom a kill point kills: the process that reached it (the daemon, or the CLI for CLI-side steps), or QEMU. */
    public enum Target {
        DAEMON, QEMU
    }

    /** A point to kill at: {@code operation/step}, and whom. */
    public record Kill(String point, Target target) {
        public Kill {
            if (!point.matches("[a-z-]+/[a-z0-9-]+")) {
                throw new IllegalArgumentException("a crash point is operation/step in lower case, not " + point);
            }
        }
    }

    /**
     * What the environment asked for; {@link #OFF} when it asked for nothing.
     * {@code fail} names points at which the step fails (an
     * {@link InjectedFault} thrown), each at its first reach, so that the
     * operation's own clean-up runs: one operation after another meets the
     * next of them.
     */
    public record Settings(Optional<Path> record, Optional<Kill> kill, Set<String> fail) {
        public static final Settings OFF = new Settings(Optional.empty(), Optional.empty());

        public Settings {
            fail = Set.copyOf(fail);
        }

        public Settings(Optional<Path> record, Optional<Kill> kill) {
            this(record, kill, Set.of());
        }

        public boolean on() {
            return record.isPresent() || kill.isPresent() || !fail.isEmpty();
        }

        /** The settings {@code env} asks for; a malformed value is refused, never half-used. */
        public static Settings of(Map<String, String> env) {
            String value = env.get(ENVIRONMENT);
            if (value == null || value.isBlank()) {
                return OFF;
            }
            Optional<Path> record = Optional.empty();
            Optional<Kill> kill = Optional.empty();
            Set<String> fail = new java.util.LinkedHashSet<>();
            for (String part : value.split(";")) {
                String p = part.strip();
                if (p.startsWith("record=") && p.length() > "record=".length()) {
                    record = Optional.of(Path.of(p.substring("record=".length())).toAbsolutePath());
                } else if (p.startsWith("kill=") && p.lastIndexOf(':') > "kill=".length()) {
                    int colon = p.lastIndexOf(':');
                    String who = p.substring(colon + 1);
                    Target target = switch (who) {
                        case "daemon" -> Target.DAEMON;
                        case "qemu" -> Target.QEMU;
                        default -> throw refused(value, "the target is daemon or qemu, not " + who);
                    };
                    try {
                        kill = Optional.of(new Kill(p.substring("kill=".length(), colon), target));
                    } catch (IllegalArgumentException e) {
                        throw refused(value, e.getMessage());
                    }
                } else if (p.startsWith("fail=")) {
                    for (String point : p.substring("fail=".length()).split(",", -1)) {
                        if (!point.matches("[a-z-]+/[a-z0-9-]+")) {
                            throw refused(value, "a fault point is operation/step in lower case, not " + point);
                        }
                        fail.add(point);
                    }
                } else if (!p.isEmpty()) {
                    throw refused(value, "cannot read \"" + p + "\"");
                }
            }
            return new Settings(record, kill, fail);
        }

        private static KosaException refused(String value, String why) {
            return new KosaException(KosaException.Kind.USAGE, ENVIRONMENT + "=" + value + " is not a crash point "
                    + "setting: " + why, "it is for tests only: unset it, or write"
                    + " record=FILE;kill=operation/step:daemon|qemu;fail=operation/step,...");
        }
    }

    private static volatile Settings settings = Settings.OFF;
    private static volatile boolean installed;
    private static volatile boolean killed;
    private static final Set<String> FAILED = java.util.concurrent.ConcurrentHashMap.newKeySet();

    /** The failure a {@code fail=} point throws: an unexpected error of the step, as a real one would be. */
    public static final class InjectedFault extends RuntimeException {
        InjectedFault(String point) {
            super("a fault injected at " + point + " (" + ENVIRONMENT + ", for tests only)");
        }
    }

    private CrashPoints() {
    }

    /**
     * Sets the hook from the process's environment; called once, by the
     * daemon's and the CLI's entry points, before anything else runs. Later
     * calls change nothing.
     */
    public static synchronized Settings install(Map<String, String> env) {
        if (!installed) {
            installed = true;
            settings = Settings.of(env);
        }
        return settings;
    }

    /** For this package's tests: the hook as {@code s}, its one kill not yet spent. */
    static synchronized void setForTest(Settings s) {
        installed = true;
        settings = s;
        killed = false;
        FAILED.clear();
    }

    /** What the hook is set to. */
    public static Settings settings() {
        return settings;
    }

    /** A point with no QEMU of its own (or whose QEMU is not known): a {@code qemu} kill there kills nothing. */
    public static void reached(String operation, String step) {
        reached(operation, step, () -> 0);
    }

    /**
     * The step {@code step} of {@code operation} is done. With the hook off,
     * nothing happens; {@code qemuPid} is not even asked.
     */
    public static void reached(String operation, String step, LongSupplier qemuPid) {
        Settings s = settings;
        if (!s.on()) {
            return;
        }
        String point = operation + "/" + step;
        if (s.record().isPresent()) {
            long pid = qemuPid.getAsLong();
            boolean qemu = pid > 0 && ProcessHandle.of(pid).map(ProcessHandle::isAlive).orElse(false);
            append(s.record().get(), point + (qemu ? " +qemu" : ""));
        }
        if (s.fail().contains(point) && FAILED.add(point)) {
            s.record().ifPresent(f -> append(f, "failed " + point));
            throw new InjectedFault(point);
        }
        Optional<Kill> kill = s.kill();
        if (kill.isEmpty() || !kill.get().point().equals(point) || killed) {
            return;
        }
        killed = true;
        long pid = kill.get().target() == Target.DAEMON ? ProcessHandle.current().pid() : qemuPid.getAsLong();
        if (pid <= 0) {
            s.record().ifPresent(f -> append(f, "no-qemu " + point));
            return;
        }
        s.record().ifPresent(f -> append(f, "killed " + point + " " + kill.get().target().name().toLowerCase()));
        if (!sigkill(pid)) {
            s.record().ifPresent(f -> append(f, "no-qemu " + point));
            return;
        }
        if (kill.get().target() == Target.DAEMON) {
            Runtime.getRuntime().halt(137); // not reached: SIGKILL cannot be caught
        }
    }

    private static synchronized void append(Path file, String line) {
        try (FileChannel ch = FileChannel.open(file, StandardOpenOption.CREATE, StandardOpenOption.WRITE,
                StandardOpenOption.APPEND)) {
            ch.write(java.nio.ByteBuffer.wrap((line + "\n").getBytes(StandardCharsets.UTF_8)));
            ch.force(true);
        } catch (IOException e) {
            System.err.println("kosa8: cannot record crash point " + line + " in " + file + ": " + e.getMessage());
        }
    }

    /**
     * kill(2), linked on first use: linking a downcall spins up the foreign linker (about 80 classes and 40
     * generated lambda forms), which every CLI start paid for a hook that is off (docs/performance.md).
     */
    private static final class Kill9 {
        static final MethodHandle KILL = NativeCall.handle("kill", -1, JAVA_INT, JAVA_INT, JAVA_INT);
    }

    /** False when there is no such process (a QEMU already gone). */
    private static boolean sigkill(long pid) {
        try (Arena arena = Arena.ofConfined()) {
            NativeCall.call(arena, "kill", st -> (int) Kill9.KILL.invokeExact(st, (int) pid, 9), true,
                    errno -> new IllegalStateException("kill(" + pid + ", SIGKILL) failed: errno " + errno));
            return true;
        } catch (IllegalStateException e) {
            return false;
        }
    }
}
