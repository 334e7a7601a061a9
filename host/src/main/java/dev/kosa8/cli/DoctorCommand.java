package dev.kosa8.cli;

import dev.kosa8.daemon.Settings;
import dev.kosa8.host.HostPaths;
import dev.kosa8.host.Distribution;
import dev.kosa8.host.HostCheck;
import dev.kosa8.host.HostRequirement;
import dev.kosa8.host.HostTools;
import dev.kosa8.host.KosaException;
import dev.kosa8.host.Mounts;
import dev.kosa8.host.Wsl;
import dev.kosa8.image.ImageStore;
import dev.kosa8.secrets.SecretStore;
import dev.kosa8.vm.CheckpointMode;
import dev.kosa8.vm.Jail;
import dev.kosa8.vm.JailProbe;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.ParentCommand;

@Command(name = "doctor", mixinStandardHelpOptions = true, description = {"Check this machine for everything kosa8 needs; print each problem with its fix."})
final class DoctorCommand implements Callable<Integer> {
    @ParentCommand
    Main main;

    private int problems;

    @Override
    public Integer call() throws IOException {
        HostCheck host = HostCheck.host();
        Wsl wsl = Wsl.host();
        tools(host);
        wsl(wsl);
        jail();
        views();
        Path kvm = Path.of("/dev/kvm");
        if (!Files.exists(kvm)) {
            warn("kvm", "/dev/kvm is missing: sandboxes run under TCG (software emulation, much slower)",
                    wsl.kvmMissingFix());
        } else if (!Files.isWritable(kvm)) {
            warn("kvm", "/dev/kvm is not writable by you: sandboxes run under TCG",
                    wsl.kvmGroupFix());
        } else {
            ok("kvm", "/dev/kvm is usable (a probe boot decides whether the guest runs under it)");
        }
        checkpoints();
        Path accel = main.paths.cache().resolve("accelerator.json");
        if (Files.exists(accel)) {
            var n = DaemonClient.json().readTree(accel.toFile());
            ok("accelerator", n.path("accelerator").asText() + " (probed " + n.path("probedAt").asText() + "; "
                    + n.path("tried").toString() + ")");
        } else {
            ok("accelerator", "not probed yet: the first sandbox probes it (about 10 s once)");
        }
        Path data = main.paths.data();
        Path existing = data;
        while (existing != null && !Files.exists(existing)) {
            existing = existing.getParent();
        }
        long free = existing == null ? 0 : Files.getFileStore(existing).getUsableSpace();
        check("disk", free > 5L << 30, (free >> 30) + " GiB free under " + data,
                "free some space (`kosa8 image prune` removes old images and templates): the image needs about "
                        + "1.5 GiB and each sandbox what it writes");
        var image = new ImageStore(main.paths).current();
        if (image.isPresent()) {
            ok("image", image.get().id() + " (kernel " + image.get().kernelVersion() + ")");
        } else {
            warn("image", "not built yet", "kosa8 image build (or just `kosa8 run`, which builds it first)");
        }
        secrets();
        DaemonClient d = new DaemonClient(main.paths);
        if (d.isUp()) {
            var v = d.get("/v1/version");
            ok("daemon", "kosa8d pid " + v.path("pid").asLong() + " on " + main.paths.daemonSocket());
            leftovers(d);
        } else {
            ok("daemon", "not running (it starts on first use)");
        }
        System.out.println(problems == 0 ? "\nAll good." : "\n" + problems + " problem(s) to fix.");
        return problems == 0 ? 0 : 1;
    }

