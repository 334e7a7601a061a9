package dev.kosa8.daemon;

import dev.kosa8.host.KosaException;
import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.SecureDirectoryStream;
import java.nio.file.attribute.BasicFileAttributes;
import java.nio.file.attribute.FileTime;
import java.nio.file.attribute.PosixFileAttributeView;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;

/**
 * A fork's own workspace folder, and how to take it back if the fork fails:
 * made by the fork (then deleted whole) or there before and empty (then
 * emptied, its mode and mtime put back). Never inside another sandbox's
 * folder, whose guest could change it while it is made or taken back.
 *
 * <p>What it was is written into the fork's {@code forking} marker
 * ({@link #marker}), so a daemon that died making the fork takes the folder
 * back as this one would ({@link #fromMarker}).
 */
record ForkFolder(Path path, boolean made, Set<PosixFilePermission> mode, FileTime mtime) {
    private static final Set<PosixFilePermission> OWNER_RWX = PosixFilePermissions.fromString("rwx------");

    /**
     * Makes {@code target} the fork's folder: made if missing, else it must be an empty directory; refused inside
     * (or as) the folder of any sandbox in {@code sandboxes}.
     */
    static ForkFolder prepare(Path target, Collection<Sandbox> sandboxes) {
        Map<String, String> folders = new LinkedHashMap<>();
        for (Sandbox s : sandboxes) {
            folders.put(s.id(), s.record().workspace());
        }
        return prepare(target, folders);
    }

    /** As {@link #prepare(Path, Collection)}, given each sandbox's folder by id (empty: none). */
    static ForkFolder prepare(Path target, Map<String, String> folders) {
        try {
            Path real = realOfExisting(target);
            for (var f : folders.entrySet()) {
                String ws = f.getValue();
                if (!ws.isEmpty() && real.startsWith(Path.of(ws))) {
                    throw new KosaException(KosaException.Kind.USAGE, "the fork's workspace " + target + " is inside "
                            + "the folder of sandbox " + f.getKey() + " (" + ws + "), which its guest can change",
                            "name a folder outside every sandbox's folder with --workspace DIR");
                }
            }
            if (Files.exists(target, LinkOption.NOFOLLOW_LINKS)) {
                boolean empty;
                try (var entries = Files.list(target)) {
                    empty = entries.findAny().isEmpty();
                }
                if (!Files.isDirectory(target, LinkOption.NOFOLLOW_LINKS) || !empty) {
                    throw new KosaException(KosaException.Kind.USAGE, "the fork's workspace " + target
                            + " exists and is not an empty folder", "name a new folder with --workspace DIR");
                }
                Path p = target.toRealPath();
                return new ForkFolder(p, false, Files.getPosixFilePermissions(p), Files.getLastModifiedTime(p));
            }
            Files.createDirectories(target);
            return new ForkFolder(target.toRealPath(), true, Set.of(), FileTime.fromMillis(0));
        } catch (IOException e) {
            throw new KosaException(KosaException.Kind.USAGE, "cannot make the fork's workspace " + target + ": "
                    + e.getMessage(), "name another folder with --workspace DIR", e);
        }
    }

    /** The marker's line for this folder: {@code made}, or {@code kept MODE MTIME_NS}. */
    String marker() {
        return made ? "made" : "kept " + PosixFilePermissions.toString(mode) + " " + mtime.to(TimeUnit.NANOSECONDS);
    }

    /** The folder a marker line speaks of; a marker without one (an older daemon's) keeps the folder as it is. */
    static ForkFolder fromMarker(Path path, String line) {
        String[] f = line.strip().split(" ");
        if (f.length == 1 && f[0].equals("made")) {
            return new ForkFolder(path, true, Set.of(), FileTime.fromMillis(0));
        }
        if (f.length == 3 && f[0].equals("kept")) {
            try {
                return new ForkFolder(path, false, PosixFilePermissions.fromString(f[1]),
                        FileTime.from(Long.parseLong(f[2]), TimeUnit.NANOSECONDS));
            } catch (IllegalArgumentException e) {
                return null;
            }
        }
        return null;
    }

    /** Takes the folder back to what it was before the fork: gone, or empty with its mode and mtime. */
    void takeBack() throws IOException {
        emptyFolder(path, made);
        if (!made && Files.isDirectory(path, LinkOption.NOFOLLOW_LINKS)) {
            Files.setPosixFilePermissions(path, mode);
            Files.setLastModifiedTime(path, mtime);
        }
    }

    /**
     * Deletes what {@code folder} holds, and the folder itself if {@code itself}: by directory descriptor
     * ({@link SecureDirectoryStream}), each entry opened without following a symlink, so a symlink the guest
     * made is removed itself and nothing it points to is touched; a directory the guest left read-only is made
     * writable first (by its descriptor).
     */
    static void emptyFolder(Path folder, boolean itself) throws IOException {
        if (!Files.isDirectory(folder, LinkOption.NOFOLLOW_LINKS)) {
            return;
        }
        Path parent = folder.toAbsolutePath().getParent();
        Path name = folder.getFileName();
        try (DirectoryStream<Path> up = Files.newDirectoryStream(parent)) {
            if (!(up instanceof SecureDirectoryStream<Path> sup)) {
                throw new IOException("this platform cannot delete by directory descriptor");
            }
            try (SecureDirectoryStream<Path> dir = sup.newDirectoryStream(name, LinkOption.NOFOLLOW_LINKS)) {
                empty(dir);
            }
            if (itself) {
                sup.deleteDirectory(name);
            }
        }
    }

    private static void empty(SecureDirectoryStream<Path> dir) throws IOException {
        PosixFileAttributeView self = dir.getFileAttributeView(PosixFileAttributeView.class);
        Set<PosixFilePermission> mode = self.readAttributes().permissions();
        if (mode.addAll(OWNER_RWX)) {
            self.setPermissions(mode);
        }
        List<Path> names = new ArrayList<>();
        for (Path entry : dir) {
            names.add(entry.getFileName());
        }
        for (Path n : names) {
            BasicFileAttributes a = dir.getFileAttributeView(n, PosixFileAttributeView.class,
                    LinkOption.NOFOLLOW_LINKS).readAttributes();
            if (a.isDirectory()) {
                try (SecureDirectoryStream<Path> child = dir.newDirectoryStream(n, LinkOption.NOFOLLOW_LINKS)) {
                    empty(child);
                }
                dir.deleteDirectory(n);
            } else {
                dir.deleteFile(n);
            }
        }
    }

    /** {@code p} with symlinks resolved in the part of it that exists. */
    private static Path realOfExisting(Path p) throws IOException {
        Path abs = p.toAbsolutePath().normalize();
        Path existing = abs;
        while (existing != null && !Files.exists(existing)) {
            existing = existing.getParent();
        }
        return existing == null ? abs : existing.toRealPath().resolve(existing.relativize(abs));
    }
}
