package dev.kosa8.image;

import dev.kosa8.host.FileTrees;
import dev.kosa8.host.KosaException;
import dev.kosa8.image.CpioArchive.Directory;
import dev.kosa8.image.CpioArchive.Entry;
import dev.kosa8.image.CpioArchive.RegularFile;
import dev.kosa8.vm.Accelerator;
import dev.kosa8.vm.GuestArch;
import org.apache.commons.compress.archivers.tar.TarArchiveEntry;
import org.apache.commons.compress.archivers.tar.TarArchiveInputStream;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.RandomAccessFile;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.BiFunction;
import java.util.function.Consumer;

/**
 * One run of the builder VM (docs/image.md, "The builder VM"): its own Debian from {@code builderDebs} (one tar,
 * {@link BuilderRootTar}), an input folder holding {@code build.sh} (one tar owned by root, {@link TreeTar}), an
 * optional disk for the build to write, and the hand-back disk, whose tar it returns. Everything it made on the
 * host beside the given disk is deleted again, whatever the outcome. {@link VmRootfs} builds the root filesystem
 * with it, {@link VmModule} the workspace's kernel module.
 */
final class BuilderRun {
    /** The kernel modules the builder loads: the virtio-mmio transport and its disks, nothing else. */
    static final List<String> MODULES = List.of("virtio_ring", "virtio", "virtio_mmio", "virtio_blk");
    /** The most one handed-back file may hold: a CA bundle, dpkg's status, a kernel module are under 1 MiB. */
    static final int MAX_HANDED_BACK = 16 << 20;
    /** At most this many files are read back; the builder hands back two. */
    static final int MAX_HANDED_BACK_FILES = 8;
    private static final long HAND_BACK_DISK = 32L << 20;

    /** What the builder VM boots with, and how to start QEMU: the image's kernel part, busybox, an accelerator. */
    record Kit(String qemu, GuestArch arch, Path kernelDir, Path busyboxDeb, DebianPackages packages,
               BiFunction<Path, Path, Accelerator> accelerator) {
    }

    private BuilderRun() {
    }

    /**
     * The kit for an image of {@code kernelDir}'s kernel: QEMU from PATH, busybox's package fetched, the accelerator
     * chosen by a probe boot (cached in {@code probeCache}, as the daemon's is), its warnings to {@code warnings}.
     */
    static Kit kit(DebianPackages apt, Path kernelDir, DebPackage busybox, Path probeCache, Consumer<String> warnings) {
        return kit(apt, GuestArch.host(), kernelDir, busybox, probeCache, warnings);
    }

    /** As above for a builder of {@code arch}: another architecture than the host's runs under TCG, unprobed. */
    static Kit kit(DebianPackages apt, GuestArch arch, Path kernelDir, DebPackage busybox, Path probeCache,
                   Consumer<String> warnings) {
        String qemu = dev.kosa8.vm.QemuBinary.find(arch);
        return new Kit(qemu, arch, kernelDir, apt.download(busybox), apt, (kernel, initramfs) -> arch.foreign()
                ? Accelerator.TCG
                : new dev.kosa8.vm.AcceleratorProbe(qemu, probeCache, Duration.ofSeconds(10), warnings)
                        .choose(kernel, initramfs).accelerator());
    }

