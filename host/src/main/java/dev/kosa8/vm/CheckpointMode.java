package dev.kosa8.vm;

import dev.kosa8.host.KosaException;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;

/**
 * How a running machine's RAM is saved at a checkpoint's instant
 * (docs/checkpoints.md, "Two ways to save RAM").
 *
 * <ul>
 *   <li>{@link #BACKGROUND_SNAPSHOT}: QEMU's background snapshot. The guest runs on while QEMU writes its RAM as
 *       it was at the instant, which needs userfaultfd's write protection: Linux, and QEMU allowed to use it
 *       (a process with {@code CAP_SYS_PTRACE}, or {@code vm.unprivileged_userfaultfd=1}).</li>
 *   <li>{@link #FILE_RAM}: the guest's RAM is a shared file ({@code memory-backend-file}), QEMU saves only the
 *       devices ({@code x-ignore-shared}), and the daemon copies the file in the pause, by a clone where the file
 *       system has them. Needs neither userfaultfd nor postcopy: macOS, and a Linux user without userfaultfd
 *       (Debian's and Ubuntu's default for a user who is not root).</li>
 * </ul>
 *
 * <p>Chosen once, at the daemon's start, by {@link #probe}; {@code KOSA8_CHECKPOINT_MODE=file-ram} (or
 * {@code background}) in the daemon's own environment forces one ({@code FileRamCheckpointIT} runs file RAM on a
 * host that would choose the other). A guest cannot reach the daemon's environment.
 */
public enum CheckpointMode {
    BACKGROUND_SNAPSHOT("background"),
    FILE_RAM("file-ram");

    /** The daemon's environment variable that forces a mode. */
    public static final String ENV = "KOSA8_CHECKPOINT_MODE";

    private final String word;

    CheckpointMode(String word) {
        this.word = word;
    }

    /** The mode's name, as {@link #ENV} and {@code kosa8 doctor} write it. */
    public String word() {
        return word;
    }

    /** The mode chosen, and why, in words for the log and {@code kosa8 doctor}. */
    public record Choice(CheckpointMode mode, String why) {
    }

    /** The mode of this host, from the daemon's environment and the host's userfaultfd. */
    public static Choice probe(Map<String, String> env) {
        return probe(env, Userfaultfd.usable());
    }

    /**
     * The mode for a host where QEMU may ({@code userfaultfd}) or may not use userfaultfd, unless {@code env}
     * forces one; a value of {@link #ENV} that names no mode is refused, naming the ones there are.
     */
    static Choice probe(Map<String, String> env, Userfaultfd.Answer userfaultfd) {
        String forced = env.getOrDefault(ENV, "").trim();
        if (!forced.isEmpty()) {
            for (CheckpointMode m : values()) {
                if (m.word.equals(forced)) {
                    return new Choice(m, ENV + "=" + forced + " in the daemon's environment");
                }
            }
            throw new KosaException(KosaException.Kind.USAGE, ENV + "=" + forced + " names no checkpoint mode",
                    "set it to `background` or `file-ram`, or unset it to let kosa8 choose");
        }
        return userfaultfd.usable()
                ? new Choice(BACKGROUND_SNAPSHOT, "QEMU may use userfaultfd (" + userfaultfd.why() + ")")
                : new Choice(FILE_RAM, "QEMU may not use userfaultfd (" + userfaultfd.why() + ")");
    }

    /** Whether QEMU started by this process may use userfaultfd: what background snapshots and lazy loads need. */
    public static final class Userfaultfd {
        private Userfaultfd() {
        }

        /** The answer, and why, in words. */
        public record Answer(boolean usable, String why) {
        }

        /**
         * Asks the kernel for a userfaultfd, as QEMU 7.2 does (without {@code UFFD_USER_MODE_ONLY}), and lets it
         * go: the kernel grants one to a process with {@code CAP_SYS_PTRACE} (root, outside a container that drops
         * it), or to anyone where the sysctl {@code vm.unprivileged_userfaultfd} is 1, and a seccomp filter (a
         * container's) may refuse it outright. Asked rather than inferred from the user id, so root in a
         * container without the capability gets file RAM rather than checkpoints that fail. The answer names
         * the sysctl's value, which is what a user who is not root can change.
         */
        public static Answer usable() {
            if (!System.getProperty("os.name", "").equals("Linux")) {
                return new Answer(false, System.getProperty("os.name") + " has no userfaultfd");
            }
            String sysctl = sysctl();
            if (!dev.kosa8.host.NativeCall.AVAILABLE) {
                return new Answer(false, "cannot ask the kernel on this architecture");
            }
            int errno = Probe.open();
            if (errno == 0) {
                return new Answer(true, "the kernel grants one (vm.unprivileged_userfaultfd is " + sysctl + ")");
            }
            return new Answer(false, "the kernel refuses one (errno " + errno + "; not root, or root without"
                    + " CAP_SYS_PTRACE, and vm.unprivileged_userfaultfd is " + sysctl + ")");
        }

        private static String sysctl() {
            // (not Files.readString: Java 25 reads one byte of a /proc/sys file, which here happens to be all)
            try (InputStream in = Files.newInputStream(Path.of("/proc/sys/vm/unprivileged_userfaultfd"))) {
                return new String(in.readAllBytes(), StandardCharsets.US_ASCII).trim();
            } catch (IOException e) {
                return "unknown";
            }
        }

        /** The system call itself, made only when asked (its handles need the native linker). */
        private static final class Probe {
            private static final java.lang.invoke.MethodHandle SYSCALL = dev.kosa8.host.NativeCall.handle("syscall",
                    1, java.lang.foreign.ValueLayout.JAVA_LONG, java.lang.foreign.ValueLayout.JAVA_LONG,
                    java.lang.foreign.ValueLayout.JAVA_LONG);
            private static final java.lang.invoke.MethodHandle CLOSE = dev.kosa8.host.NativeCall.handle("close", -1,
                    java.lang.foreign.ValueLayout.JAVA_INT, java.lang.foreign.ValueLayout.JAVA_INT);

            /** 0 when a userfaultfd was made (and closed again), else the errno. */
            static int open() {
                long nr = dev.kosa8.protocol.LinuxAbi.current().sysUserfaultfd();
                long flags = dev.kosa8.protocol.LinuxAbi.O_CLOEXEC | dev.kosa8.protocol.LinuxAbi.O_NONBLOCK;
                try (java.lang.foreign.Arena arena = java.lang.foreign.Arena.ofConfined()) {
                    long fd = dev.kosa8.host.NativeCall.call(arena, "userfaultfd",
                            st -> (long) SYSCALL.invokeExact(st, nr, flags), true, Errno::new);
                    dev.kosa8.host.NativeCall.call(arena, "close", st -> (int) CLOSE.invokeExact(st, (int) fd), false,
                            Errno::new);
                    return 0;
                } catch (Errno e) {
                    return e.errno;
                }
            }
        }

        private static final class Errno extends Exception {
            final int errno;

            Errno(int errno) {
                super("errno " + errno);
                this.errno = errno;
            }
        }
    }
}
