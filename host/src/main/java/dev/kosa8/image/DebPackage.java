package dev.kosa8.image;

import java.util.regex.Pattern;

/**
 * One exact Debian binary package: its name, version and architecture, which
 * together name the {@code .deb} that {@code apt-get download} writes.
 */
record DebPackage(String name, String version, String architecture) {
    private static final Pattern NAME = Pattern.compile("[a-z0-9][a-z0-9+.-]+");
    private static final Pattern VERSION = Pattern.compile("[0-9A-Za-z.+~:-]+");

    DebPackage {
        if (!NAME.matcher(name).matches()) {
            throw new IllegalArgumentException("bad Debian package name: " + name);
        }
        if (!VERSION.matcher(version).matches()) {
            throw new IllegalArgumentException("bad Debian package version: " + version);
        }
        if (!NAME.matcher(architecture).matches()) {
            throw new IllegalArgumentException("bad Debian architecture: " + architecture);
        }
    }

    /** The file {@code apt-get download} writes: an epoch's colon becomes {@code %3a}. */
    String fileName() {
        return name + "_" + version.replace(":", "%3a") + "_" + architecture + ".deb";
    }

    /** The argument that makes {@code apt-get download} fetch exactly this version. */
    String aptSelector() {
        return name + "=" + version;
    }
}
