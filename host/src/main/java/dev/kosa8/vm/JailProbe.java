package dev.kosa8.vm;

import dev.kosa8.host.HostTools;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.TimeUnit;

/**
 * Finds out whether this host can put QEMU in its {@link Jail}, the way
 * {@link AcceleratorProbe} finds the accelerator: bubblewrap must be
 * installed and make the jail's namespaces for this user (a user without
 * privileges needs unprivileged user namespaces, which some hosts turn off),
 * which it is asked to do once with {@code true} in QEMU's place. The daemon
 * asks once at start and says in its log when QEMU will run unjailed, and
 * why; {@code kosa8 doctor} asks too and prints the line that would fix it.
 */
public final class JailProbe {
    /** What kosa8's settings ask for ({@code "jail"} in settings.json). */
    public enum Mode {
        /** The jail where the host can make it; unjailed, with a warning, where it cannot. The default. */
        AUTO,
        /** The jail, or no QEMU at all. */
        REQUIRED,
        /** Never the jail (for diagnosis). */
        OFF;

        public static Mode parse(String s) {
            try {
                return valueOf(s.trim().toUpperCase(Locale.ROOT));
            } catch (IllegalArgumentException e) {
                throw new dev.kosa8.host.KosaException(dev.kosa8.host.KosaException.Kind.USAGE,
                        "unknown jail setting '" + s + "'", "use one of: auto, required, off");
            }
        }
    }

    /** The tops of the host's system tree that QEMU's program and libraries come from. */
    private static final List<String> SYSTEM = List.of("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64",
            "/libx32", "/etc/ld.so.cache", "/etc/ld.so.conf", "/etc/ld.so.conf.d");

    private JailProbe() {
    }

    /** The jail this host gives QEMU under {@code mode}; never throws. */
    public static Jail detect(Mode mode) {
        boolean required = mode == Mode.REQUIRED;
        if (mode == Mode.OFF) {
            return Jail.unavailable("kosa8's settings turn it off (\"jail\": \"off\")",
                    "remove \"jail\": \"off\" from kosa8's settings.json", false);
        }
        if (!System.getProperty("os.name", "").equals("Linux")) {
            return Jail.unavailable("bubblewrap runs only on Linux", "", required);
        }
        String bwrap = HostTools.which("bwrap");
        if (bwrap == null) {
            return Jail.unavailable("bubblewrap (bwrap) is not installed",
                    HostTools.installCommand(List.of("bubblewrap")), required);
        }
        boolean root = uid() == 0;
        Jail jail = new Jail(Path.of(bwrap), !root, root && !sysctl("vm/unprivileged_userfaultfd").equals("1"),
                systemPaths(), required, "", "");
        String failure = attempt(jail);
        return failure == null ? jail : Jail.unavailable(failure, enableLine(), required);
    }

    /** The system paths this host has: folders bound, links made again. */
    static List<Jail.SystemPath> systemPaths() {
        List<Jail.SystemPath> paths = new ArrayList<>();
        for (String name : SYSTEM) {
            Path p = Path.of(name);
            try {
                if (Files.isSymbolicLink(p)) {
                    paths.add(new Jail.SystemPath(p, Files.readSymbolicLink(p).toString()));
                } else if (Files.exists(p, LinkOption.NOFOLLOW_LINKS)) {
                    paths.add(new Jail.SystemPath(p, null));
                }
            } catch (IOException e) {
                // not there to show
            }
        }
        return paths;
    }

    /** Runs {@code true} in the jail's namespaces; null when that worked, else bubblewrap's reason. */
    private static String attempt(Jail jail) {
        String truth = HostTools.which("true");
        List<String> argv = jail.namespaces();
        argv.addAll(List.of("--", truth == null ? "/bin/true" : truth));
        try {
            Process p = new ProcessBuilder(argv).redirectErrorStream(true)
                    .redirectInput(ProcessBuilder.Redirect.from(new java.io.File("/dev/null"))).start();
            if (!p.waitFor(10, TimeUnit.SECONDS)) {
                p.destroyForcibly();
                return "bubblewrap did not make the jail within 10 s";
            }
            String said = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8).strip();
            return p.exitValue() == 0 ? null : "bubblewrap cannot make the jail here: "
                    + (said.isEmpty() ? "exit status " + p.exitValue() : said.lines().findFirst().orElse(said));
        } catch (IOException e) {
            return "bubblewrap could not be run: " + e.getMessage();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return "interrupted while trying the jail";
        }
    }

    /** The line that lets users make namespaces, for the switch this kernel has turned off. */
    static String enableLine() {
        if (sysctl("kernel/apparmor_restrict_unprivileged_userns").equals("1")) {
            return "allow unprivileged user namespaces: sudo sysctl -w kernel.apparmor_restrict_unprivileged_userns=0"
                    + " (or give bwrap an AppArmor profile that allows them)";
        }
        if (sysctl("kernel/unprivileged_userns_clone").equals("0")) {
            return "allow unprivileged user namespaces: sudo sysctl -w kernel.unprivileged_userns_clone=1";
        }
        if (sysctl("user/max_user_namespaces").equals("0")) {
            return "allow user namespaces: sudo sysctl -w user.max_user_namespaces=15000";
        }
        return "run `bwrap --unshare-user --unshare-pid --unshare-net --dev /dev --proc /proc --ro-bind /usr /usr"
                + " true` to see what stops it";
    }

    private static String sysctl(String name) {
        try {
            // (not Files.readString: a /proc/sys file says it is empty, and Java 25 reads one byte of it: "9" of 96367)
            try (java.io.InputStream in = Files.newInputStream(Path.of("/proc/sys", name))) {
                return new String(in.readAllBytes(), java.nio.charset.StandardCharsets.US_ASCII).strip();
            }
        } catch (IOException e) {
            return "";
        }
    }

    private static long uid() {
        try {
            return ((Number) Files.getAttribute(Path.of("/proc/self"), "unix:uid")).longValue();
        } catch (IOException | RuntimeException e) {
            return -1;
        }
    }
}
