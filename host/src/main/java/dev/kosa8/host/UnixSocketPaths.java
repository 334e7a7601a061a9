package dev.kosa8.host;

import java.util.Locale;

/**
 * How long a unix socket's path may be: {@code sun_path} holds it with its terminating NUL, 108 bytes on Linux
 * ({@code <sys/un.h>}: {@code UNIX_PATH_MAX}), 104 on macOS ({@code <sys/un.h>}: {@code char sun_path[104]}).
 * A longer path fails only when QEMU or the daemon binds it, with an error that names neither limit, so
 * kosa8 checks it when it makes a machine's spec and says which path is too long.
 */
public final class UnixSocketPaths {
    /** The most bytes a socket path may have on this host (without the NUL). */
    public static final int MAX_BYTES = maxBytes(System.getProperty("os.name", ""));

    private UnixSocketPaths() {
    }

    /** The most bytes of a socket path on the OS a JVM names {@code osName}. */
    static int maxBytes(String osName) {
        String os = osName.toLowerCase(Locale.ROOT);
        return os.contains("mac") || os.contains("darwin") ? 103 : 107;
    }
}
