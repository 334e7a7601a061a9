package dev.kosa8.secrets;

import dev.kosa8.host.AtomicFile;
import dev.kosa8.host.KosaException;
import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.file.FileSystems;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.FileAttribute;
import java.nio.file.attribute.PosixFileAttributes;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.nio.file.attribute.UserPrincipal;
import java.util.EnumSet;
import java.util.Optional;
import java.util.Set;

/**
 * Small files that only their owner may read: the secret values and the
 * catalog of secrets. Every file is created with mode 0600 from its first
 * byte (a file created with the umask's mode and tightened afterwards could
 * be opened by someone else in between, and an open descriptor outlives any
 * later chmod), written whole to a temporary name and renamed over the old
 * one ({@link AtomicFile}), so a reader sees the old content or the new,
 * never half of it.
 *
 * <p>Reading refuses a file that other users could read or change, or that
 * another user owns: better to stop and say {@code chmod 600} than to go on
 * with a key that may already be exposed, or with values someone else wrote.
 */
final class PrivateFile {
    static final Set<PosixFilePermission> OWNER_ONLY = EnumSet.of(PosixFilePermission.OWNER_READ,
            PosixFilePermission.OWNER_WRITE);
    private static final FileAttribute<Set<PosixFilePermission>> FILE_MODE =
            PosixFilePermissions.asFileAttribute(OWNER_ONLY);
    private static final FileAttribute<Set<PosixFilePermission>> DIRECTORY_MODE =
            PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwx------"));
    private static final Set<PosixFilePermission> OTHERS = EnumSet.of(PosixFilePermission.GROUP_READ,
            PosixFilePermission.GROUP_WRITE, PosixFilePermission.GROUP_EXECUTE, PosixFilePermission.OTHERS_READ,
            PosixFilePermission.OTHERS_WRITE, PosixFilePermission.OTHERS_EXECUTE);

    private PrivateFile() {
    }

    /**
     * The file's content, or empty when there is no such file.
     *
     * @param holdsKeys whether the file has secret values, so that exposing it means the keys must be replaced
     */
    static Optional<byte[]> read(Path file, boolean holdsKeys) {
        try {
            PosixFileAttributes a;
            try {
                a = Files.readAttributes(file, PosixFileAttributes.class, LinkOption.NOFOLLOW_LINKS);
            } catch (NoSuchFileException e) {
                return Optional.empty();
            }
            if (!a.isRegularFile()) {
                throw new KosaException(KosaException.Kind.HOST, file + " is not a regular file"
                        + (a.isSymbolicLink() ? " but a symbolic link" : ""),
                        "kosa8 keeps secrets in plain files only: move it away and set the secrets again");
            }
            checkOwner(file, a.owner());
            if (a.permissions().stream().anyMatch(OTHERS::contains)) {
                throw new KosaException(KosaException.Kind.HOST, file + " has mode "
                        + PosixFilePermissions.toString(a.permissions()) + ": other users can read or change it",
                        "chmod 600 " + file + (holdsKeys ? ", and replace the keys in it: others could read them" : ""));
            }
            return Optional.of(Files.readAllBytes(file));
        } catch (IOException e) {
            throw new KosaException(KosaException.Kind.HOST, "cannot read " + file + ": " + e.getMessage(),
                    "check that the file and its directory belong to you", e);
        }
    }

    /** Replaces the file's content at once ({@link AtomicFile}); it has mode 0600 from creation, whatever the umask. */
    static void write(Path file, byte[] content) {
        Path dir = directory(file.getParent());
        try {
            AtomicFile.write(file, OWNER_ONLY, content);
        } catch (IOException e) {
            throw new KosaException(KosaException.Kind.HOST, "cannot write " + file + ": " + e.getMessage(),
                    "check that " + dir + " is yours and writable, and that the disk has room", e);
        }
    }

    /**
     * Creates the directory (0700) or checks the existing one: it must be the
     * user's and not writable by others, who could otherwise swap our files
     * for theirs by renaming.
     */
    static Path directory(Path dir) {
        try {
            if (!Files.isDirectory(dir)) {
                Files.createDirectories(dir, DIRECTORY_MODE);
            }
            PosixFileAttributes a = Files.readAttributes(dir, PosixFileAttributes.class);
            checkOwner(dir, a.owner());
            if (a.permissions().contains(PosixFilePermission.GROUP_WRITE)
                    || a.permissions().contains(PosixFilePermission.OTHERS_WRITE)) {
                throw new KosaException(KosaException.Kind.HOST, dir + " has mode "
                        + PosixFilePermissions.toString(a.permissions()) + ": other users can replace files in it",
                        "chmod go-w " + dir);
            }
            return dir;
        } catch (IOException e) {
            throw new KosaException(KosaException.Kind.HOST, "cannot create directory " + dir + ": " + e.getMessage(),
                    "check that its parent is writable, or set KOSA8_HOME to a folder of your own", e);
        }
    }

    /** Opens (creating it 0600) a file to lock; the caller closes it. */
    static FileChannel lockFile(Path file) throws IOException {
        directory(file.getParent());
        return FileChannel.open(file, Set.of(StandardOpenOption.CREATE, StandardOpenOption.WRITE), FILE_MODE);
    }

    /**
     * The owner must be this process's user. Compared by uid where
     * {@code /proc} tells ours (a container's user may have no name to look
     * up), else by the user's name.
     */
    private static void checkOwner(Path path, UserPrincipal owner) throws IOException {
        boolean mine;
        String me;
        try {
            Object myUid = Files.getAttribute(Path.of("/proc/self"), "unix:uid");
            mine = myUid.equals(Files.getAttribute(path, "unix:uid", LinkOption.NOFOLLOW_LINKS));
            me = "uid " + myUid;
        } catch (IOException | UnsupportedOperationException e) {
            UserPrincipal user = FileSystems.getDefault().getUserPrincipalLookupService()
                    .lookupPrincipalByName(System.getProperty("user.name"));
            mine = owner.equals(user);
            me = user.getName();
        }
        if (!mine) {
            throw new KosaException(KosaException.Kind.HOST, path + " belongs to " + owner.getName() + ", not to you ("
                    + me + ")", "kosa8 keeps secrets only in files of your own: move it away, or set KOSA8_HOME to a "
                    + "folder of your own");
        }
    }
}
