package dev.kosa8.image;

import dev.kosa8.host.KosaException;
import org.tukaani.xz.XZInputStream;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Stream;

/**
 * The kernel modules the guest loads from its initramfs, in an order that
 * satisfies their dependencies (the order of {@code modules.dep} of Debian's
 * {@code linux-image-6.1.0-*-amd64}; {@code crc32c_generic} before
 * {@code ext4}, which otherwise fails with "Cannot load crc32c driver"), and
 * finding them in an unpacked
 * kernel package.
 */
final class KernelModules {
    /** Load order. virtio_mmio takes the {@code virtio_mmio.device=} words of the command line. */
    static final List<String> ORDER = List.of(
            "virtio_ring", "virtio", "virtio_mmio", "virtio_pci_legacy_dev", "virtio_pci_modern_dev",
            "virtio_pci", "virtio_console", "virtio_blk", "failover", "net_failover", "virtio_net",
            "9pnet", "9pnet_virtio", "9pnet_fd", "netfs", "fscache", "9p",
            "vsock", "vmw_vsock_virtio_transport_common", "vmw_vsock_virtio_transport",
            "overlay", "crc16", "mbcache", "jbd2", "crc32c_generic", "ext4");

    /**
     * The same for Debian 13's 6.12 kernel (the arm64 image's): {@code netfs} took {@code fscache} in, and
     * {@code 9pnet} now needs it, so it comes first ({@code depends=} of each module's {@code .modinfo}).
     */
    static final List<String> ORDER_DEBIAN13 = List.of(
            "virtio_ring", "virtio", "virtio_mmio", "virtio_pci_legacy_dev", "virtio_pci_modern_dev",
            "virtio_pci", "virtio_console", "virtio_blk", "failover", "net_failover", "virtio_net",
            "netfs", "9pnet", "9pnet_virtio", "9pnet_fd", "9p",
            "vsock", "vmw_vsock_virtio_transport_common", "vmw_vsock_virtio_transport",
            "overlay", "crc16", "mbcache", "jbd2", "crc32c_generic", "ext4");

    private KernelModules() {
    }

    /** A module to load and the file it comes from. */
    record Module(String name, Path file) {
    }

    /**
     * Resolves {@code order} against {@code moduleTree} ({@code lib/modules/VERSION} of
     * the unpacked package). Modules built into the kernel ({@code modules.builtin})
     * are dropped; any other missing one fails, naming all that are missing.
     */
    static List<Module> resolve(Path moduleTree, List<String> order) throws IOException {
        Map<String, Path> files = index(moduleTree.resolve("kernel"));
        Set<String> builtin = builtin(moduleTree.resolve("modules.builtin"));
        List<Module> modules = new ArrayList<>();
        List<String> missing = new ArrayList<>();
        for (String name : order) {
            Path file = files.get(canonical(name));
            if (file != null) {
                modules.add(new Module(name, file));
            } else if (!builtin.contains(canonical(name))) {
                missing.add(name);
            }
        }
        if (!missing.isEmpty()) {
            throw new KosaException(KosaException.Kind.IMAGE,
                    "the kernel package has no module " + String.join(", ", missing) + " (looked in " + moduleTree + ")",
                    "the guest needs these modules; use Debian 12's linux-image-amd64, not the cloud kernel");
        }
        return modules;
    }

    /** Module names treat - and _ alike. */
    static String canonical(String name) {
        return name.replace('-', '_');
    }

    /** The module's ELF object, decompressed when the package ships it as {@code .ko.xz}. */
    static byte[] objectBytes(Path file) throws IOException {
        String name = file.getFileName().toString();
        if (name.endsWith(".ko")) {
            return Files.readAllBytes(file);
        }
        if (name.endsWith(".ko.xz")) {
            try (InputStream in = new XZInputStream(Files.newInputStream(file))) {
                return in.readAllBytes();
            }
        }
        throw new KosaException(KosaException.Kind.IMAGE,
                "the kernel module " + file + " is compressed in a way the image builder cannot read",
                "use a kernel package whose modules are .ko or .ko.xz");
    }

    private static Map<String, Path> index(Path kernelDir) throws IOException {
        Map<String, Path> files = new HashMap<>();
        if (!Files.isDirectory(kernelDir)) {
            return files;
        }
        try (Stream<Path> walk = Files.walk(kernelDir)) {
            for (Path p : walk.filter(Files::isRegularFile).sorted().toList()) {
                String f = p.getFileName().toString();
                int ko = f.indexOf(".ko");
                if (ko > 0) {
                    files.putIfAbsent(canonical(f.substring(0, ko)), p);
                }
            }
        }
        return files;
    }

    private static Set<String> builtin(Path modulesBuiltin) throws IOException {
        Set<String> names = new HashSet<>();
        if (Files.isRegularFile(modulesBuiltin)) {
            for (String line : Files.readAllLines(modulesBuiltin)) {
                String f = line.substring(line.lastIndexOf('/') + 1);
                int ko = f.indexOf(".ko");
                if (ko > 0) {
                    names.add(canonical(f.substring(0, ko)));
                }
            }
        }
        return names;
    }
}
