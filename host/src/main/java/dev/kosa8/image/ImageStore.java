package dev.kosa8.image;

import dev.kosa8.host.AtomicFile;
import dev.kosa8.host.FileTrees;
import dev.kosa8.host.HostPaths;
import dev.kosa8.host.KosaException;
import dev.kosa8.host.RecordFile;
import dev.kosa8.vm.GuestArch;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;

/**
 * The guest images on disk. Layout under {@link HostPaths#images()}:
 * <pre>
 * kernel/HASH/      vmlinux, modules/, manifest.json
 * initramfs/HASH/   initramfs.cpio, manifest.json
 * rootfs/HASH/      rootfs.qcow2, manifest.json
 * image/ID/         manifest.json, and links to the three files above
 * current           the id of the image new sandboxes use
 * logs/             one log per build
 * arch/NAME/        the same for another architecture's guests ({@link #directory})
 * </pre>
 */
public final class ImageStore {
    static final String IMAGE_DIR = "image";
    static final String CURRENT = "current";
    private final Path images;
    private final GuestArch arch;

    /** The images of this host's architecture. */
    public ImageStore(HostPaths paths) {
        this(paths, GuestArch.host());
    }

    /** The images of {@code arch}, in their own directory ({@link #directory}). */
    public ImageStore(HostPaths paths, GuestArch arch) {
        this(directory(paths, arch), arch);
    }

    ImageStore(Path images) {
        this(images, GuestArch.host());
    }

    ImageStore(Path images, GuestArch arch) {
        this.images = images;
        this.arch = arch;
    }

    /**
     * Where the images of {@code arch} are kept: {@link HostPaths#images()} for the host's own architecture, a
     * store of the same layout in its {@code arch/NAME/} subdirectory for another (an arm64 guest's on an x86-64
     * host), so each architecture has its own current image and nothing of one is taken for the other's.
     */
    public static Path directory(HostPaths paths, GuestArch arch) {
        return arch.foreign() ? paths.images().resolve("arch").resolve(arch.debianName()) : paths.images();
    }

    /** Every complete image, newest first. */
    public List<Image> list() {
        List<Image> all = new ArrayList<>();
        Path dir = images.resolve(IMAGE_DIR);
        if (!Files.isDirectory(dir)) {
            return all;
        }
        try (DirectoryStream<Path> s = Files.newDirectoryStream(dir, p -> !p.getFileName().toString().startsWith("."))) {
            for (Path p : s) {
                find(p.getFileName().toString()).ifPresent(all::add);
            }
        } catch (IOException e) {
            throw unreadable(dir, e);
        }
        all.sort(Comparator.comparing((Image i) -> created(i.id())).reversed());
        return all;
    }

    /** The image new sandboxes use, if one has been built and is still complete. */
    public Optional<Image> current() {
        return currentId().flatMap(this::find);
    }

    public Optional<Image> find(String id) {
        return manifest(id).flatMap(this::toImage);
    }

    /**
     * Removes an image and the parts no remaining image uses. Sandboxes whose
     * overlays are backed by it must be gone first; that is the caller's check.
     */
    public void remove(String id) {
        Path dir = images.resolve(IMAGE_DIR).resolve(id);
        if (!id.matches("[0-9a-f]{16}") || !Files.isDirectory(dir)) {
            throw new KosaException(KosaException.Kind.USAGE, "no image " + id, "list the images with `kosa8 image ls`");
        }
        try (BuildLock lock = BuildLock.acquire(images, () -> { })) {
            if (currentId().filter(id::equals).isPresent()) {
                Files.delete(images.resolve(CURRENT));
            }
            FileTrees.delete(dir);
            removeUnusedParts();
        } catch (IOException e) {
            throw new KosaException(KosaException.Kind.HOST, "cannot remove image " + id + ": " + e.getMessage(), "", e);
        }
    }

    /**
     * The bytes removing image {@code id} would free: its parts no other
     * image uses (images share parts whose inputs did not change).
     */
    public long bytesOnlyIn(String id) {
        ImageManifest mine = manifest(id).orElse(null);
        if (mine == null) {
            return 0;
        }
        Set<Path> others;
        try {
            others = partsUsedByImagesOtherThan(id);
        } catch (IOException e) {
            throw unreadable(images.resolve(IMAGE_DIR), e);
        }
        long bytes = 0;
        for (Path part : partsOf(mine)) {
            if (!others.contains(part)) {
                bytes += treeBytes(part);
            }
        }
        return bytes;
    }

    /** What a part's files take (0 if it cannot be read: the figure is a report, never a reason to fail). */
    private static long treeBytes(Path dir) {
        try {
            return dev.kosa8.host.LiveTreeBytes.of(dir);
        } catch (IOException e) {
            return 0;
        }
    }

    public Optional<String> currentId() {
        try {
            Path f = images.resolve(CURRENT);
            return Files.isRegularFile(f) ? Optional.of(Files.readString(f).strip()) : Optional.empty();
        } catch (IOException e) {
            throw unreadable(images.resolve(CURRENT), e);
        }
    }

    void setCurrent(String id) throws IOException {
        AtomicFile.write(images.resolve(CURRENT), (id + "\n").getBytes(StandardCharsets.UTF_8));
    }

