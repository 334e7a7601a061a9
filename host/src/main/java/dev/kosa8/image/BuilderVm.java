package dev.kosa8.image;

import dev.kosa8.host.KosaException;
import dev.kosa8.vm.Accelerator;
import dev.kosa8.vm.QemuCommandLine;
import dev.kosa8.vm.GuestArch;

import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

/**
 * Boots the builder VM ({@code builder.sh} as its init) and waits for it to power off, its console read by
 * {@link BuilderConsole}; the build succeeded only when the console said {@value #OK} and never {@value #FAILED}.
 * A machine still running after the timeout is killed, so is one whose kosa8 stops, and every failure names the
 * console's last lines.
 *
 * <p>The machine: microvm with QEMU's seccomp filter as a sandbox has it, no network device at all (the
 * packages arrive on the input disk), 2 GiB of RAM (the builder's unpacked Debian, the input and the tree
 * being built all live in its RAM until {@code mke2fs} writes the tree out), four disks found in the guest by
 * their serial numbers: the builder's own Debian and the input, tars (read-only), the image's raw disk and the
 * small hand-back disk.
 */
final class BuilderVm {
    static final String OK = "KOSA8-BUILDER-OK";
    static final String FAILED = "KOSA8-BUILDER-FAILED:";
    static final int MEMORY_MIB = 2048;

    /**
     * What the builder is given: its kernel and initramfs, and four disks (raw files): its own Debian as a tar
     * and the input tar (both read-only), the image's disk and the hand-back disk.
     */
    record Machine(Path kernel, Path initramfs, Path builderRoot, Path input, Path image, Path handBack) {
    }

    private BuilderVm() {
    }

    /**
     * The QEMU command line of a builder run for guests of {@code arch} (its machine type, CPU model and console:
     * {@link GuestArch}): a pure function, tested without QEMU.
     */
    static List<String> argv(String qemu, GuestArch arch, Accelerator accel, Machine m, int cpus) {
        List<String> a = new ArrayList<>(List.of(qemu, "-name", "kosa8-image-builder,process=kosa8-image-builder",
                "-M", arch.machine(null), "-accel", accel.qemuName(), "-cpu", arch.cpuModel(accel),
                "-smp", String.valueOf(cpus), "-m", MEMORY_MIB + "M",
                "-nodefaults", "-no-user-config", "-display", "none", "-no-reboot",
                "-sandbox", QemuCommandLine.SECCOMP, "-serial", "stdio",
                "-kernel", m.kernel().toString(), "-initrd", m.initramfs().toString(),
                "-append", "console=" + arch.consoleDevice() + " panic=-1 quiet" + arch.kernelArgs(accel)));
        disk(a, "root", m.builderRoot(), true, "kosa8-builder-root");
        disk(a, "in", m.input(), true, "kosa8-builder-in");
        disk(a, "out", m.image(), false, "kosa8-builder-out");
        disk(a, "back", m.handBack(), false, "kosa8-builder-back");
        a.add("-device");
        a.add("virtio-rng-device");
        return List.copyOf(a);
    }

    private static void disk(List<String> a, String id, Path file, boolean readOnly, String serial) {
        a.add("-drive");
        a.add("id=" + id + ",file=" + file.toString().replace(",", ",,") + ",format=raw,if=none"
                + (readOnly ? ",readonly=on" : ",discard=unmap"));
        a.add("-device");
        a.add("virtio-blk-device,drive=" + id + ",serial=" + serial);
    }

    /** Runs the builder to its end; an error, naming the console's last lines, unless it said {@value #OK}. */
    static void run(List<String> argv, Path log, Consumer<String> progress, Duration timeout) {
        Process p;
        try {
            p = new ProcessBuilder(argv).redirectErrorStream(true).start();
        } catch (IOException e) {
            throw new KosaException(KosaException.Kind.HOST, "cannot start QEMU for the image builder: "
                    + e.getMessage(), "install QEMU (`kosa8 doctor` says how) and try again", e);
        }
        // a kosa8 stopped mid-build (Ctrl-C, the daemon stopping) takes its builder with it
        Thread killer = new Thread(() -> kill(p), "kosa8-builder-stop");
        Runtime.getRuntime().addShutdownHook(killer);
        BuilderConsole console = new BuilderConsole(p.getInputStream(), log, progress);
        Thread reader = Thread.ofPlatform().daemon().name("kosa8-builder-console").start(console);
        try {
            if (!p.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
                kill(p);
                p.waitFor(10, TimeUnit.SECONDS);
                reader.join(2000);
                throw failure("did not finish within " + timeout.toMinutes() + " minutes", console, log);
            }
            reader.join(30_000); // QEMU has exited, so its output ends (unless a wrapper left a child holding it)
        } catch (InterruptedException e) {
            kill(p);
            Thread.currentThread().interrupt();
            throw new KosaException(KosaException.Kind.IMAGE, "the image build was interrupted", "run it again");
        } finally {
            try {
                Runtime.getRuntime().removeShutdownHook(killer);
            } catch (IllegalStateException shuttingDown) {
                // the hook runs
            }
        }
        if (!console.succeeded()) {
            throw failure("stopped without finishing (QEMU exit status " + p.exitValue() + ")", console, log);
        }
    }

    /** The builder and anything it started (QEMU itself may not start any; a wrapper script might). */
    private static void kill(Process p) {
        p.descendants().forEach(ProcessHandle::destroyForcibly);
        p.destroyForcibly();
    }

    private static KosaException failure(String what, BuilderConsole console, Path log) {
        return new KosaException(KosaException.Kind.IMAGE, "the image builder VM " + what + "; its console ended:\n  "
                + console.tail(), "the whole console is in " + log + "; run `kosa8 image build` again, and if it fails"
                + " the same way, `KOSA8_IMAGE_BUILDER=host` builds with mmdebstrap on a Debian host as root");
    }
}
