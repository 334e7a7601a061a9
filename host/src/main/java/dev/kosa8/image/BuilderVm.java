package dev.kosa8.image;

import dev.kosa8.host.KosaException;
import dev.kosa8.vm.Accelerator;
import dev.kosa8.vm.QemuCommandLine;
import dev.kosa8.vm.TscFrequency;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

/**
 * Boots the builder VM ({@code builder.sh} as its init) and waits for it to power off: the guest's console
 * goes to the build log line by line, its {@code kosa8-builder:} and mmdebstrap's {@code I:} lines to the
 * progress; the build succeeded only when the console said {@value #OK}. A machine still running after the
 * timeout is killed, and every failure names the console's last lines.
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
    private static final int TAIL = 25;
    private static final java.util.regex.Pattern ANSI = java.util.regex.Pattern.compile("\u001B\\[[0-9;]*[A-Za-z]");

    /**
     * What the builder is given: its kernel and initramfs, and four disks (raw files): its own Debian as a tar
     * and the input tar (both read-only), the image's disk and the hand-back disk.
     */
    record Machine(Path kernel, Path initramfs, Path builderRoot, Path input, Path image, Path handBack) {
    }

    private BuilderVm() {
    }

    /** The QEMU command line of a builder run: a pure function, tested without QEMU. */
    static List<String> argv(String qemu, Accelerator accel, Machine m, int cpus) {
        List<String> a = new ArrayList<>(List.of(qemu, "-name", "kosa8-image-builder,process=kosa8-image-builder",
                "-M", "microvm,x-option-roms=off,rtc=on", "-accel", accel.qemuName(), "-cpu", accel.cpuModel(),
                "-smp", String.valueOf(cpus), "-m", MEMORY_MIB + "M",
                "-nodefaults", "-no-user-config", "-display", "none", "-no-reboot",
                "-sandbox", QemuCommandLine.SECCOMP, "-serial", "stdio",
                "-kernel", m.kernel().toString(), "-initrd", m.initramfs().toString(),
                "-append", "console=ttyS0 panic=-1 quiet" + TscFrequency.kernelArg(accel)));
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
        long started = System.nanoTime();
        Deque<String> tail = new ArrayDeque<>();
        boolean[] ok = {false};
        Thread reader = Thread.ofPlatform().daemon().name("kosa8-builder-console").start(() -> {
            try (BufferedReader r = new BufferedReader(new InputStreamReader(p.getInputStream(),
                    StandardCharsets.UTF_8))) {
                String line;
                while ((line = r.readLine()) != null) {
                    line = ANSI.matcher(line).replaceAll("").replace("\r", ""); // mmdebstrap colours a console
                    appendLog(log, String.format(java.util.Locale.ROOT, "[%7.1f s] %s",
                            (System.nanoTime() - started) / 1e9, line));
                    synchronized (tail) {
                        tail.addLast(line);
                        if (tail.size() > TAIL) {
                            tail.removeFirst();
                        }
                    }
                    if (line.equals(OK)) {
                        ok[0] = true;
                    } else if (line.startsWith("kosa8-builder: ") || line.startsWith("I: ")) {
                        progress.accept("builder VM: " + line.substring(line.indexOf(' ') + 1));
                    }
                }
            } catch (IOException ignored) {
                // QEMU is gone
            }
        });
        try {
            if (!p.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
                p.destroyForcibly();
                p.waitFor(10, TimeUnit.SECONDS);
                reader.join(2000);
                throw failure("did not finish within " + timeout.toMinutes() + " minutes", tail, log);
            }
            reader.join(5000);
        } catch (InterruptedException e) {
            p.destroyForcibly();
            Thread.currentThread().interrupt();
            throw new KosaException(KosaException.Kind.IMAGE, "the image build was interrupted", "run it again");
        }
        if (!ok[0]) {
            throw failure("stopped without finishing (QEMU exit status " + p.exitValue() + ")", tail, log);
        }
    }

    private static KosaException failure(String what, Deque<String> tail, Path log) {
        String lines;
        synchronized (tail) {
            lines = String.join("\n  ", tail);
        }
        return new KosaException(KosaException.Kind.IMAGE, "the image builder VM " + what + "; its console ended:\n  "
                + lines, "the whole console is in " + log + "; run `kosa8 image build` again, and if it fails the"
                + " same way, `KOSA8_IMAGE_BUILDER=host` builds with mmdebstrap on a Debian host as root");
    }

    private static void appendLog(Path log, String line) {
        try {
            Files.writeString(log, line + "\n", StandardCharsets.UTF_8, StandardOpenOption.CREATE,
                    StandardOpenOption.APPEND);
        } catch (IOException ignored) {
            // the log is a help, not the build
        }
    }
}
