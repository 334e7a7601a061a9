package dev.kosa8.image;

import dev.kosa8.host.HostPaths;
import dev.kosa8.host.KosaException;
import dev.kosa8.image.debian.LockFile;
import dev.kosa8.image.debian.Locked;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.Consumer;

/**
 * A base image's whole lock ({@code kosa8 image lock}): its root
 * filesystem's package list ({@link RootfsLock#FILE}, kept when the tree
 * held exactly the packages resolved) and the kernel's and busybox's
 * packages. Those two are recorded in their parts' manifests when the build
 * fetched them through kosa8's archive client ({@link #FACT}); for a part
 * built before that was recorded, the entry is taken from the archive's
 * signed index for the very version the image's manifest names, and must be
 * the file the build used where the package cache still holds it.
 */
public final class ImageLocks {
    /** The part manifest fact holding the lock line of the package the part was made from. */
    static final String FACT = "debianPackage";

    private ImageLocks() {
    }

    /**
     * The lock of base image {@code id} (a full id or a unique prefix; empty for the current image).
     * {@code note}: a line for the user when the archive's index must be read.
     */
    public static LockFile of(HostPaths paths, String id, Consumer<String> note) {
        ImageStore store = new ImageStore(paths);
        String full = resolve(store, id);
        ImageManifest m = store.manifest(full).orElseThrow(() -> new KosaException(KosaException.Kind.USAGE,
                "image " + full + " has no manifest", "list the images with `kosa8 image ls`"));
        PartStore parts = new PartStore(paths.images());
        LockFile lock = rootfsLock(parts, m);
        DebianPackages debs = new DebianPackages(paths.cache().resolve("debs"), paths.images().resolve("logs")
                .resolve("image-lock.log"), false, () -> new ArchivePackages(paths.cache().resolve("debian"),
                Recipe.STANDARD.suite(), "amd64", System.getenv(), line -> {
                }, note), note);
        Map<String, Locked> others = new LinkedHashMap<>();
        others.put("kernel", entry(parts.directory(PartKind.KERNEL, m.parts().kernel()), m.kernelPackage(), debs,
                note));
        others.put("busybox", entry(parts.directory(PartKind.INITRAMFS, m.parts().initramfs()), m.busyboxPackage(),
                debs, note));
        return lock.withParts(others);
    }

    /**
     * Image {@code m}'s lock from what this machine holds alone: the root filesystem's list and the parts'
     * recorded packages, those that are recorded (no index is read, so a part built before they were recorded
     * is left out).
     */
    static LockFile recorded(HostPaths paths, ImageManifest m) throws IOException {
        PartStore parts = new PartStore(paths.images());
        Map<String, Locked> others = new LinkedHashMap<>();
        for (var p : Map.of("kernel", parts.directory(PartKind.KERNEL, m.parts().kernel()),
                "busybox", parts.directory(PartKind.INITRAMFS, m.parts().initramfs())).entrySet()) {
            if (!Files.isRegularFile(p.getValue().resolve(Manifests.FILE))) {
                continue; // a part not there (yet): made again by its version, as the image's manifest names it
            }
            recordedEntry(p.getValue()).ifPresent(l -> others.put(p.getKey(), l));
        }
        return rootfsLock(parts, m).withParts(others);
    }

    private static LockFile rootfsLock(PartStore parts, ImageManifest m) {
        Path rootfs = parts.directory(PartKind.ROOTFS, m.parts().rootfs()).resolve(RootfsLock.FILE);
        if (!Files.isRegularFile(rootfs)) {
            throw new KosaException(KosaException.Kind.USAGE, "image " + m.id() + "'s root filesystem has no "
                    + "package list: it was built through the host's apt (KOSA8_DEBIAN_FETCH=apt), or its tree did "
                    + "not hold exactly the packages resolved (its manifest's packagesLock fact says which)",
                    "build an image with kosa8's own archive client: `kosa8 image build`");
        }
        return LockFile.read(rootfs);
    }

    /** The lock entry {@code part}'s manifest records for the package it was made from ({@link #FACT}), if any. */
    private static Optional<Locked> recordedEntry(Path part) throws IOException {
        String line = Manifests.readPart(part).facts().get(FACT);
        return line == null ? Optional.empty() : Optional.of(LockFile.parse(LockFile.HEADER + "\n" + line + "\n",
                part + "'s manifest").packages().getFirst());
    }

    /** The lock entry of the package {@code part} was made from: recorded, cached, or from the signed index. */
    private static Locked entry(Path part, DebPackage pkg, DebianPackages debs, Consumer<String> note) {
        try {
            Optional<Locked> recorded = recordedEntry(part);
            if (recorded.isPresent()) {
                return recorded.get();
            }
        } catch (IOException e) {
            throw new KosaException(KosaException.Kind.HOST, "cannot read " + part + "'s manifest: " + e.getMessage(),
                    "run `kosa8 image build`", e);
        }
        Optional<Locked> cached = debs.locked(pkg);
        if (cached.isPresent()) {
            return cached.get();
        }
        note.accept("looking up " + pkg.fileName() + " in the Debian archive's signed index (its part was built "
                + "before kosa8 recorded where its package came from)");
        Locked l = debs.archiveClient().orElseThrow(() -> new KosaException(KosaException.Kind.USAGE,
                "KOSA8_DEBIAN_FETCH=apt is set, so the archive's index cannot be read", "unset it")).locked(pkg);
        Optional<String> used = debs.recordedSha256(pkg);
        if (used.isPresent() && !used.get().equals(l.sha256())) {
            throw new KosaException(KosaException.Kind.IMAGE, "the archive's " + pkg.fileName() + " has the SHA-256 "
                    + l.sha256() + ", not " + used.get() + " as the file the image was built from",
                    "build the image again with `kosa8 image build` and lock that one");
        }
        return l;
    }

    private static String resolve(ImageStore store, String id) {
        if (id == null || id.isEmpty()) {
            return store.currentId().orElseThrow(() -> new KosaException(KosaException.Kind.USAGE,
                    "there is no current image", "build one with `kosa8 image build`"));
        }
        List<String> matches = store.list().stream().map(Image::id).filter(i -> i.startsWith(id)).toList();
        if (matches.size() != 1) {
            throw new KosaException(KosaException.Kind.USAGE,
                    matches.isEmpty() ? "no base image has an id starting " + id : id + " names " + matches.size()
                            + " images", "list the images with `kosa8 image ls`");
        }
        return matches.getFirst();
    }
}
