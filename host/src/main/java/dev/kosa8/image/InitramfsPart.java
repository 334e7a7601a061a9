package dev.kosa8.image;

import dev.kosa8.host.FileTrees;
import dev.kosa8.image.CpioArchive.CharDevice;
import dev.kosa8.image.CpioArchive.Directory;
import dev.kosa8.image.CpioArchive.Entry;
import dev.kosa8.image.CpioArchive.RegularFile;

import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Makes the initramfs: a static busybox, the kernel's modules and their load
 * order, the {@code /init} script, and the agent with its launcher, which
 * {@code /init} copies to the root filesystem's {@code /run/kosa8}.
 */
final class InitramfsPart {
    /** Bump when the way this part is made changes, so cached copies are rebuilt. */
    static final String VERSION = "1";
    static final String FILE = "initramfs.cpio";

    private InitramfsPart() {
    }

    static void make(Path busyboxDeb, DebianPackages packages, Path kernelDir, GuestFiles guest, Path dir)
            throws IOException {
        byte[] busybox = busybox(packages, busyboxDeb, dir.resolve("unpacked"));
        Map<String, byte[]> modules = new LinkedHashMap<>();
        for (String name : KernelPart.moduleOrder(kernelDir)) {
            modules.put(name, Files.readAllBytes(kernelDir.resolve(KernelPart.MODULES).resolve(name + ".ko")));
        }
        try (OutputStream out = Files.newOutputStream(dir.resolve(FILE))) {
            CpioArchive.write(entries(busybox, modules, guest), out);
        }
    }

    /** The static busybox of {@code deb}, unpacked in {@code scratch} (deleted after). */
    static byte[] busybox(DebianPackages packages, Path deb, Path scratch) throws IOException {
        try {
            packages.unpack(deb, scratch);
            return Files.readAllBytes(DebianPackages.unpacked(scratch, "bin/busybox"));
        } finally {
            FileTrees.delete(scratch);
        }
    }

    /** Everything in the initramfs; {@code modules} in load order. */
    static List<Entry> entries(byte[] busybox, Map<String, byte[]> modules, GuestFiles guest) {
        List<Entry> e = new ArrayList<>();
        for (String d : List.of("bin", "dev", "etc", "kosa8", "lib", "lib/modules", "newroot", "proc", "root",
                "run", "sbin", "sys", "tmp", "usr", "usr/bin", "usr/sbin")) {
            e.add(new Directory(d, d.equals("root") ? 0700 : d.equals("tmp") ? 01777 : 0755));
        }
        // The console exists before devtmpfs is mounted, and again under /dev once /dev moves away.
        e.add(new CharDevice("dev/console", 0600, 5, 1));
        e.add(new CharDevice("dev/null", 0666, 1, 3));
        e.add(new RegularFile("bin/busybox", 0755, busybox));
        e.add(new RegularFile("init", 0755, guest.init()));
        e.add(new RegularFile("kosa8/agent.jar", 0644, guest.agentJar()));
        e.add(new RegularFile("kosa8/kosa8-agent", 0755, guest.launcher()));
        e.add(new RegularFile("kosa8/kosa8-guest", 0755, guest.guestCommand()));
        modules.forEach((name, bytes) -> e.add(new RegularFile("lib/modules/" + name + ".ko", 0644, bytes)));
        e.add(new RegularFile("lib/modules/order", 0644,
                (String.join("\n", modules.keySet()) + "\n").getBytes(StandardCharsets.UTF_8)));
        return e;
    }
}
