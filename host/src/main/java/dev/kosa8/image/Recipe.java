package dev.kosa8.image;

import java.util.List;

/**
 * What goes into a guest image besides the exact package versions: bump
 * {@link #STANDARD}'s version whenever the way an image is built changes, so
 * every cached part built the old way is rebuilt.
 */
record Recipe(String version, String suite, List<String> includes, List<String> modules,
              String kernelMetapackage, String busyboxPackage, String diskSize) {

    static final Recipe STANDARD = new Recipe("kosa8-image-1", "bookworm",
            List.of("bash", "coreutils", "procps", "ca-certificates", "curl", "git", "python3", "tini", "util-linux"),
            KernelModules.ORDER, "linux-image-amd64", "busybox-static", "4G");

    Recipe {
        includes = List.copyOf(includes);
        modules = List.copyOf(modules);
    }
}
