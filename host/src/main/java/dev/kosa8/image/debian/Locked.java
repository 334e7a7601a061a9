package dev.kosa8.image.debian;

import java.util.regex.Pattern;

/**
 * One line of a lock file: exactly which {@code .deb} an image was built
 * from, and enough to fetch it again and check it.
 *
 * @param archive which archive it came from ({@link Source#label()}: {@code debian}, {@code debian-security})
 * @param filename its path under that archive's mirror
 */
public record Locked(String name, String version, String architecture, String sha256, long size,
                     String archive, String filename) {
    private static final Pattern SHA256 = Pattern.compile("[0-9a-f]{64}");
    private static final Pattern WORD = Pattern.compile("[A-Za-z0-9+._~:%/-]+");

    public Locked {
        if (!SHA256.matcher(sha256).matches() || size <= 0 || !WORD.matcher(name).matches()
                || !WORD.matcher(version).matches() || !WORD.matcher(architecture).matches()
                || !WORD.matcher(archive).matches() || !filename.startsWith("pool/") || filename.contains("..")
                || !WORD.matcher(filename).matches()) {
            throw ArchiveErrors.malformed("a bad lock entry: " + name + " " + version + " " + architecture);
        }
    }

    public Locked(String name, String version, String architecture, String sha256, long size, String filename) {
        this(name, version, architecture, sha256, size, "debian", filename);
    }

    Locked withArchive(String label) {
        return new Locked(name, version, architecture, sha256, size, label, filename);
    }

    /** The entry as a lock file writes it: seven words. */
    public String line() {
        return String.join(" ", name, version, architecture, sha256, String.valueOf(size), archive, filename);
    }
}
