package dev.kosa8.image.debian;

import java.util.HexFormat;
import java.util.List;
import java.util.Locale;
import java.util.regex.Pattern;

/**
 * One binary package of a {@code Packages} index: what resolving and
 * downloading need, checked as it is read. {@code filename} is the path
 * under the mirror's root; {@code sha256} and {@code size} are what the
 * downloaded {@code .deb} must have.
 */
public record PackageEntry(String name, String versionText, DebianVersion version, String architecture,
                           String filename, long size, String sha256, String priority, boolean essential,
                           List<List<Relation>> depends, List<List<Relation>> preDepends,
                           List<Relation> provides) {
    private static final Pattern NAME = Pattern.compile("[a-z0-9][a-z0-9+.-]+");
    private static final Pattern ARCH = Pattern.compile("[a-z0-9-]+");
    private static final Pattern SHA256 = Pattern.compile("[0-9a-f]{64}");
    // a path under the mirror: no absolute path, no "..", no odd characters
    private static final Pattern FILENAME = Pattern.compile("pool/[A-Za-z0-9+._~%/-]+\\.deb");

    public PackageEntry {
        depends = List.copyOf(depends);
        preDepends = List.copyOf(preDepends);
        provides = List.copyOf(provides);
    }

    /** Reads one stanza of a Packages file; anything missing or malformed is refused. */
    public static PackageEntry of(Stanza s, String what) {
        String name = s.required("Package", what);
        if (!NAME.matcher(name).matches()) {
            throw ArchiveErrors.malformed(what + ": bad package name");
        }
        String where = what + ", package " + name;
        String versionText = s.required("Version", where);
        String arch = s.required("Architecture", where);
        String filename = s.required("Filename", where);
        String sha = s.required("SHA256", where).toLowerCase(Locale.ROOT);
        if (!ARCH.matcher(arch).matches()) {
            throw ArchiveErrors.malformed(where + ": bad architecture");
        }
        if (!FILENAME.matcher(filename).matches() || filename.contains("..") || filename.contains("//")) {
            throw ArchiveErrors.malformed(where + ": refused the file name '" + filename + "'");
        }
        if (!SHA256.matcher(sha).matches()) {
            throw ArchiveErrors.malformed(where + ": bad SHA256");
        }
        long size;
        try {
            size = Long.parseLong(s.required("Size", where));
        } catch (NumberFormatException e) {
            throw ArchiveErrors.malformed(where + ": bad Size");
        }
        if (size <= 0) {
            throw ArchiveErrors.malformed(where + ": bad Size");
        }
        List<Relation> provides = Relation.parseField(s.field("Provides").orElse(""), where + " Provides").stream()
                .map(g -> {
                    if (g.size() != 1 || (!g.getFirst().op().isEmpty() && !g.getFirst().op().equals("="))) {
                        throw ArchiveErrors.malformed(where + ": Provides may only name packages, with '=' versions");
                    }
                    return g.getFirst();
                }).toList();
        return new PackageEntry(name, versionText, DebianVersion.parse(versionText), arch, filename, size, sha,
                s.field("Priority").orElse("optional"), s.field("Essential").orElse("no").equalsIgnoreCase("yes"),
                Relation.parseField(s.field("Depends").orElse(""), where + " Depends"),
                Relation.parseField(s.field("Pre-Depends").orElse(""), where + " Pre-Depends"), provides);
    }

    /** The hash as bytes, for comparing with a digest. */
    byte[] sha256Bytes() {
        return HexFormat.of().parseHex(sha256);
    }

    /** The lock file's line for this package. */
    public Locked locked() {
        return new Locked(name, versionText, architecture, sha256, size, filename);
    }

    @Override
    public String toString() {
        return name + " " + versionText + " " + architecture;
    }
}
