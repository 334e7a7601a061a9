package dev.kosa8.image;

import dev.kosa8.host.FileTrees;
import dev.kosa8.host.HostCommand;
import dev.kosa8.host.KosaException;
import dev.kosa8.image.CpioArchive.Directory;
import dev.kosa8.image.CpioArchive.Entry;
import dev.kosa8.image.CpioArchive.RegularFile;
import dev.kosa8.image.debian.LockFile;
import dev.kosa8.image.debian.Locked;
import dev.kosa8.vm.Accelerator;
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
import java.util.Optional;
import java.util.function.Consumer;

/**
 * The root filesystem built inside a guest, the builder VM (docs/image.md, "The builder VM"): the host
 * resolves and fetches the packages itself (kosa8's archive client: signed indices, every file's SHA-256),
 * makes the Java runtime as for the host build, and hands all of it in on read-only disks, with the builder's
 * own unconfigured Debian unpacked here into one tar ({@link BuilderRootTar}); the guest builds a minimal
 * Debian with mmdebstrap in its own RAM (as root there), runs the package install's
 * second stage, adds kosa8's files, makes the image's Java trust store on the image's own runtime, and writes
 * the tree with {@code mke2fs -d} onto the image's raw disk; it hands back the CA bundle and dpkg's status.
 * The host needs QEMU, {@code qemu-img} and Java: no mmdebstrap, apt, dpkg, mke2fs, nor root, and its file
 * system never holds a root-owned file of the image.
 */
final class VmRootfs {
    /** The packages of the builder's own unconfigured Debian beside minbase: what runs the build. */
    static final List<String> BUILDER_PACKAGES = List.of("mmdebstrap");
    /** The kernel modules the builder loads: the virtio-mmio transport and its disks, nothing else. */
    static final List<String> BUILDER_MODULES = List.of("virtio_ring", "virtio", "virtio_mmio", "virtio_blk");
    static final String BUNDLE = "etc/ssl/certs/ca-certificates.crt";
    static final String DPKG_STATUS = "var/lib/dpkg/status";
    /** The most one handed-back file may hold: a CA bundle and dpkg's status are well under 1 MiB. */
    static final int MAX_HANDED_BACK = 16 << 20;
    private static final long HAND_BACK_DISK = 32L << 20;

    /** What the builder VM boots with, and how to start QEMU: the image's kernel part, busybox, an accelerator. */
    record Kit(String qemu, Path kernelDir, Path busyboxDeb, DebianPackages packages,
               java.util.function.BiFunction<Path, Path, Accelerator> accelerator) {
    }

    private VmRootfs() {
    }

