package dev.kosa8.daemon;

import dev.kosa8.checkpoint.TreeRemoval;
import dev.kosa8.host.KosaException;
import java.io.IOException;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Collection;
import java.util.LinkedHashMap;
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
 * back as this one would ({@link #fromMarker}). The marker names the folder's
 * inode too: a folder the user deleted and made again since is not the fork's,
 * and is left alone.
 *
 * @param identity the folder's device, inode and birth time ({@code DEV:INO:BIRTH_NS}) when the fork took
 *                 it; empty when not known (a marker of an older daemon)
 */
record ForkFolder(Path path, boolean made, Set<PosixFilePermission> mode, FileTime mtime, String identity) {
    /**
     * Makes {@code target} the fork's folder: made if missing, else it must be an empty directory; refused inside
     * (or as) the folder of any sandbox in {@code sandboxes}. The caller keeps other forks from preparing
     * meanwhile ({@link Forks}), so two forks never take one folder.
     */
    static ForkFolder prepare(Path target, Collection<Sandbox> sandboxes) {
        Map<String, String> folders = new LinkedHashMap<>();
        for (Sandbox s : sandboxes) {
            folders.put(s.id(), s.record().workspace());
        }
        return prepare(target, folders);
    }

    /**
     * As {@link #prepare(Path, Collection)}, given each sandbox's folder by id (empty: none). Everything after
     * the check is done on the real path the check judged, never on {@code target} again: a symlink on the way
     * (a guest's, say) that changes meanwhile cannot move the fork elsewhere. The folder is made with one
     * exclusive {@code mkdir}, so a folder is counted as the fork's own only if this call made it.
     */
    static ForkFolder prepare(Path target, Map<String, String> folders) {
        try {
            Path real = realOfExisting(target);
            Path named = target.toAbsolutePath().normalize();
            for (var f : folders.entrySet()) {
                String ws = f.getValue();
                // by the real path (a link to a sandbox's folder) and by the name given (a guest's link out of it)
                if (!ws.isEmpty() && (real.startsWith(Path.of(ws)) || named.startsWith(Path.of(ws)))) {
                    throw new KosaException(KosaException.Kind.USAGE, "the fork's workspace " + target + " is inside "
                            + "the folder of sandbox " + f.getKey() + " (" + ws + "), which its guest can change",
                            "name a folder outside every sandbox's folder with --workspace DIR");
                }
            }
            Files.createDirectories(real.getParent());
            boolean made;
            try {
                Files.createDirectory(real);
                made = true;
            } catch (FileAlreadyExistsException e) {
                made = false;
                boolean empty;
                try (var entries = Files.list(real)) {
                    empty = entries.findAny().isEmpty();
                }
                if (!Files.isDirectory(real, LinkOption.NOFOLLOW_LINKS) || !empty) {
                    throw new KosaException(KosaException.Kind.USAGE, "the fork's workspace " + target
                            + " exists and is not an empty folder", "name a new folder with --workspace DIR");
                }
            }
            try {
                if (!real.toRealPath().equals(real)) {
                    throw new KosaException(KosaException.Kind.USAGE, "the fork's workspace " + target + " changed "
                            + "while it was made (a symlink on its way moved)", "name a folder no guest can change");
                }
                return made ? new ForkFolder(real, true, Set.of(), FileTime.fromMillis(0), identityOf(real))
                        : new ForkFolder(real, false, Files.getPosixFilePermissions(real, LinkOption.NOFOLLOW_LINKS),
                        Files.getLastModifiedTime(real, LinkOption.NOFOLLOW_LINKS), identityOf(real));
            } catch (IOException | RuntimeException e) {
                if (made) {
                    Files.deleteIfExists(real); // made a moment ago, and empty: nothing of it is left
                }
                throw e;
            }
        } catch (IOException e) {
            throw new KosaException(KosaException.Kind.USAGE, "cannot make the fork's workspace " + target + ": "
                    + e.getMessage(), "name another folder with --workspace DIR", e);
        }
    }

    /** The marker's line for this folder: {@code made IDENTITY}, or {@code kept MODE MTIME_NS IDENTITY}. */
    String marker() {
        return (made ? "made" : "kept " + PosixFilePermissions.toString(mode) + " " + mtime.to(TimeUnit.NANOSECONDS))
                + (identity.isEmpty() ? "" : " " + identity);
    }

    /** The folder a marker line speaks of; a marker without one (an older daemon's) keeps the folder as it is. */
    static ForkFolder fromMarker(Path path, String line) {
        String[] f = line.strip().split(" ");
        if (f.length >= 1 && f.length <= 2 && f[0].equals("made")) {
            return new ForkFolder(path, true, Set.of(), FileTime.fromMillis(0), f.length == 2 ? f[1] : "");
        }
        if (f.length >= 3 && f.length <= 4 && f[0].equals("kept")) {
            try {
                return new ForkFolder(path, false, PosixFilePermissions.fromString(f[1]),
                        FileTime.from(Long.parseLong(f[2]), TimeUnit.NANOSECONDS), f.length == 4 ? f[3] : "");
            } catch (IllegalArgumentException e) {
                return null;
            }
        }
        return null;
    }

    /**
     * Takes the folder back to what it was before the fork: gone, or empty with its mode and mtime. A folder
     * that is gone already is nothing to do; one that is no longer the folder the fork took (deleted and made
     * again since) is left as it is, and said.
     */
    void takeBack() throws IOException {
        if (!Files.isDirectory(path, LinkOption.NOFOLLOW_LINKS)) {
            return;
        }
        if (!identity.isEmpty() && !identity.equals(identityOf(path))) {
            throw new IOException(path + " is no longer the folder the fork took (it was made again since); "
                    + "left as it is");
        }
        TreeRemoval.empty(path, made);
        if (!made) {
            Files.setPosixFilePermissions(path, mode);
            Files.setLastModifiedTime(path, mtime);
        }
    }

    /**
     * The folder's device, inode and birth time, {@code DEV:INO:BIRTH_NS}: a file system may give a folder made
     * again the inode number of the one deleted (ext4 does, at once), never the same birth time. Where a file
     * system records no birth time the JDK gives the mtime instead, which the fork's copy changes: the folder is
     * then left as it is, and said, which is the safe side.
     */
    private static String identityOf(Path p) throws IOException {
        FileTime born = Files.readAttributes(p, java.nio.file.attribute.BasicFileAttributes.class,
                LinkOption.NOFOLLOW_LINKS).creationTime();
        return Files.getAttribute(p, "unix:dev", LinkOption.NOFOLLOW_LINKS) + ":"
                + Files.getAttribute(p, "unix:ino", LinkOption.NOFOLLOW_LINKS) + ":" + born.to(TimeUnit.NANOSECONDS);
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
