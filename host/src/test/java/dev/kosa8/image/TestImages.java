package dev.kosa8.image;

import dev.kosa8.host.HostPaths;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * Complete images on disk for tests that need some without building one: a
 * manifest naming three parts, dummy kernel and initramfs files, and a real
 * (empty) qcow2 root disk made by {@code qemu-img}, so that overlays can rest
 * on it as on a built image's.
 */
public final class TestImages {
    private TestImages() {
    }

    /** An image with its own parts ({@code id} is 16 hex digits); made current when {@code current}. */
    public static Image make(HostPaths paths, String id, boolean current) throws IOException, InterruptedException {
        Path images = paths.images();
        PartStore parts = new PartStore(images);
        PartHashes hashes = new PartHashes("k" + id, "i" + id, "r" + id);
        Files.createDirectories(parts.directory(PartKind.KERNEL, hashes.kernel()));
        Files.write(parts.directory(PartKind.KERNEL, hashes.kernel()).resolve(KernelPart.VMLINUX), new byte[4096]);
        Files.createDirectories(parts.directory(PartKind.INITRAMFS, hashes.initramfs()));
        Files.write(parts.directory(PartKind.INITRAMFS, hashes.initramfs()).resolve(InitramfsPart.FILE), new byte[4096]);
        Path rootfs = Files.createDirectories(parts.directory(PartKind.ROOTFS, hashes.rootfs())).resolve(RootfsPart.FILE);
        qemuImg("create", "-q", "-f", "qcow2", rootfs.toString(), "64M");
        DebPackage kernel = new DebPackage("linux-image-amd64", "6.1.0", "amd64");
        DebPackage busybox = new DebPackage("busybox-static", "1.35.0", "amd64");
        ImageStore store = new ImageStore(paths);
        Image image = store.writeImage(new ImageManifest(ImageManifest.FORMAT, id, "2026-11-30T00:00:00Z", "6.1.0",
                kernel, busybox, hashes));
        if (current) {
            store.setCurrent(id);
        }
        return image;
    }

    /** An overlay at {@code disk} resting on {@code backing}, as a sandbox's or a template's disk is. */
    public static void overlay(Path disk, Path backing) throws IOException, InterruptedException {
        Files.createDirectories(disk.getParent());
        qemuImg("create", "-q", "-f", "qcow2", "-F", "qcow2", "-b", backing.toAbsolutePath().toString(),
                disk.toString());
    }

    private static void qemuImg(String... args) throws IOException, InterruptedException {
        String[] argv = new String[args.length + 1];
        argv[0] = "qemu-img";
        System.arraycopy(args, 0, argv, 1, args.length);
        Process p = new ProcessBuilder(argv).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes());
        if (p.waitFor() != 0) {
            throw new IOException(String.join(" ", argv) + ": " + out);
        }
    }
}