    /** Builds {@link RootfsPart#FILE} in {@code dir}; returns what became of the lock, as {@link RootfsPart} does. */
    static String make(Recipe recipe, JavaRuntime java, ArchivePackages archive, Optional<LockedBuild> locked,
                       Kit kit, Path log, StepReporter steps, Consumer<String> progress, Path dir) throws IOException {
        steps.begin("packages for the builder VM (kosa8's archive client)", Duration.ofSeconds(10));
        LockFile lock = locked.map(LockedBuild::rootfs)
                .orElseGet(() -> archive.resolveRootfs(recipe.includes(), recipe.suite()));
        List<Path> files = archive.download(lock);
        LockFile builder = archive.resolveBuilder(BUILDER_PACKAGES, recipe.suite());
        List<Path> builderFiles = archive.download(builder);

        Path in = dir.resolve("in");
        Path repo = in.resolve("repo");
        FlatRepo.write(repo, recipe.suite(), lock.packages(), files);
        Path builderRoot = dir.resolve("builder-root.tar");
        BuilderRootTar.write(builderFiles, builderRoot);

        steps.begin("Java runtime (jlink java.base, CDS archive)", Duration.ofSeconds(10));
        Path root = in.resolve("root");
        RootfsPart.javaRuntime(java, root.resolve("opt/kosa8/jre"), log);
        Files.createDirectories(root.resolve("etc"));
        Files.writeString(root.resolve("etc/hostname"), RootfsPart.HOSTNAME + "\n");
        Files.writeString(root.resolve("etc/hosts"), RootfsPart.HOSTS);
        Files.createDirectories(root.resolve("workspace"));
        for (Class<?> c : List.of(JavaTrustStore.class, GuestTrustStore.class)) {
            Path f = in.resolve("classes").resolve(c.getName().replace('.', '/') + ".class");
            Files.createDirectories(f.getParent());
            try (InputStream s = c.getResourceAsStream(c.getSimpleName() + ".class")) {
                Files.write(f, s.readAllBytes());
            }
        }
        Files.writeString(in.resolve("build.sh"), buildScript(recipe, lock));
        Path input = dir.resolve("in.tar");
        TreeTar.write(in, input);
        FileTrees.delete(in);

        Path raw = dir.resolve("raw.img");
        Path back = dir.resolve("back.img");
        sparse(raw, bytes(recipe.diskSize()));
        sparse(back, HAND_BACK_DISK);
        Path initramfs = dir.resolve("builder.cpio");
        initramfs(kit, initramfs, dir.resolve("busybox"));

        steps.begin("in the builder VM: mmdebstrap " + recipe.suite() + ", mke2fs",
                Duration.ofMinutes(4));
        Path kernel = kit.kernelDir().resolve(KernelPart.VMLINUX);
        Accelerator accel = kit.accelerator().apply(kernel, initramfs);
        BuilderVm.run(BuilderVm.argv(kit.qemu(), accel, new BuilderVm.Machine(kernel, initramfs, builderRoot, input, raw, back),
                2), log, progress, Duration.ofMinutes(45));

        Map<String, byte[]> handed = handedBack(back);
        byte[] bundle = handed.get(BUNDLE);
        byte[] status = handed.get(DPKG_STATUS);
        if (bundle == null || status == null) {
            throw new KosaException(KosaException.Kind.IMAGE, "the builder VM did not hand back " + BUNDLE + " and "
                    + DPKG_STATUS + " (it handed back " + handed.keySet() + ")", "see the build log " + log);
        }
        Files.write(dir.resolve(Image.SYSTEM_CERTIFICATES), bundle);
        Path tree = dir.resolve("handed-back");
        Files.createDirectories(tree.resolve(DPKG_STATUS).getParent());
        Files.write(tree.resolve(DPKG_STATUS), status);
        String fate = RootfsPart.lockFate(Optional.of(lock), locked, tree, dir);
        FileTrees.delete(tree);

        steps.begin("qcow2", Duration.ofSeconds(10));
        HostCommand.of("qemu-img", "convert", "-O", "qcow2", raw.toString(), dir.resolve(RootfsPart.FILE).toString())
                .logTo(log).run(KosaException.Kind.IMAGE, "root filesystem: qemu-img convert");
        for (Path p : List.of(raw, back, input, builderRoot, initramfs)) {
            Files.deleteIfExists(p);
        }
        return fate;
    }

    /**
     * The script the builder runs in its unconfigured Debian (chrooted, as root): mmdebstrap from the flat
     * repository, exactly as {@link RootfsPart#mmdebstrapFromRepo} runs it on a host, then kosa8's files, the
     * trust store, the hand-back and the ext4 file system. Every word is quoted for {@code sh}.
     */
    static String buildScript(Recipe recipe, LockFile lock) {
        List<String> mmdebstrap = List.copyOf(RootfsPart.mmdebstrapFromRepo(recipe, lock, Path.of("/in/repo"),
                Path.of("/target")));
        String store = JavaTrustStore.GUEST_PATH;
        return "# written by kosa8 (VmRootfs): the root filesystem's build inside the builder VM\n"
                + "echo 'kosa8-builder: mmdebstrap " + recipe.suite() + ", " + lock.packages().size() + " packages'\n"
                + quote(mmdebstrap) + "\n"
                + "echo 'kosa8-builder: kosa8'\"'\"'s files and the Java trust store'\n"
                + "cp -a /in/root/. /target/\n"
                + "ln -sfn " + quote(List.of(store)) + " /target/opt/kosa8/jre/lib/security/cacerts\n"
                + "/target/opt/kosa8/jre/bin/java -Xshare:off -cp /in/classes " + GuestTrustStore.class.getName()
                + " /target/" + BUNDLE + " /target" + store + "\n"
                + "tar -cf \"$KOSA8_BACK\" -C /target " + BUNDLE + " " + DPKG_STATUS + "\n"
                + "echo 'kosa8-builder: mke2fs -t ext4 -d'\n"
                + "mke2fs -q -t ext4 -F -L kosa8-root -d /target \"$KOSA8_OUT\"\n"
                + "sync\n";
    }

