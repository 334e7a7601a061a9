package dev.kosa8.daemon;

import java.nio.file.Path;

/** The parts of a guest image a sandbox boots from. */
public record BootImage(String id, Path kernel, Path initramfs, Path rootDisk, String kernelArgs) {
    /** The image's CA bundle, kept beside its root disk ({@link dev.kosa8.image.Image#SYSTEM_CERTIFICATES}). */
    public Path systemCertificates() {
        return rootDisk.resolveSibling(dev.kosa8.image.Image.SYSTEM_CERTIFICATES);
    }
}
