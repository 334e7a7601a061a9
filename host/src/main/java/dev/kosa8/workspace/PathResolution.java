package dev.kosa8.workspace;

/**
 * Which way the folder server confines the guest's paths to the folder ({@link LinuxFs#openBeneath}): the
 * kernel's {@code openat2(RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS)}, one call a path, or the portable
 * component walk ({@link BeneathWalk}), one call a component. The walk is taken when the daemon's own
 * environment says {@code KOSA8_HOST_PROFILE=portable} (read once, at start; nothing a guest sends reaches
 * it), when a probe at start finds no {@code openat2} (a kernel before 5.6, which answers ENOSYS, or a
 * container's seccomp filter, which may answer ENOSYS or EPERM), and from any later ENOSYS of it on.
 */
final class PathResolution {
    /** The environment variable, and the value of it, that choose the portable profile. */
    static final String PROFILE_VARIABLE = "KOSA8_HOST_PROFILE", PORTABLE = "portable";
    /** Whether {@code openat2} worked on this host when probed at start. */
    static final boolean KERNEL_HAS_OPENAT2 = probe();
    private static volatile boolean portable = PORTABLE.equals(System.getenv(PROFILE_VARIABLE)) || !KERNEL_HAS_OPENAT2;

    private PathResolution() {
    }

    static boolean portable() {
        return portable;
    }

    /** {@code openat2} answered ENOSYS: every path is walked from now on. */
    static void noOpenat2() {
        portable = true;
    }

    /** {@code openat2} of "." beneath "/", as the server calls it. */
    private static boolean probe() {
        if (!LinuxFs.AVAILABLE) {
            return false;
        }
        try {
            int root = LinuxFs.openRoot("/");
            try {
                LinuxFs.close(LinuxFs.openat2Beneath(root, "", LinuxFs.O_PATH, 0));
                return true;
            } finally {
                LinuxFs.close(root);
            }
        } catch (ErrnoException e) {
            return false;
        }
    }
}
