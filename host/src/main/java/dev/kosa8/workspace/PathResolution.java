package dev.kosa8.workspace;

/**
 * Which way the folder server confines the guest's paths to the folder ({@link LinuxFs#openBeneath}): the
 * kernel's {@code openat2(RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS)}, one call a path, or the portable
 * component walk ({@link BeneathWalk}), one call a component. The walk is taken when the daemon's own
 * environment says {@code KOSA8_HOST_PROFILE=portable} (read once, at start; nothing a guest sends reaches
 * it), and from the first {@code ENOSYS} of {@code openat2} on: a kernel before 5.6, or a container's
 * seccomp filter that refuses the call.
 */
final class PathResolution {
    /** The environment variable, and the value of it, that choose the portable profile. */
    static final String PROFILE_VARIABLE = "KOSA8_HOST_PROFILE", PORTABLE = "portable";
    private static volatile boolean portable = PORTABLE.equals(System.getenv(PROFILE_VARIABLE));

    private PathResolution() {
    }

    static boolean portable() {
        return portable;
    }

    /** {@code openat2} answered ENOSYS: every path is walked from now on. */
    static void noOpenat2() {
        portable = true;
    }

}
