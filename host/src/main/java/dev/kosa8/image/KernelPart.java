package dev.kosa8.image;

import dev.kosa8.host.FileTrees;
import dev.kosa8.vm.GuestArch;
import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * Makes the kernel part: the uncompressed {@code vmlinux} of Debian's kernel
 * package and the modules the guest loads, uncompressed, under
 * {@code modules/NAME.ko}, with their load order in {@code modules/order}.
 * Nothing is installed on the host: the package is only unpacked.
 */
final class KernelPart {
    /** Bump when the way this part is made changes, so cached copies are rebuilt. */
    static final String VERSION = "2";
    static final String VMLINUX = "vmlinux";
    static final String MODULES = "modules";
    static final String ORDER = "order";

    private KernelPart() {
    }

    /**
     * Makes the part of a kernel of {@code arch} and returns the kernel version (the {@code uname -r} of the
     * guest): x86-64's {@code vmlinuz} is a bzImage whose ELF {@code vmlinux} is taken out
     * ({@link KernelExtractor}); arm64's is Debian's uncompressed {@code Image}, kept as it is ({@link ArmImage})
     * under the same file name.
     */
    static String make(Path deb, DebianPackages packages, GuestArch arch, List<String> moduleOrder, Path dir)
            throws IOException {
        Path unpacked = dir.resolve("unpacked");
        packages.unpack(deb, unpacked);
        Path bzImage = onlyKernel(unpacked.resolve("boot"));
        String version = bzImage.getFileName().toString().substring("vmlinuz-".length());
        if (arch == GuestArch.ARM64) {
            ArmImage.copy(bzImage, dir.resolve(VMLINUX));
        } else {
            KernelExtractor.extract(bzImage, dir.resolve(VMLINUX));
        }

        Path modulesDir = Files.createDirectory(dir.resolve(MODULES));
        List<String> order = new ArrayList<>();
        for (KernelModules.Module m : KernelModules.resolve(DebianPackages.unpacked(unpacked, "lib/modules/" + version),
                moduleOrder)) {
            Files.write(modulesDir.resolve(m.name() + ".ko"), KernelModules.objectBytes(m.file()));
            order.add(m.name());
        }
        Files.writeString(modulesDir.resolve(ORDER), String.join("\n", order) + "\n");
        FileTrees.delete(unpacked);
        return version;
    }

    /** Adds a module already written to {@code modules/NAME.ko} at the end of the load order. */
    static void appendModule(Path dir, String name) throws IOException {
        Files.writeString(dir.resolve(MODULES).resolve(ORDER), name + "\n", StandardOpenOption.APPEND);
    }

    /** The load order written by {@link #make}. */
    static List<String> moduleOrder(Path kernelDir) throws IOException {
        return Files.readAllLines(kernelDir.resolve(MODULES).resolve(ORDER)).stream()
                .filter(l -> !l.isBlank()).toList();
    }

    static Map<String, String> facts(Path dir, String version) throws IOException {
        return Map.of("kernelVersion", version, "vmlinuxBytes", String.valueOf(Files.size(dir.resolve(VMLINUX))),
                "modules", String.join(" ", moduleOrder(dir)));
    }

    private static Path onlyKernel(Path boot) throws IOException {
        List<Path> found = new ArrayList<>();
        if (Files.isDirectory(boot)) {
            try (DirectoryStream<Path> s = Files.newDirectoryStream(boot, "vmlinuz-*")) {
                s.forEach(found::add);
            }
        }
        if (found.size() != 1) {
            throw new IOException("expected one /boot/vmlinuz-* in the kernel package, found " + found.size());
        }
        return found.getFirst();
    }
}