    Optional<ImageManifest> manifest(String id) {
        Path dir = images.resolve(IMAGE_DIR).resolve(id);
        if (!Files.isRegularFile(dir.resolve(Manifests.FILE))) {
            return Optional.empty();
        }
        try {
            return Optional.of(Manifests.readImage(dir));
        } catch (IOException e) {
            throw unreadable(dir.resolve(Manifests.FILE), e);
        }
    }

    /**
     * Whether image {@code id} is complete without reading its manifest: its
     * directory has the manifest, and its links ({@link #writeImage}) reach
     * the kernel, the initramfs and the root filesystem.
     */
    boolean complete(String id) {
        Path dir = images.resolve(IMAGE_DIR).resolve(id);
        return id.matches("[0-9a-f]{16}") && Files.isRegularFile(dir.resolve(Manifests.FILE))
                && Files.isRegularFile(dir.resolve(KernelPart.VMLINUX))
                && Files.isRegularFile(dir.resolve(InitramfsPart.FILE))
                && Files.isRegularFile(dir.resolve(RootfsPart.FILE));
    }

    /** Writes the image directory (manifest and links to its parts) atomically. */
    Image writeImage(ImageManifest m) throws IOException {
        PartStore parts = new PartStore(images);
        Path target = images.resolve(IMAGE_DIR).resolve(m.id());
        if (!Files.isDirectory(target)) {
            Files.createDirectories(target.getParent());
            Path partial = target.resolveSibling(PartStore.PARTIAL_PREFIX + m.id());
            FileTrees.delete(partial);
            Files.createDirectory(partial);
            for (Path file : files(m, parts)) {
                Files.createSymbolicLink(partial.resolve(file.getFileName()), partial.relativize(file));
            }
            Manifests.write(partial, m);
            Files.move(partial, target, StandardCopyOption.ATOMIC_MOVE);
        }
        return toImage(m).orElseThrow(() -> new IOException("image " + m.id() + " is incomplete right after writing it"));
    }

    private Optional<Image> toImage(ImageManifest m) {
        List<Path> files = files(m, new PartStore(images));
        if (!files.stream().allMatch(Files::isRegularFile)) {
            return Optional.empty();
        }
        long size = 0;
        try {
            for (Path f : files) {
                size += Files.size(f);
            }
        } catch (IOException e) {
            return Optional.empty();
        }
        return Optional.of(new Image(m.id(), images.resolve(IMAGE_DIR).resolve(m.id()),
                files.get(0), files.get(1), files.get(2), m.kernelVersion(), size, arch));
    }

    private static List<Path> files(ImageManifest m, PartStore parts) {
        return List.of(
                parts.directory(PartKind.KERNEL, m.parts().kernel()).resolve(KernelPart.VMLINUX),
                parts.directory(PartKind.INITRAMFS, m.parts().initramfs()).resolve(InitramfsPart.FILE),
                parts.directory(PartKind.ROOTFS, m.parts().rootfs()).resolve(RootfsPart.FILE));
    }

    private String created(String id) {
        return manifest(id).map(ImageManifest::created).orElse("");
    }

    /** The part directories of one image. */
    private List<Path> partsOf(ImageManifest m) {
        PartStore parts = new PartStore(images);
        List<Path> dirs = new ArrayList<>();
        for (PartKind k : PartKind.values()) {
            dirs.add(parts.directory(k, m.parts().of(k)));
        }
        return dirs;
    }

    /**
     * The part directories every image directory with a manifest uses (one
     * being written included), but {@code exceptId}'s; all of them for null.
     */
    private Set<Path> partsUsedByImagesOtherThan(String exceptId) throws IOException {
        Set<Path> used = new HashSet<>();
        Path dir = images.resolve(IMAGE_DIR);
        if (Files.isDirectory(dir)) {
            try (DirectoryStream<Path> s = Files.newDirectoryStream(dir)) {
                for (Path p : s) {
                    String name = p.getFileName().toString();
                    if (!name.equals(exceptId)) {
                        manifest(name).ifPresent(m -> used.addAll(partsOf(m)));
                    }
                }
            }
        }
        return used;
    }

    private void removeUnusedParts() throws IOException {
        Set<Path> used = partsUsedByImagesOtherThan(null);
        for (PartKind k : PartKind.values()) {
            Path kindDir = images.resolve(k.directoryName());
            if (!Files.isDirectory(kindDir)) {
                continue;
            }
            try (DirectoryStream<Path> s = Files.newDirectoryStream(kindDir)) {
                for (Path p : s) {
                    if (!used.contains(p) && !p.getFileName().toString().startsWith(".")) {
                        FileTrees.delete(p);
                    }
                }
            }
        }
    }

    private static KosaException unreadable(Path p, IOException e) {
        if (e instanceof RecordFile.Damaged d) {
            return new KosaException(KosaException.Kind.IMAGE, d.problem(), d.remedy(), e);
        }
        return new KosaException(KosaException.Kind.IMAGE, "cannot read " + p + ": " + e.getMessage(),
                "remove the images folder and run `kosa8 image build`", e);
    }
}
