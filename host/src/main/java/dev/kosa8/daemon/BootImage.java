package dev.kosa8.daemon;

import java.nio.file.Path;

/** The parts of a guest image a sandbox boots from. */
public record BootImage(String id, Path kernel, Path initramfs, Path rootDisk, String kernelArgs) {
}
