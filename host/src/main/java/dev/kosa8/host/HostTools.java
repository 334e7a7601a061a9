package dev.kosa8.host;

import java.io.File;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The host programs kosa8 needs and the Debian packages that provide them.
 * The launcher script installs the missing ones as root, or prints the exact
 * {@code apt-get} line; {@code kosa8 doctor} reports them.
 */
public final class HostTools {
    /** Program name to Debian package. */
    public static final Map<String, String> REQUIRED = requiredTools();

    private HostTools() {
    }

    private static Map<String, String> requiredTools() {
        Map<String, String> m = new LinkedHashMap<>();
        m.put("qemu-system-x86_64", "qemu-system-x86");
        m.put("qemu-img", "qemu-utils");
        m.put("mke2fs", "e2fsprogs");
        m.put("mmdebstrap", "mmdebstrap");
        m.put("dpkg-deb", "dpkg");
        m.put("apt-get", "apt");
        m.put("setsid", "util-linux");
        m.put("socat", "socat");
        return m;
    }

    public static String which(String program) {
        String path = System.getenv().getOrDefault("PATH", "/usr/bin:/bin") + ":/usr/sbin:/sbin";
        for (String dir : path.split(File.pathSeparator)) {
            File f = new File(dir, program);
            if (f.isFile() && f.canExecute()) {
                return f.getAbsolutePath();
            }
        }
        return null;
    }

    /** The packages of the programs that are missing. */
    public static List<String> missingPackages() {
        List<String> out = new ArrayList<>();
        REQUIRED.forEach((prog, pkg) -> {
            if (which(prog) == null && !out.contains(pkg)) {
                out.add(pkg);
            }
        });
        return out;
    }

    public static String installCommand(List<String> packages) {
        return "sudo apt-get install -y --no-install-recommends " + String.join(" ", packages);
    }
}
