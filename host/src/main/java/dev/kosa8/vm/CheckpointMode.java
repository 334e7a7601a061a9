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
 *       (root, or {@code vm.unprivileged_userfaultfd=1}).</li>
 *   <li>{@link #FILE_RAM}: the guest's RAM is a shared file ({@code memory-backend-file}), QEMU saves only the
 *       devices ({@code x-ignore-shared}), and the daemon copies the file in the pause, by a clone where the file
 *       system has them. Needs neither userfaultfd nor postcopy: macOS, and a Linux user without userfaultfd
 *       (Debian's and Ubuntu's default for a user who is not root).</li>
 * </ul>
 *
 * <p>Chosen once, at the daemon's start, by {@link #probe}; {@code KOSA8_CHECKPOINT_MODE=file-ram} (or
 * {@code background}) in the daemon's own environment forces one, so the suite's checkpoint tests run on file
 * RAM here. A guest cannot reach the daemon's environment.
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
         * Linux, and root or the sysctl {@code vm.unprivileged_userfaultfd} at 1: QEMU 7.2 asks the kernel for a
         * userfaultfd without {@code UFFD_USER_MODE_ONLY}, which a user without {@code CAP_SYS_PTRACE} is refused
         * otherwise.
         */
        public static Answer usable() {
            if (!System.getProperty("os.name", "").equals("Linux")) {
                return new Answer(false, System.getProperty("os.name") + " has no userfaultfd");
            }
            try {
                Object uid = Files.getAttribute(Path.of("/proc/self"), "unix:uid");
                if (uid instanceof Integer u && u == 0) {
                    return new Answer(true, "the daemon runs as root");
                }
                // (not Files.readString: Java 25 reads one byte of a /proc/sys file, which here happens to be all)
                try (InputStream in = Files.newInputStream(Path.of("/proc/sys/vm/unprivileged_userfaultfd"))) {
                    String v = new String(in.readAllBytes(), StandardCharsets.US_ASCII).trim();
                    return v.equals("1") ? new Answer(true, "vm.unprivileged_userfaultfd is 1")
                            : new Answer(false, "not root, and vm.unprivileged_userfaultfd is " + v);
                }
            } catch (IOException | RuntimeException e) {
                return new Answer(false, "cannot tell: " + e.getMessage());
            }
        }
    }
}
