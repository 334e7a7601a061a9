package dev.kosa8.daemon;

import dev.kosa8.egress.EgressService;
import dev.kosa8.egress.EgressTestSettings;
import dev.kosa8.egress.NetPresets;
import dev.kosa8.egress.NetworkSettings;
import dev.kosa8.host.HostPaths;
import dev.kosa8.host.KosaException;
import dev.kosa8.image.ImageStore;
import dev.kosa8.vm.AcceleratorProbe;
import dev.kosa8.vm.QemuBinary;
import dev.kosa8.vm.Jail;
import dev.kosa8.vm.JailProbe;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;

/** Entry point of kosa8d. The CLI starts it on first need; `kosa8 daemon run` runs it in the foreground. */
public final class DaemonMain {
    private DaemonMain() {
    }

    public static void main(String[] args) throws Exception {
        dev.kosa8.host.CrashPoints.install(System.getenv()); // tests only; off unless the environment sets it
        HostPaths paths = HostPaths.fromEnvironment();
        Daemon[] self = new Daemon[1];
        String qemu = QemuBinary.find();
        AcceleratorProbe probe = new AcceleratorProbe(qemu, paths.cache().resolve("accelerator.json"),
                Duration.ofSeconds(10), w -> self[0].log("warning: " + w));
        EgressService egress = new EgressService(() -> EgressTestSettings.fromEnvironment(System.getenv()),
                NetPresets.load(HostPaths.config().resolve("presets.json")),
                () -> NetworkSettings.load(HostPaths.config()),
                line -> {
                    if (self[0] != null) {
                        self[0].log(line);
                    } else {
                        System.out.println(line);
                    }
                });
        Settings settings;
        try {
            settings = Settings.load(HostPaths.config());
        } catch (KosaException e) {
            System.out.println("kosa8d: " + e.getMessage() + " — " + e.suggestion());
            System.exit(e.exitCode());
            return;
        }
        Jail jail = JailProbe.detect(settings.jail());
        dev.kosa8.vm.CheckpointMode.Choice checkpoints;
        try {
            checkpoints = dev.kosa8.vm.CheckpointMode.probe(System.getenv());
        } catch (KosaException e) {
            System.out.println("kosa8d: " + e.getMessage() + " — " + e.suggestion());
            System.exit(e.exitCode());
            return;
        }
        SandboxManager mgr = new SandboxManager(paths, settings, jail, () -> bootImage(paths), probe, qemu, egress,
                dev.kosa8.secrets.SecretStore::open, checkpoints.mode(), line -> self[0].log(line));
        Daemon d = new Daemon(paths, mgr, build(), System.out);
        self[0] = d;
        if (jail.confines()) {
            d.log(jail.describe());
        } else {
            d.log((jail.required() ? "error: " : "warning: ") + jail.describe()
                    + (jail.required() ? "; sandboxes cannot start (\"jail\": \"required\")" : "")
                    + (jail.fix().isEmpty() ? "" : "; fix: " + jail.fix()));
        }
        d.log("checkpoints save RAM by " + (checkpoints.mode() == dev.kosa8.vm.CheckpointMode.FILE_RAM
                ? "copying the guest's RAM file" : "QEMU's background snapshot") + ": " + checkpoints.why());
        Runtime.getRuntime().addShutdownHook(new Thread(d::stop));
        try {
            d.start();
        } catch (KosaException e) {
            System.out.println("kosa8d: " + e.getMessage() + (e.suggestion().isEmpty() ? "" : " — " + e.suggestion()));
            System.exit(e.exitCode());
        }
        d.awaitStop();
        System.exit(0);
    }

    static BootImage bootImage(HostPaths paths) {
        return bootImage(paths, dev.kosa8.vm.GuestArch.host());
    }

    /** The current system image of guests of {@code arch}; an error saying how to build it when there is none. */
    static BootImage bootImage(HostPaths paths, dev.kosa8.vm.GuestArch arch) {
        var image = new ImageStore(paths, arch).current().orElseThrow(() -> arch.foreign()
                ? new KosaException(KosaException.Kind.IMAGE, "no " + arch.debianName() + " guest image has been "
                        + "built", "build it with `kosa8 image build --arch " + arch.debianName() + "` (`kosa8 run "
                        + "--arch " + arch.debianName() + "` builds it too)")
                : new KosaException(KosaException.Kind.IMAGE, "no guest image has been built",
                        "build it with `kosa8 image build`"));
        return new BootImage(image.id(), image.vmlinux(), image.initramfs(), image.rootfs(),
                String.join(" ", image.kernelCommandLine("sandbox")));
    }

    /** Identifies the build ({@link dev.kosa8.host.BuildId}). */
    public static String build() {
        return dev.kosa8.host.BuildId.current();
    }
}