    /**
     * How a daemon started from this environment saves a checkpoint's RAM
     * ({@link CheckpointMode}): both modes work; file RAM costs a longer pause
     * and a copy of the guest's RAM on disk per checkpoint where the file
     * system has no reflinks, so the line says how to get the other.
     */
    private void checkpoints() {
        DaemonClient d = new DaemonClient(main.paths);
        if (d.isUp()) {
            // the running daemon's own choice: its environment, not this shell's, decided it
            String mode = d.get("/v1/version").path("checkpointMode").asText("");
            if (!mode.isEmpty()) {
                ok("checkpoints", (mode.equals(CheckpointMode.FILE_RAM.word()) ? FILE_RAM : BACKGROUND)
                        + " (the running daemon's; docs/checkpoints.md, \"Two ways to save RAM\")");
                return;
            }
        }
        CheckpointMode.Choice c;
        try {
            c = CheckpointMode.probe(System.getenv());
        } catch (KosaException e) {
            check("checkpoints", false, e.getMessage(), e.suggestion());
            return;
        }
        ok("checkpoints", (c.mode() == CheckpointMode.FILE_RAM ? FILE_RAM : BACKGROUND)
                + " (a daemon started from here: " + c.why() + ")");
    }

    private static final String BACKGROUND = "QEMU's background snapshot: the guest runs on while its RAM is saved,"
            + " and each checkpoint keeps only the pages that changed";
    private static final String FILE_RAM = "file RAM: the guest's RAM is a file (reserved on disk while it runs),"
            + " copied in each checkpoint's pause, a clone where the file system has reflinks (XFS, Btrfs)";

    /**
     * Java and every host program, each named with the package that provides
     * it on this distribution ({@link HostCheck}), then one line that installs
     * everything missing (every known distribution's line when this one is
     * not known).
     */
    private void tools(HostCheck host) {
        Distribution d = host.distribution();
        ok("distribution", host.os().prettyName() + " (" + d.display() + (d == Distribution.UNKNOWN
                ? "; os-release ID " + host.os().id() + ")" : ")"));
        check("java", !host.javaMissing(), "Java " + Runtime.version(),
                "install a Java 25 JDK (" + HostRequirement.javaPackage(d)
                        + (d == Distribution.DEBIAN || d == Distribution.UNKNOWN ? ", from the Adoptium repository" : "")
                        + ") and run kosa8 with it (KOSA8_JAVA_HOME)");
        for (HostRequirement r : HostRequirement.ALL) {
            String at = HostTools.which(r.program());
            String pkg = r.packageOn(d);
            if (at != null) {
                ok(r.program(), at);
            } else if (r.optional()) {
                warn(r.program(), "missing: " + r.purpose(), d == Distribution.UNKNOWN ? "install the package "
                        + pkg + " (its Debian name)" : d.installLine(List.of(pkg)));
            } else {
                check(r.program(), false, "missing: " + r.purpose(), d == Distribution.UNKNOWN
                        ? "install the package " + pkg + " (its Debian name)" : d.installLine(List.of(pkg)));
            }
        }
        List<String> lines = host.installLines(false);
        if (!lines.isEmpty()) {
            System.out.println("        everything required that is missing, in one line:");
            lines.forEach(l -> System.out.println("          " + l));
        }
    }

    /**
     * Under WSL: which one (WSL 1 cannot run kosa8), and whether kosa8's
     * data, cache or sockets, or the folder a command here would share, lie on a Windows drive,
     * which reaches Linux through a file server of Windows' own: slow for a
     * sandbox's folder, and without the Unix modes and links kosa8's state
     * needs. Nothing under plain Linux.
     */
    private void wsl(Wsl wsl) {
        if (!wsl.any()) {
            return;
        }
        if (wsl.version() == Wsl.Version.WSL1) {
            check("wsl", false, "WSL 1 (kernel " + wsl.kernelRelease() + "): no Linux kernel of its own, so no "
                    + "KVM, no jail and no checkpoints", wsl.wsl1Fix());
            return;
        }
        ok("wsl", "WSL 2" + (wsl.distribution().isEmpty() ? "" : ", distribution " + wsl.distribution())
                + ", kernel " + wsl.kernelRelease() + ": kosa8 runs as on any Linux; closing the last WSL terminal "
                + "stops the distribution and its sandboxes (docs/wsl2.md)");
        var places = new java.util.LinkedHashMap<String, Path>();
        places.put("kosa8's data", main.paths.data());
        places.put("kosa8's cache", main.paths.cache());
        places.put("kosa8's sockets", main.paths.runtime());
        places.put("this folder", Path.of("").toAbsolutePath());
        for (var place : places.entrySet()) {
            var mount = Mounts.host(place.getValue());
            if (mount.isPresent() && mount.get().windowsDrive()) {
                warn("wsl", place.getKey() + " (" + place.getValue() + ") is on a Windows drive ("
                                + mount.get().point() + ", " + mount.get().type() + "): slow to share, without Unix modes",
                        place.getKey().equals("this folder")
                                ? "keep the project in the Linux file system (e.g. ~/src) and run kosa8 there"
                                : "set KOSA8_HOME to a folder in the Linux file system, e.g. /home/<you>/.kosa8");
            }
        }
    }

