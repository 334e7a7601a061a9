package dev.kosa8.image;

import dev.kosa8.host.KosaException;
import dev.kosa8.image.debian.LockFile;
import dev.kosa8.image.debian.Locked;

import java.nio.file.Path;
import java.util.List;
import java.util.Set;
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
 * @param source where the lock came from, for messages
 */
record LockedBuild(LockFile lock, String source) {
    private static final Set<String> ARCHITECTURES = Set.of("amd64", "all");

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
        for (Locked p : lock.all()) {
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

    /** Fetch the kernel and busybox by their entries, not by the index. */
    void pin(DebianPackages apt) {
        lock.parts().values().forEach(apt::pin);
    }

    /** The root filesystem's exact package list, for its hash ({@link PartHashes}): each file's SHA-256 by name. */
    String digest() {
        ContentHash h = ContentHash.of("package-lock");
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
