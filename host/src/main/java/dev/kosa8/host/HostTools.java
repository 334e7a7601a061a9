package dev.kosa8.host;

import java.io.File;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Finding host programs, and the required ones with their Debian packages
 * (from {@link HostRequirement}, which has every distribution's). The
 * launcher script installs the missing ones as root, or prints the exact
 * {@code apt-get} line; {@code kosa8 doctor} reports them for any
 * distribution ({@link HostCheck}).
 */
public final class HostTools {
    /** Program name to Debian package. */
    public static final Map<String, String> REQUIRED = requiredTools();

    private HostTools() {
    }

    /** The required programs of {@link HostRequirement#ALL} (optional ones aside), with their Debian packages. */
    private static Map<String, String> requiredTools() {
        Map<String, String> m = new LinkedHashMap<>();
        for (HostRequirement r : HostRequirement.ALL) {
            if (!r.optional()) {
                m.put(r.program(), r.packageOn(Distribution.DEBIAN));
            }
        }
        return java.util.Collections.unmodifiableMap(m);
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
