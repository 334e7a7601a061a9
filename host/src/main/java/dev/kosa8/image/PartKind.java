package dev.kosa8.image;

/** The three separately cached parts of a guest image. */
enum PartKind {
    KERNEL("kernel", "kernel"),
    INITRAMFS("initramfs", "initramfs"),
    ROOTFS("rootfs", "root filesystem");

    private final String directoryName;
    private final String displayName;

    PartKind(String directoryName, String displayName) {
        this.directoryName = directoryName;
        this.displayName = displayName;
    }

    /** The folder under the images directory that holds this kind's parts, one per hash. */
    String directoryName() {
        return directoryName;
    }

    String displayName() {
        return displayName;
    }
}
