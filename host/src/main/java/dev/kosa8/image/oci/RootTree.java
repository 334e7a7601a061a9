package dev.kosa8.image.oci;

import dev.kosa8.host.KosaException;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.BasicFileAttributes;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;

/**
 * An image's root file system as its layers build it up, in a folder on the
 * host that only ever holds what the layers wrote, owned by kosa8's user:
 * ownership, modes beyond the owner's, set-uid bits, device nodes and
 * extended attributes are kept aside as {@link Meta} and written into the
 * guest's disk by {@link DiskWriter}, so no root-owned tree and no device
 * node is ever made on the host.
 *
 * <p>Confinement, stated once: a member's name is relative, made of plain
 * components (no {@code ..}, no NUL, no newline); every folder on the way to
 * it must already be a real folder of this tree (one a layer made, or one
 * made here as a missing parent), never a symbolic link, so nothing is ever
 * written through a link, even one that points inside; a hard link names a
 * regular file of this tree by the same rules. Files are opened with
 * {@link LinkOption#NOFOLLOW_LINKS} and created new.
 */
public final class RootTree {
    /** What the guest's disk must say of a path that the host's folder does not. */
    public record Meta(TarEntry.Type type, int mode, long uid, long gid, int devMajor, int devMinor,
                       Map<String, byte[]> xattrs) {
    }

    private final Path root;
    private final ImportLimits limits;
    private final Map<String, Meta> meta = new TreeMap<>();
    private final Set<String> thisLayer = new HashSet<>();
    private long unpacked;
    private long xattrBytes;

    /** @param root an empty folder that becomes the image's {@code /} */
    public RootTree(Path root, ImportLimits limits) throws IOException {
        this.root = root.toRealPath();
        this.limits = limits;
        meta.put("", new Meta(TarEntry.Type.DIRECTORY, 0755, 0, 0, 0, 0, Map.of()));
    }

    public Path root() {
        return root;
    }

    /** The bytes of file content unpacked so far, every layer's. */
    public long unpackedBytes() {
        return unpacked;
    }

    /** Each path's ownership, mode and type as the guest must see them; {@code ""} is the root. */
    public Map<String, Meta> meta() {
        return meta;
    }

    /** A new layer begins: an opaque folder hides what earlier layers put in it, never what this one did. */
    public void beginLayer() {
        thisLayer.clear();
    }

    /**
     * Applies one member: a whiteout deletes, an opaque marker empties its folder of earlier layers' files, and
     * anything else is made (replacing what was there, unless both are folders).
     *
     * @param content the member's content (regular files)
     * @param what    how errors name the layer
     */
    public void apply(TarEntry e, InputStream content, String what) throws IOException {
        List<String> parts = components(e.path(), what);
        if (parts.isEmpty()) {
            if (e.type() != TarEntry.Type.DIRECTORY) {
                throw bad(what, "member " + e.path() + " would replace the root with a non-folder");
            }
            meta.put("", meta(e, what));
            return;
        }
        String base = parts.getLast();
        List<String> dirParts = parts.subList(0, parts.size() - 1);
        if (base.startsWith(".wh.")) {
            Path dir = folder(dirParts, what, e.path(), false);
            if (dir == null) {
                return; // a whiteout in a folder that is not there hides nothing
            }
            if (base.equals(".wh..wh..opq")) {
                opaque(dir, String.join("/", dirParts));
            } else {
                String hidden = base.substring(4);
                if (hidden.isEmpty() || hidden.equals(".") || hidden.equals("..")) {
                    throw bad(what, "whiteout " + e.path() + " names no file");
                }
                delete(dir.resolve(hidden), join(dirParts, hidden));
            }
            return;
        }
        Path dir = folder(dirParts, what, e.path(), true);
        Path target = dir.resolve(base);
        String key = String.join("/", parts);
        BasicFileAttributes old = attributes(target);
        boolean oldDevice = old == null && isDevice(meta.get(key));
        if (oldDevice) {
            meta.remove(key);
        }
        if (old != null && !(old.isDirectory() && e.type() == TarEntry.Type.DIRECTORY)) {
            delete(target, key);
        }
        switch (e.type()) {
            case DIRECTORY -> {
                if (old == null || !old.isDirectory()) {
                    Files.createDirectory(target);
                }
            }
            case FILE -> write(target, content, e, what);
            case SYMLINK -> {
                if (e.linkName().isEmpty() || e.linkName().indexOf('\0') >= 0) {
                    throw bad(what, "symbolic link " + e.path() + " has no usable target");
                }
                Files.createSymbolicLink(target, Path.of(e.linkName()));
            }
            case HARDLINK -> {
                List<String> to = components(e.linkName(), what);
                Path source = to.isEmpty() ? null : folder(to.subList(0, to.size() - 1), what, e.linkName(), false);
                BasicFileAttributes sa = source == null ? null : attributes(source.resolve(to.getLast()));
                if (sa == null || !sa.isRegularFile()) {
                    throw bad(what, "hard link " + e.path() + " names " + e.linkName()
                            + ", which is not a regular file of the image (a link out of its root is refused)");
                }
                Files.createLink(target, source.resolve(to.getLast()));
                meta.put(key, meta.get(String.join("/", to)));
                thisLayer.add(key);
                return;
            }
            case CHAR_DEVICE, BLOCK_DEVICE, FIFO -> {
                // made in the guest's disk only: never a device node on the host
            }
        }
        meta.put(key, meta(e, what));
        thisLayer.add(key);
    }