    /** The words for {@code sh}, each in single quotes. */
    static String quote(List<String> words) {
        StringBuilder s = new StringBuilder();
        for (String w : words) {
            if (!s.isEmpty()) {
                s.append(' ');
            }
            s.append('\'').append(w.replace("'", "'\"'\"'")).append('\'');
        }
        return s.toString();
    }

    /** The builder's initramfs: busybox, the modules it loads and their order, {@code builder.sh} as {@code /init}. */
    private static void initramfs(Kit kit, Path cpio, Path scratch) throws IOException {
        kit.packages().unpack(kit.busyboxDeb(), scratch);
        List<Entry> e = new ArrayList<>();
        for (String d : List.of("kosa8", "kosa8/modules", "dev", "proc", "sys", "tmp", "bin")) {
            e.add(new Directory(d, d.equals("tmp") ? 01777 : 0755));
        }
        e.add(new CpioArchive.CharDevice("dev/console", 0600, 5, 1));
        e.add(new RegularFile("kosa8/busybox", 0755, Files.readAllBytes(scratch.resolve("bin/busybox"))));
        e.add(new RegularFile("init", 0755, resource("builder.sh")));
        List<String> order = new ArrayList<>();
        for (String m : KernelPart.moduleOrder(kit.kernelDir())) {
            if (BUILDER_MODULES.contains(m)) {
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
        FileTrees.delete(scratch);
    }

    /** The files the builder wrote as a tar onto the hand-back disk, each at most {@link #MAX_HANDED_BACK}. */
    static Map<String, byte[]> handedBack(Path disk) throws IOException {
        Map<String, byte[]> out = new HashMap<>();
        try (InputStream raw = Files.newInputStream(disk);
             TarArchiveInputStream tar = new TarArchiveInputStream(raw)) {
            TarArchiveEntry t;
            while ((t = tar.getNextEntry()) != null) {
                if (!t.isFile() || out.size() >= 8) {
                    continue;
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

    private static void sparse(Path file, long size) throws IOException {
        Files.deleteIfExists(file);
        try (RandomAccessFile f = new RandomAccessFile(file.toFile(), "rw")) {
            f.setLength(size);
        }
    }

    /** A size such as {@code 4G} or {@code 512M}, in bytes. */
    static long bytes(String size) {
        char unit = size.charAt(size.length() - 1);
        long n = Long.parseLong(Character.isDigit(unit) ? size : size.substring(0, size.length() - 1));
        return switch (Character.toUpperCase(unit)) {
            case 'K' -> n << 10;
            case 'M' -> n << 20;
            case 'G' -> n << 30;
            case 'T' -> n << 40;
            default -> n;
        };
    }

    private static byte[] resource(String name) {
        try (InputStream in = VmRootfs.class.getResourceAsStream(name)) {
            if (in == null) {
                throw new KosaException(KosaException.Kind.INTERNAL, "this kosa8 build lacks the resource "
                        + "/dev/kosa8/image/" + name, "build kosa8 with `mvn package` from the project root");
            }
            return in.readAllBytes();
        } catch (IOException e) {
            throw new KosaException(KosaException.Kind.INTERNAL, "cannot read the resource " + name, "", e);
        }
    }
}
