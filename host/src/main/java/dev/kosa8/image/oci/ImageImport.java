package dev.kosa8.image.oci;

import dev.kosa8.host.FileTrees;
import dev.kosa8.host.KosaException;
import dev.kosa8.image.GuestRuntime;
import dev.kosa8.image.NamedImage;
import dev.kosa8.image.NamedImages;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.file.FileVisitResult;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.SimpleFileVisitor;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.BasicFileAttributes;
import java.security.DigestInputStream;
import java.security.MessageDigest;
import java.time.Duration;
import java.time.Instant;
import java.util.HexFormat;

/**
 * {@code kosa8 image import}: an OCI or {@code docker save} archive becomes a
 * named image whose disk holds the image's root, its layers applied in order
 * ({@link RootTree}), beside kosa8's own files ({@link GuestRuntime}) that the
 * guest mounts apart. Nothing is listed until the disk is complete; a refused
 * or failed import leaves nothing behind (its scratch folder is removed).
 * Nothing of the image runs on the host: its files are only ever written.
 */
public final class ImageImport {
    /** What an import made, and how long it took. */
    public record Result(NamedImage image, long unpackedBytes, int layers, Duration took) {
    }

    private ImageImport() {
    }

    /**
     * @param images      kosa8's images folder
     * @param name        the name to list it under; empty: the name the archive gives
     * @param systemImage the system image whose kernel and initramfs boot it
     */
    public static Result run(Path archive, String name, Path images, String systemImage, ImportLimits limits,
                             Path log) throws IOException {
        Instant t0 = Instant.now();
        Path work = images.resolve("import");
        Files.createDirectories(work);
        Path scratch = Files.createTempDirectory(work, ".partial-");
        try {
            try (ImageArchive a = ImageArchive.open(archive.toAbsolutePath(), Files.createDirectory(
                    scratch.resolve("members")), limits)) {
                String finalName = chooseName(name, a.refName());
                Path stage = Files.createDirectory(scratch.resolve("stage"));
                RootTree tree = new RootTree(Files.createDirectory(stage.resolve(DiskWriter.ROOTFS)), limits);
                int n = 0;
                for (ImageArchive.Layer l : a.layers()) {
                    n++;
                    apply(a, l, tree, "layer " + n + " (" + l.diffId() + ") of " + archive, limits);
                }
                // made (once) only for an image whose layers all applied: a refused archive is refused at once
                Path kosa = GuestRuntime.ensure(images, log);
                long kosaBytes = copyTree(kosa, stage.resolve(DiskWriter.KOSA8));
                String id = a.configDigest().substring("sha256:".length(), "sha256:".length() + 16);
                Path dir = images.resolve("layers").resolve("import-" + id);
                Path built = scratch.resolve("disk.qcow2");
                DiskWriter.write(stage, tree, kosaBytes, built, log);
                Files.createDirectories(dir);
                Path disk = dir.resolve("disk.qcow2");
                Files.move(built, disk, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
                NamedImage image = new NamedImage(finalName, id, "", disk.toString(), systemImage,
                        "import " + archive.getFileName() + " (" + a.configDigest() + ")", a.config(),
                        Instant.now().toString(), Files.size(disk));
                new NamedImages(images).save(image);
                return new Result(image, tree.unpackedBytes(), a.layers().size(), Duration.between(t0,
                        Instant.now()));
            }
        } finally {
            FileTrees.delete(scratch);
        }
    }

    /** Applies one layer, its uncompressed bytes checked against the config's diff id as they are read. */
    static void apply(ImageArchive a, ImageArchive.Layer l, RootTree tree, String what, ImportLimits limits)
            throws IOException {
        MessageDigest md = ImageArchive.digest();
        tree.beginLayer();
        try (InputStream in = new DigestInputStream(a.open(l, what), md)) {
            TarReader r = new TarReader(in, limits, what);
            for (TarEntry e = r.next(); e != null; e = r.next()) {
                tree.apply(e, r.content(), what);
            }
            in.transferTo(OutputStream.nullOutputStream()); // the zero blocks after the end, which the digest covers
        } catch (java.io.EOFException e) {
            throw RootTree.bad(what, "it is truncated");
        }
        String actual = "sha256:" + HexFormat.of().formatHex(md.digest());
        if (!actual.equals(l.diffId())) {
            throw RootTree.bad(what, "its content does not match the config's diff id (it is " + actual + ")");
        }
    }

    private static String chooseName(String given, String fromArchive) {
        String n = !given.isEmpty() ? given : fromArchive;
        if (n.isEmpty()) {
            throw new KosaException(KosaException.Kind.USAGE, "the archive names no image",
                    "give it a name: kosa8 image import -t NAME ARCHIVE");
        }
        if (!n.contains(":") || n.lastIndexOf(':') < n.lastIndexOf('/')) {
            n = n + ":latest";
        }
        if (!NamedImage.isValidName(n)) {
            throw new KosaException(KosaException.Kind.USAGE, "'" + n + "' is not an image name",
                    "lower-case letters, digits, '.', '_', '-', '/' and a :tag, like team/tool:1.2");
        }
        return n;
    }

    private static long copyTree(Path from, Path to) throws IOException {
        long[] bytes = {0};
        Files.walkFileTree(from, new SimpleFileVisitor<>() {
            @Override
            public FileVisitResult preVisitDirectory(Path d, BasicFileAttributes a) throws IOException {
                Files.createDirectories(to.resolve(from.relativize(d).toString()));
                return FileVisitResult.CONTINUE;
            }

            @Override
            public FileVisitResult visitFile(Path f, BasicFileAttributes a) throws IOException {
                Files.copy(f, to.resolve(from.relativize(f).toString()), StandardCopyOption.COPY_ATTRIBUTES,
                        java.nio.file.LinkOption.NOFOLLOW_LINKS);
                bytes[0] += a.size();
                return FileVisitResult.CONTINUE;
            }
        });
        return bytes[0];
    }
}