    private static boolean isDevice(Meta m) {
        return m != null && (m.type() == TarEntry.Type.CHAR_DEVICE || m.type() == TarEntry.Type.BLOCK_DEVICE
                || m.type() == TarEntry.Type.FIFO);
    }

    private void write(Path target, InputStream content, TarEntry e, String what) throws IOException {
        if (unpacked + e.size() > limits.maxUnpackedBytes()) {
            throw bad(what, "the image unpacks to more than " + limits.maxUnpackedBytes() + " bytes (member "
                    + e.path() + ")");
        }
        try (OutputStream out = Files.newOutputStream(target, StandardOpenOption.CREATE_NEW,
                StandardOpenOption.WRITE, LinkOption.NOFOLLOW_LINKS)) {
            long n = content.transferTo(out);
            if (n != e.size()) {
                throw bad(what, "member " + e.path() + " has " + n + " bytes, its header says " + e.size());
            }
        }
        unpacked += e.size();
        Files.setPosixFilePermissions(target, PosixFilePermissions.fromString((e.mode() & 0111) != 0
                ? "rwxr-xr-x" : "rw-r--r--"));
    }

    /** A member's meta; its extended attributes counted against the bound on all of them, every layer's. */
    private Meta meta(TarEntry e, String what) {
        for (var x : e.xattrs().entrySet()) {
            xattrBytes += x.getKey().length() + x.getValue().length;
        }
        if (xattrBytes > limits.maxImageXattrBytes()) {
            throw bad(what, "its members' extended attributes hold more than " + limits.maxImageXattrBytes()
                    + " bytes (at " + e.path() + ")");
        }
        return new Meta(e.type(), e.mode() & 07777, e.uid(), e.gid(), e.devMajor(), e.devMinor(), e.xattrs());
    }

    /**
     * The folder these components name, every one a real folder of this tree; with {@code make}, missing ones are
     * made (root's, 0755), else null when one is missing. A symbolic link or a file on the way is refused.
     */
    private Path folder(List<String> parts, String what, String name, boolean make) throws IOException {
        Path p = root;
        StringBuilder key = new StringBuilder();
        for (String c : parts) {
            p = p.resolve(c);
            key.append(key.isEmpty() ? "" : "/").append(c);
            BasicFileAttributes a = attributes(p);
            if (a == null) {
                if (!make) {
                    return null;
                }
                if (isDevice(meta.get(key.toString()))) {
                    meta.remove(key.toString());
                }
                Files.createDirectory(p);
                meta.put(key.toString(), new Meta(TarEntry.Type.DIRECTORY, 0755, 0, 0, 0, 0, Map.of()));
            } else if (a.isSymbolicLink()) {
                throw bad(what, "member " + name + " would be written through the symbolic link /" + key
                        + " (kosa8 never follows a link while unpacking, even one that stays inside the image)");
            } else if (!a.isDirectory()) {
                throw bad(what, "member " + name + " lies under /" + key + ", which is not a folder");
            }
        }
        return p;
    }

    private void opaque(Path dir, String dirKey) throws IOException {
        List<Path> children;
        try (var s = Files.list(dir)) {
            children = s.toList();
        }
        for (Path c : children) {
            String key = join(dirKey.isEmpty() ? List.of() : List.of(dirKey), c.getFileName().toString());
            if (!thisLayer.contains(key)) {
                delete(c, key);
            }
        }
        String prefix = dirKey.isEmpty() ? "" : dirKey + "/";
        meta.keySet().removeIf(k -> !k.isEmpty() && k.startsWith(prefix) && k.indexOf('/', prefix.length()) < 0
                && isDevice(meta.get(k)) && !thisLayer.contains(k));
    }

    /** Deletes a path of this tree and everything under it, never following a link; a missing one is nothing. */
    private void delete(Path p, String key) throws IOException {
        meta.keySet().removeIf(k -> k.equals(key) || k.startsWith(key + "/"));
        dev.kosa8.host.FileTrees.delete(p);
    }

    private static BasicFileAttributes attributes(Path p) throws IOException {
        try {
            return Files.readAttributes(p, BasicFileAttributes.class, LinkOption.NOFOLLOW_LINKS);
        } catch (NoSuchFileException e) {
            return null;
        }
    }

    private static String join(List<String> dir, String name) {
        List<String> all = new ArrayList<>(dir);
        all.add(name);
        return String.join("/", all);
    }

    /**
     * A member's name as components: {@code ./} and empty components dropped; absolute names, {@code ..}, NUL and
     * newlines refused.
     */
    static List<String> components(String name, String what) {
        if (name.startsWith("/")) {
            throw bad(what, "member " + name + " has an absolute name (a layer's names are relative to its root)");
        }
        if (name.indexOf('\0') >= 0 || name.indexOf('\n') >= 0) {
            throw bad(what, "member " + name.replace("\n", "\\n").replace("\0", "\\0")
                    + " has a NUL or a newline in its name");
        }
        List<String> out = new ArrayList<>();
        for (String c : name.split("/")) {
            if (c.isEmpty() || c.equals(".")) {
                continue;
            }
            if (c.equals("..")) {
                throw bad(what, "member " + name + " climbs out of the image's root with '..'");
            }
            out.add(c);
        }
        return out;
    }

    static KosaException bad(String what, String problem) {
        return new KosaException(KosaException.Kind.IMAGE, what + ": " + problem + "; the image is refused",
                "import an image from a source you trust, made by `docker save` or `skopeo copy`");
    }
}
