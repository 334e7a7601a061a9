package dev.kosa8.image;

import dev.kosa8.host.KosaException;
import dev.kosa8.image.debian.LockFile;
import dev.kosa8.image.debian.Locked;

import java.nio.file.Path;
import java.util.List;
import java.util.Set;
import java.util.regex.Pattern;
import java.util.stream.Collectors;

/**
 * A build from a whole image's lock ({@code kosa8 image build --from-lock
 * FILE}, a file {@code kosa8 image lock} wrote): the kernel and busybox are
 * the lock's packages, fetched by their lock entries rather than looked up,
 * and the root filesystem is installed from a repository of exactly the
 * lock's {@code .deb}s ({@link FlatRepo}). The lock is checked against this
 * kosa8's recipe first, so a lock for another suite or one missing a package
 * the image needs fails before anything is fetched.
 *
 * @param source where the lock came from, for messages: its file, or the image it was recorded with
 * @param command the kosa8 command that builds from this lock again, for a message
 */
record LockedBuild(LockFile lock, String source, String command) {
    private static final Set<String> ARCHITECTURES = Set.of("amd64", "all");
    private static final Pattern NAME = Pattern.compile("[a-z0-9][a-z0-9+.-]+");
    private static final Pattern VERSION_FORM = Pattern.compile("[0-9][0-9A-Za-z.+~:-]*");
    private static final Pattern PATH = Pattern.compile("pool/[A-Za-z0-9+._~/-]+");
    private static final Pattern FILE = Pattern.compile("[a-z0-9][A-Za-z0-9+.~_-]*\\.deb");

    /** A lock read from {@code source}, a file. */
    LockedBuild(LockFile lock, String source) {
        this(lock, source, "image build --from-lock " + source);
    }

    /** The lock of an image as this machine recorded it when the image was built from a lock. */
    static LockedBuild recorded(LockFile lock, String imageId) {
        // ensure rebuilds from the lock as recorded, offline; --from-lock would check it against today's archive
        return new LockedBuild(lock, "image " + imageId + "'s lock", "image ensure");
    }

    /** Reads and checks {@code file} for {@code recipe}. */
    static LockedBuild read(Path file, Recipe recipe) {
        LockedBuild b = new LockedBuild(LockFile.read(file), file.toString());
        b.check(recipe);
        return b;
    }

    void check(Recipe recipe) {
        for (String part : LockFile.PARTS) {
            if (lock.part(part).isEmpty()) {
                throw usage(source + " names no " + part + " package: it is a root filesystem's package list "
                        + "(packages.lock), not a whole image's lock", "write one with `kosa8 image lock > FILE`");
            }
        }
        String suite = lock.comments().isEmpty() ? "" : lock.comments().getFirst();
        if (!suite.startsWith("suite " + recipe.suite() + ",")) {
            throw usage(source + " was not locked from Debian " + recipe.suite() + " (its first comment is '" + suite
                    + "'), the suite this kosa8 builds its image from", "lock an image this kosa8 built");
        }
        Set<String> names = lock.packages().stream().map(Locked::name).collect(Collectors.toSet());
        List<String> missing = recipe.includes().stream().filter(n -> !names.contains(n)).toList();
        if (!missing.isEmpty()) {
            throw usage(source + " has no " + String.join(", ", missing) + ", which kosa8's image needs",
                    "lock an image this kosa8 built");
        }
        if (!lock.part("busybox").orElseThrow().name().equals(recipe.busyboxPackage())
                || !lock.part("kernel").orElseThrow().name().startsWith("linux-image-")) {
            throw usage(source + "'s kernel or busybox line names another package ("
                    + lock.part("kernel").orElseThrow().name() + ", " + lock.part("busybox").orElseThrow().name()
                    + ")", "lock an image this kosa8 built");
        }
        Set<String> seenNames = new java.util.HashSet<>();
        Set<String> seenFiles = new java.util.HashSet<>();
        for (Locked p : lock.all()) {
            String file = p.filename().substring(p.filename().lastIndexOf('/') + 1);
            // names reach apt's command line and file names the repository's folder: Debian's own forms only
            if (!NAME.matcher(p.name()).matches() || !VERSION_FORM.matcher(p.version()).matches()
                    || !PATH.matcher(p.filename()).matches() || !FILE.matcher(file).matches()) {
                throw usage(source + " names a package Debian could not: " + p.name() + " " + p.version() + " "
                        + p.filename(), "use a lock `kosa8 image lock` wrote, unedited");
            }
            if (!seenNames.add(p.name()) || !seenFiles.add(file)) {
                throw usage(source + " names " + p.name() + " (or its file " + file + ") twice",
                        "use a lock `kosa8 image lock` wrote, unedited");
            }
            if (!ARCHITECTURES.contains(p.architecture())) {
                throw usage(source + " names " + p.name() + " for " + p.architecture() + "; this kosa8 builds amd64 "
                        + "images", "lock an amd64 image");
            }
        }
    }

    DebPackage kernel() {
        return deb(lock.part("kernel").orElseThrow());
    }

    DebPackage busybox() {
        return deb(lock.part("busybox").orElseThrow());
    }

    /** Fetch the kernel and busybox by their entries (those the lock names), not by the index. */
    void pin(DebianPackages apt) {
        lock.parts().values().forEach(apt::pin);
    }

    /** Bump when the way a root filesystem is built from a lock changes, so those built the old way are rebuilt. */
    static final String VERSION = "2";

    /** The root filesystem's exact package list, for its hash ({@link PartHashes}): each file's SHA-256 by name. */
    String digest() {
        ContentHash h = ContentHash.of("package-lock").add("version", VERSION);
        lock.packages().forEach(p -> h.add(p.name(), p.line()));
        return h.hex();
    }

    /** The root filesystem's packages alone, as its part keeps them ({@link RootfsLock#FILE}). */
    LockFile rootfs() {
        return new LockFile(lock.comments(), lock.packages());
    }

    private static DebPackage deb(Locked l) {
        return new DebPackage(l.name(), l.version(), l.architecture());
    }

    private static KosaException usage(String what, String todo) {
        return new KosaException(KosaException.Kind.USAGE, what, todo);
    }
}