    /**
     * Whether QEMU runs in its jail here, as the daemon will find it
     * ({@link JailProbe}, under the settings' {@code "jail"}): a warning with
     * the line that fixes it when it cannot, a failure when the settings
     * require the jail.
     */
    private void jail() {
        Settings settings;
        try {
            settings = Settings.load(HostPaths.config());
        } catch (KosaException e) {
            check("settings", false, e.getMessage(), e.suggestion());
            settings = Settings.DEFAULTS;
        }
        Jail jail = JailProbe.detect(settings.jail());
        if (jail.confines()) {
            ok("jail", jail.describe());
        } else if (jail.required()) {
            check("jail", false, jail.describe() + ", and the settings require it", jail.fix());
        } else {
            warn("jail", jail.describe() + "; its seccomp filter is then all that stands between a QEMU exploit"
                    + " and your files", jail.fix().isEmpty() ? "none on this system" : jail.fix());
        }
    }

    /**
     * Whether forks' folders can be copy-on-write views here ({@link dev.kosa8.workspace.FolderView}): a view
     * of an empty folder is mounted as the daemon would mount one. A warning when not: forks then copy.
     */
    private void views() {
        var why = dev.kosa8.workspace.FolderView.unavailable(main.paths.data().resolve("folder-bases"));
        if (why.isEmpty()) {
            ok("fork views", "a fork's folder can be a copy-on-write view where the file system has no clones"
                    + " (docs/checkpoints.md, \"What the copies share\")");
        } else {
            warn("fork views", "a fork's folder is a full copy where the file system has no clones: views cannot"
                    + " be mounted here (" + why.get() + ")", "none needed: forks copy the folder instead (XFS and"
                    + " Btrfs share it by clones anyway)");
        }
    }

    /** Old images and templates nothing rests on, as a dry-run prune finds them: a warning, since they only take space. */
    private static void leftovers(DaemonClient d) {
        var removable = d.post("/v1/images/prune?dryRun=true");
        int n = removable.path("removed").size();
        if (n > 0) {
            warn("old images", n + " old image(s) and template(s) no sandbox uses hold "
                    + Sizes.human(removable.path("bytes").asLong()), "kosa8 image prune (see --dry-run first)");
        } else {
            ok("old images", "none: every image and template is current or in use");
        }
    }

    /** Where new secrets go and why, and whether the existing ones can be read (the files' modes are checked). */
    private void secrets() {
        try {
            SecretStore store = SecretStore.open();
            int n = store.list().size();
            ok("secrets", (n == 0 ? "" : n + " kept; ") + "new ones go to " + store.backendDescription());
        } catch (KosaException e) {
            check("secrets", false, e.getMessage(), e.suggestion());
        }
    }

    private void check(String what, boolean good, String detail, String fix) {
        if (good) {
            ok(what, detail);
        } else {
            problems++;
            System.out.printf("  FAIL  %-20s %s%n        fix: %s%n", what, detail, fix);
        }
    }

    private static void ok(String what, String detail) {
        System.out.printf("  ok    %-20s %s%n", what, detail);
    }

    private static void warn(String what, String detail, String fix) {
        System.out.printf("  warn  %-20s %s%n        fix: %s%n", what, detail, fix);
    }
}
