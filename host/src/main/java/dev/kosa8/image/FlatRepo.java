package dev.kosa8.image;

import dev.kosa8.host.AtomicFile;
import dev.kosa8.host.KosaException;
import dev.kosa8.image.debian.DebCache;
import dev.kosa8.image.debian.Locked;
import dev.kosa8.image.debian.Stanza;
import dev.kosa8.image.debian.Stanzas;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.List;
import java.util.Set;

/**
 * A Debian flat repository ({@code deb [trusted=yes] copy:///DIR ./}) of
 * exactly a lock's {@code .deb}s, which apt (and so mmdebstrap) installs from
 * when an image is built from a lock: apt then has no other version of any
 * package to choose, so the root filesystem gets the locked ones or the
 * build fails. Each {@code Packages} stanza is the package's own
 * {@code control} file with {@code Filename}, {@code Size} and
 * {@code SHA256} added, as {@code dpkg-scanpackages} writes it.
 *
 * <p>{@code trusted=yes} is right here: apt's own check would be of a
 * signature over these very files, and each was checked against the lock's
 * SHA-256 (which came from the archive's signed index) before it was put
 * here, and is hashed again as it is listed.
 */
final class FlatRepo {
    static final String PACKAGES = "Packages";
    static final String RELEASE = "Release";
    /** Fields the repository adds; a control file naming one is not a package's. */
    private static final Set<String> ADDED = Set.of("Filename", "Size", "SHA256", "MD5sum", "SHA1", "SHA512");

    private FlatRepo() {
    }

    /** The apt source line of the repository in {@code dir}. */
    static String sourceLine(Path dir) {
        return "deb [trusted=yes] copy://" + dir.toAbsolutePath().toUri().getRawPath() + " ./"; // a space: %20
    }

    /**
     * Puts each of {@code files} (the {@code .deb} of {@code packages}' entry at the same index) into {@code dir}
     * under its archive file name, and writes the index and its Release, which names {@code suite} as its suite
     * and codename: mmdebstrap finds the essential set and minbase's packages by those
     * ({@code ?archive(^bookworm$)}), and a repository naming neither gives it none, so no dpkg to install with.
     */
    static void write(Path dir, String suite, List<Locked> packages, List<Path> files) throws IOException {
        if (packages.size() != files.size()) {
            throw new IllegalArgumentException(packages.size() + " packages, " + files.size() + " files");
        }
        Files.createDirectories(dir);
        StringBuilder index = new StringBuilder();
        for (int i = 0; i < packages.size(); i++) {
            Locked p = packages.get(i);
            String name = Path.of(p.filename()).getFileName().toString();
            Path deb = dir.resolve(name);
            place(files.get(i), deb);
            String sha = DebCache.hash(deb);
            if (!sha.equals(p.sha256()) || Files.size(deb) != p.size()) {
                throw new KosaException(KosaException.Kind.IMAGE, name + " is not the file the lock names (SHA-256 "
                        + sha + ", the lock's " + p.sha256() + ")", "run the build again; the cache fetches it anew");
            }
            index.append(stanza(p, DebUnpack.control(deb), "./" + name)).append('\n');
        }
        byte[] packagesText = index.toString().getBytes(StandardCharsets.UTF_8);
        AtomicFile.write(dir.resolve(PACKAGES), packagesText);
        AtomicFile.write(dir.resolve(RELEASE), release(suite, packagesText).getBytes(StandardCharsets.UTF_8));
    }

    /** One {@code Packages} stanza: the control file, checked to be {@code p}'s, and where the file is. */
    static String stanza(Locked p, String control, String filename) {
        String what = p.name() + "'s control file";
        List<Stanza> stanzas = Stanzas.parse(control, what);
        if (stanzas.size() != 1) {
            throw bad(p, "it holds " + stanzas.size() + " stanzas, not one");
        }
        Stanza s = stanzas.getFirst();
        if (!s.required("Package", what).equals(p.name()) || !s.required("Version", what).equals(p.version())
                || !s.required("Architecture", what).equals(p.architecture())) {
            throw bad(p, "it names " + s.required("Package", what) + " " + s.required("Version", what) + " "
                    + s.required("Architecture", what));
        }
        for (String f : s.fields().keySet()) {
            if (ADDED.stream().anyMatch(a -> a.equalsIgnoreCase(f))) {
                throw bad(p, "it has a " + f + " field, which only a repository's index may have");
            }
        }
        return control.strip() + "\nFilename: " + filename + "\nSize: " + p.size() + "\nSHA256: " + p.sha256() + "\n";
    }

    private static String release(String suite, byte[] packagesText) {
        if (!suite.matches("[a-z0-9-]+")) {
            throw new IllegalArgumentException("bad suite " + suite);
        }
        String date = DateTimeFormatter.RFC_1123_DATE_TIME.format(Instant.now().atZone(ZoneOffset.UTC));
        return "Origin: kosa8\nLabel: kosa8 package lock\nSuite: " + suite + "\nCodename: " + suite + "\nDate: "
                + date + "\nSHA256:\n "
                + java.util.HexFormat.of().formatHex(sha256(packagesText)) + " " + packagesText.length + " "
                + PACKAGES + "\n";
    }

    private static byte[] sha256(byte[] b) {
        try {
            return java.security.MessageDigest.getInstance("SHA-256").digest(b);
        } catch (java.security.NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }

    /** A hard link to the cached file (same file system: no copy), else a copy. */
    private static void place(Path from, Path to) throws IOException {
        Files.deleteIfExists(to);
        try {
            Files.createLink(to, from);
        } catch (IOException | UnsupportedOperationException e) {
            Files.copy(from, to, StandardCopyOption.REPLACE_EXISTING);
        }
    }

    private static KosaException bad(Locked p, String why) {
        return new KosaException(KosaException.Kind.IMAGE, p.name() + " " + p.version() + "'s control file is not "
                + "the package the lock names: " + why, "the lock does not describe that file (its SHA-256 pins these "
                + "very bytes): write it again with `kosa8 image lock` from an image built the usual way");
    }
}
