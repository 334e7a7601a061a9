package dev.kosa8.image;

import dev.kosa8.vm.GuestArch;
import java.util.List;

/**
 * What goes into a guest image besides the exact package versions: bump
 * {@link #STANDARD}'s version whenever the way an image is built changes, so
 * every cached part built the old way is rebuilt.
 *
 * @param arch        the guest's architecture: the archive's packages, the kernel's format, the machine
 * @param javaPackage the Debian package the guest's Java comes from, or null for a runtime jlink'ed from the JDK
 *                    kosa8 runs on (which can only make one of the host's architecture)
 */
record Recipe(String version, String suite, List<String> includes, List<String> modules,
              String kernelMetapackage, String busyboxPackage, String diskSize, GuestArch arch, String javaPackage) {

    private static final List<String> INCLUDES =
            List.of("bash", "coreutils", "procps", "ca-certificates", "curl", "git", "python3", "tini", "util-linux");

    /** The x86-64 image: Debian 12, and the runtime of the JDK kosa8 runs on, jlink'ed to java.base. */
    static final Recipe STANDARD = new Recipe("kosa8-image-1", "bookworm", INCLUDES, KernelModules.ORDER,
            "linux-image-amd64", "busybox-static", "4G", GuestArch.AMD64, null);

    /**
     * The arm64 image: Debian 13, whose {@code openjdk-25-jre-headless} is the only arm64 Java 25 Debian ships
     * (it needs Debian 13's C library, so the whole image is Debian 13's, kernel included: 6.12, whose netfs
     * took fscache in: {@link KernelModules#ORDER_DEBIAN13}).
     */
    static final Recipe ARM64 = new Recipe("kosa8-image-1", "trixie",
            java.util.stream.Stream.concat(INCLUDES.stream(), java.util.stream.Stream.of("openjdk-25-jre-headless"))
                    .toList(),
            KernelModules.ORDER_DEBIAN13,
            "linux-image-arm64", "busybox-static", "4G", GuestArch.ARM64, "openjdk-25-jre-headless");

    Recipe {
        includes = List.copyOf(includes);
        modules = List.copyOf(modules);
    }

    /** The standard recipe of an architecture. */
    static Recipe standard(GuestArch arch) {
        return arch == GuestArch.ARM64 ? ARM64 : STANDARD;
    }

    /**
     * Whether kosa8 builds its workspace module ({@code kosa8_ws9p}) into this recipe's kernel part: for x86-64's
     * Debian 12 kernel alone so far (docs/arm64.md, "Not yet"); other guests use the agent's relay.
     */
    boolean buildsWorkspaceModule() {
        return arch == GuestArch.AMD64;
    }

    /** Where the guest's Java runtime of {@link #javaPackage} lives, as Debian installs it. */
    String packagedJavaHome() {
        return "/usr/lib/jvm/java-25-openjdk-" + arch.debianName();
    }

}