    /**
     * Runs the builder on {@code in} (deleted after) with {@code disk} as the disk it writes (null: none it needs),
     * its temporary files in {@code work}; returns the files it handed back, by their names in its tar.
     */
    static Map<String, byte[]> run(Kit kit, List<Path> builderDebs, Path in, Path disk, Path work, Path log,
                                   Consumer<String> progress, Duration timeout) throws IOException {
        Path root = work.resolve("builder-root.tar");
        Path input = work.resolve("builder-in.tar");
        Path back = work.resolve("builder-back.img");
        Path none = work.resolve("builder-none.img");
        Path initramfs = work.resolve("builder.cpio");
        try {
            BuilderRootTar.write(builderDebs, root);
            TreeTar.write(in, input);
            FileTrees.delete(in);
            sparse(back, HAND_BACK_DISK);
            if (disk == null) {
                sparse(none, 1 << 20);
            }
            initramfs(kit, initramfs, work.resolve("builder-busybox"));
            Path kernel = kit.kernelDir().resolve(KernelPart.VMLINUX);
            Accelerator accel = kit.accelerator().apply(kernel, initramfs);
            BuilderVm.run(BuilderVm.argv(kit.qemu(), kit.arch(), accel, new BuilderVm.Machine(kernel, initramfs, root, input,
                    disk == null ? none : disk, back), 2), log, progress, timeout);
            return handedBack(back);
        } finally {
            for (Path p : List.of(root, input, back, none, initramfs)) {
                Files.deleteIfExists(p);
            }
        }
    }

    /** The builder's initramfs: busybox, the modules it loads and their order, {@code builder.sh} as {@code /init}. */
    private static void initramfs(Kit kit, Path cpio, Path scratch) throws IOException {
        List<Entry> e = new ArrayList<>();
        for (String d : List.of("kosa8", "kosa8/modules", "dev", "proc", "sys", "tmp", "bin")) {
            e.add(new Directory(d, d.equals("tmp") ? 01777 : 0755));
        }
        e.add(new CpioArchive.CharDevice("dev/console", 0600, 5, 1));
        e.add(new RegularFile("kosa8/busybox", 0755, InitramfsPart.busybox(kit.packages(), kit.busyboxDeb(), scratch)));
        e.add(new RegularFile("init", 0755, GuestFiles.resource("builder.sh")));
        List<String> order = new ArrayList<>();
        for (String m : KernelPart.moduleOrder(kit.kernelDir())) {
            if (MODULES.contains(m)) {
                order.add(m);
                e.add(new RegularFile("kosa8/modules/" + m + ".ko", 0644,
                        Files.readAllBytes(kit.kernelDir().resolve(KernelPart.MODULES).resolve(m + ".ko"))));
            }
        }
        e.add(new RegularFile("kosa8/modules/order", 0644,
                (String.join("\n", order) + "\n").getBytes(StandardCharsets.UTF_8)));
        try (OutputStream out = Files.newOutputStream(cpio)) {
            CpioArchive.write(e, out);
        }
    }

    /**
     * The regular files the builder wrote as a tar onto the hand-back disk: at most {@link #MAX_HANDED_BACK_FILES},
     * each at most {@link #MAX_HANDED_BACK} bytes; anything else is an error (the guest wrote it, so nothing it
     * wrote is taken on trust).
     */
    static Map<String, byte[]> handedBack(Path disk) throws IOException {
        Map<String, byte[]> out = new HashMap<>();
        try (InputStream raw = Files.newInputStream(disk);
             TarArchiveInputStream tar = new TarArchiveInputStream(raw)) {
            TarArchiveEntry t;
            while ((t = tar.getNextEntry()) != null) {
                if (!t.isFile()) {
                    continue;
                }
                if (out.size() >= MAX_HANDED_BACK_FILES) {
                    throw new KosaException(KosaException.Kind.IMAGE, "the builder VM handed back more than "
                            + MAX_HANDED_BACK_FILES + " files", "build the image again");
                }
                byte[] content = tar.readNBytes(MAX_HANDED_BACK + 1);
                if (content.length > MAX_HANDED_BACK) {
                    throw new KosaException(KosaException.Kind.IMAGE, "the builder VM handed back " + t.getName()
                            + " of more than " + (MAX_HANDED_BACK >> 20) + " MiB", "build the image again");
                }
                out.put(t.getName(), content);
            }
        }
        return out;
    }

    static void sparse(Path file, long size) throws IOException {
        Files.deleteIfExists(file);
        try (RandomAccessFile f = new RandomAccessFile(file.toFile(), "rw")) {
            f.setLength(size);
        }
    }
}
