package dev.kosa8.host;

import java.util.EnumMap;
import java.util.List;
import java.util.Map;

/**
 * One program kosa8 runs on the host, why, and the package that provides it
 * on each {@link Distribution} (names as those distributions' package
 * indices call them; only Debian's are exercised here, the others are in
 * docs/cli.md's table). {@code optional}: kosa8 works without it, in a
 * lesser way the purpose says.
 */
public record HostRequirement(String program, String purpose, boolean optional,
                              Map<Distribution, String> packages) {

    public HostRequirement {
        packages = Map.copyOf(packages);
    }

    static HostRequirement of(String program, String purpose, boolean optional, String debian, String fedora,
                              String arch, String opensuse, String nix) {
        Map<Distribution, String> m = new EnumMap<>(Distribution.class);
        m.put(Distribution.DEBIAN, debian);
        m.put(Distribution.FEDORA, fedora);
        m.put(Distribution.ARCH, arch);
        m.put(Distribution.OPENSUSE, opensuse);
        m.put(Distribution.NIXOS, nix);
        return new HostRequirement(program, purpose, optional, m);
    }

    /** The package on {@code d}; Debian's name when the distribution is unknown. */
    public String packageOn(Distribution d) {
        return packages.getOrDefault(d, packages.get(Distribution.DEBIAN));
    }

    /**
     * What building the image and running sandboxes need. The image's root file system is built in the builder
     * VM, with QEMU and Java alone; mmdebstrap, apt, dpkg-deb and mke2fs are the faster path on a Debian host as
     * root (docs/image.md, "The root requirement, and the builder VM"), so they are optional.
     */
    public static final List<HostRequirement> ALL = List.of(
            of("qemu-system-x86_64", "runs x86-64 sandboxes and the image's builder VM", false,
                    "qemu-system-x86", "qemu-system-x86-core", "qemu-system-x86", "qemu-x86", "qemu"),
            of("qemu-system-aarch64", "runs arm64 sandboxes (`--arch arm64`) and their image's builder VM", true,
                    "qemu-system-arm", "qemu-system-aarch64-core", "qemu-system-aarch64", "qemu-arm", "qemu"),
            of("qemu-img", "makes each sandbox's disk and the image's qcow2", false,
                    "qemu-utils", "qemu-img", "qemu-img", "qemu-tools", "qemu"),
            of("mmdebstrap", "builds the image's root file system on the host as root, faster (else the builder VM)",
                    true, "mmdebstrap", "mmdebstrap", "mmdebstrap", "mmdebstrap", "mmdebstrap"),
            of("mke2fs", "the host build's ext4 file system (else the builder VM)", true,
                    "e2fsprogs", "e2fsprogs", "e2fsprogs", "e2fsprogs", "e2fsprogs"),
            of("dpkg-deb", "the host build (else kosa8 unpacks packages in Java)", true,
                    "dpkg", "dpkg", "dpkg", "dpkg", "dpkg"),
            of("apt-get", "the host build: mmdebstrap runs it (else the builder VM)", true,
                    "apt", "apt", "apt", "apt", "apt"),
            of("setsid", "starts the daemon in its own session", false,
                    "util-linux", "util-linux", "util-linux", "util-linux", "util-linux"),
            of("socat", "the QEMU monitor's stream fallback", false,
                    "socat", "socat", "socat", "socat", "socat"),
            of("bwrap", "QEMU's jail (without it QEMU runs unjailed, with a warning)", true,
                    "bubblewrap", "bubblewrap", "bubblewrap", "bubblewrap", "bubblewrap"),
            of("make", "builds the workspace's kernel module on the host (else the builder VM builds it)", true,
                    "make", "make", "make", "make", "gnumake"),
            of("gcc-12", "builds the workspace's kernel module on the host, with the kernel's own compiler", true,
                    "gcc-12", "gcc", "gcc", "gcc12", "gcc12"));

    /** The package that installs a Java 25 JDK on {@code d}. */
    public static String javaPackage(Distribution d) {
        return switch (d) {
            case DEBIAN, UNKNOWN -> "temurin-25-jdk";
            case FEDORA -> "java-25-openjdk-devel";
            case ARCH -> "jdk-openjdk";
            case OPENSUSE -> "java-25-openjdk-devel";
            case NIXOS -> "jdk25";
        };
    }
}
