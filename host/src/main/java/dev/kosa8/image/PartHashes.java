package dev.kosa8.image;

/**
 * The content hash of each part, from exactly the inputs that part is made
 * of. The initramfs's hash covers the kernel's (it carries that kernel's
 * modules) and the agent's jar, so a new agent rebuilds the initramfs alone.
 */
record PartHashes(String kernel, String initramfs, String rootfs) {

    static PartHashes of(Recipe recipe, DebPackage kernelPackage, DebPackage busybox,
                         GuestFiles guest, String javaVersion) {
        return of(recipe, kernelPackage, busybox, guest, javaVersion, WorkspaceModule.toolchain());
    }

    /** {@code toolchain}: what the host offers to build the workspace's module ({@link WorkspaceModule#toolchain}). */
    static PartHashes of(Recipe recipe, DebPackage kernelPackage, DebPackage busybox,
                         GuestFiles guest, String javaVersion, String toolchain) {
        return of(recipe, kernelPackage, busybox, guest, javaVersion, toolchain, null);
    }

    /**
     * As above; {@code lockDigest} ({@link LockedBuild#digest}), when not null, is the root filesystem's exact
     * package list, which then goes into its hash: a root filesystem built from a lock is found again only for
     * that lock. Without one the hash is as it always was, so images built before keep their ids.
     */
    static PartHashes of(Recipe recipe, DebPackage kernelPackage, DebPackage busybox,
                         GuestFiles guest, String javaVersion, String toolchain, String lockDigest) {
        String kernel = ContentHash.of("kernel")
                .add("recipe", recipe.version())
                .add("part", KernelPart.VERSION)
                .add("package", kernelPackage.fileName())
                .add("modules", recipe.modules())
                .add("ws9pModule", WorkspaceModule.source())
                .add("toolchain", toolchain)
                .hex();
        String initramfs = ContentHash.of("initramfs")
                .add("recipe", recipe.version())
                .add("part", InitramfsPart.VERSION)
                .add("kernel", kernel)
                .add("busybox", busybox.fileName())
                .add("init", guest.init())
                .add("launcher", guest.launcher())
                .add("agent", guest.agentJar())
                .add("guest-command", guest.guestCommand())
                .hex();
        ContentHash rootfsHash = ContentHash.of("rootfs")
                .add("recipe", recipe.version())
                .add("part", RootfsPart.VERSION)
                .add("suite", recipe.suite())
                .add("includes", recipe.includes())
                .add("disk", recipe.diskSize())
                .add("java", javaVersion);
        if (recipe.arch() != dev.kosa8.vm.GuestArch.AMD64) {
            // the other architectures' hashes only: x86-64's stay what they were, so no image is rebuilt for this
            rootfsHash.add("arch", recipe.arch().debianName()).add("javaPackage", recipe.javaPackage());
        }
        String rootfs = (lockDigest == null ? rootfsHash : rootfsHash.add("lock", lockDigest)).hex();
        return new PartHashes(kernel, initramfs, rootfs);
    }

    String of(PartKind kind) {
        return switch (kind) {
            case KERNEL -> kernel;
            case INITRAMFS -> initramfs;
            case ROOTFS -> rootfs;
        };
    }

    /** The image's id: short, and different whenever any part differs. */
    String imageId() {
        return ContentHash.of("image").add("kernel", kernel).add("initramfs", initramfs).add("rootfs", rootfs)
                .hex().substring(0, 16);
    }
}
