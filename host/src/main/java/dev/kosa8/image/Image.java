package dev.kosa8.image;

import dev.kosa8.vm.GuestArch;
import java.nio.file.Path;
import java.util.List;
import java.util.Objects;
import java.util.regex.Pattern;

/**
 * A built guest image: an uncompressed PVH-bootable kernel, an uncompressed
 * initramfs, and a root filesystem that sandboxes use through their own qcow2
 * overlay (the image itself is never written to).
 *
 * @param directory {@code images/image/<id>/}, with the manifest and links to the three parts
 * @param sizeBytes the three files' size on disk together
 * @param arch      the guest architecture it was built for (its store's: {@link ImageStore#directory})
 */
public record Image(String id, Path directory, Path vmlinux, Path initramfs, Path rootfs,
                    String kernelVersion, long sizeBytes, GuestArch arch) {
    /**
     * The image's CA bundle ({@code /etc/ssl/certs/ca-certificates.crt} as
     * built), kept beside the root disk: the system part of every sandbox's
     * Java trust store. Images built before it was kept have none.
     */
    public static final String SYSTEM_CERTIFICATES = "system-ca.crt";
    private static final Pattern HOSTNAME = Pattern.compile("[a-zA-Z0-9]([a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?");

    public Image {
        Objects.requireNonNull(id, "id");
        Objects.requireNonNull(directory, "directory");
        Objects.requireNonNull(vmlinux, "vmlinux");
        Objects.requireNonNull(initramfs, "initramfs");
        Objects.requireNonNull(rootfs, "rootfs");
        Objects.requireNonNull(kernelVersion, "kernelVersion");
        Objects.requireNonNull(arch, "arch");
    }


    /**
     * The kernel command line for a guest of this image, without the
     * {@code virtio_mmio.device=} words QEMU's microvm machine adds itself.
     * Under TCG the vm package adds {@code tsc_early_khz=<host TSC kHz>}
     * (without it about one boot in four hangs in the kernel's timer set-up)
     * and {@code tsc=reliable} (without it the guest's clock runs slow on a
     * loaded host): see docs/image.md.
     *
     * @param hostname the guest's host name, a single DNS label
     */
    public List<String> kernelCommandLine(String hostname) {
        if (!HOSTNAME.matcher(hostname).matches()) {
            throw new IllegalArgumentException("not a valid host name: " + hostname
                    + " (letters, digits and inner hyphens, at most 63)");
        }
        return List.of("console=" + arch.consoleDevice(), "root=/dev/vda", "rw", "panic=-1", "quiet",
                "kosa8.hostname=" + hostname);
    }

    /**
     * The command line of an accelerator probe boot: the guest's init prints
     * {@code KOSA8-PROBE-OK} on the console as soon as it runs, and powers off.
     */
    public List<String> probeCommandLine() {
        return List.of("console=" + arch.consoleDevice(), "panic=-1", "quiet", "kosa8.probe=1");
    }
}
