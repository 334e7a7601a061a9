package dev.kosa8.checkpoint;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.DirectoryStream;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.EnumSet;
import java.util.HashSet;
import java.util.Set;
import java.util.UUID;

/**
 * File contents, each stored once under the SHA-256 of its bytes:
 * {@code objects/ab/cdef…} (the first two hex digits name a subdirectory so no
 * directory grows past a few thousand entries). An object is written under a
 * temporary name {@code objects/.tmp-*} and renamed into place only when
 * complete, so an object's name always means its full content; a crash leaves
 * at most a temporary file, which {@link #removeTemporaries} clears. Objects
 * are read-only (0444) from creation: nothing ever changes one in place.
 *
 * <p>The store's own paths are ASCII (hex names), so plain {@code java.nio}
 * serves here; only the folder needs {@link Posix}.
 */
final class ObjectStore {
    static final String TEMP_PREFIX = ".tmp-";
    private static final Set<PosixFilePermission> READ_ONLY = EnumSet.of(PosixFilePermission.OWNER_READ,
            PosixFilePermission.GROUP_READ, PosixFilePermission.OTHERS_READ);

    private final Path dir;
    private final Set<String> subdirsMade = new HashSet<>();
    private final String tempBase = UUID.randomUUID().toString();
    private long tempCount;
    private boolean dirMade;

    ObjectStore(Path dir) {
        this.dir = dir;
    }

    Path dir() {
        return dir;
    }

    Path path(String sha256) {
        return dir.resolve(sha256.substring(0, 2)).resolve(sha256.substring(2));
    }

    boolean has(String sha256) {
        return Files.exists(path(sha256), LinkOption.NOFOLLOW_LINKS);
    }

    /** A temporary object being written: its name and the channel open on it. */
    record Temporary(Path path, FileChannel channel) {
    }

    /**
     * Creates a temporary object, read-only from the start (the creating descriptor may still write), so
     * storing one costs an open, the writes, a close and a rename: nothing else.
     */
    Temporary newTemporary() throws IOException {
        Path p = temporaryPath();
        return new Temporary(p, FileChannel.open(p, EnumSet.of(StandardOpenOption.CREATE_NEW,
                StandardOpenOption.WRITE), PosixFilePermissions.asFileAttribute(READ_ONLY)));
    }

    /** A fresh name for a temporary object, not yet made (the store's directory is). */
    Path temporaryPath() throws IOException {
        if (!dirMade) {
            Files.createDirectories(dir);
            dirMade = true;
        }
        return dir.resolve(TEMP_PREFIX + tempBase + "-" + tempCount++);
    }

    /** Writes {@code content} (position to limit) to a new temporary object and returns its name. */
    Path writeTemporary(ByteBuffer content) throws IOException {
        Temporary tmp = newTemporary();
        try (FileChannel ch = tmp.channel()) {
            while (content.hasRemaining()) {
                ch.write(content);
            }
        } catch (IOException | RuntimeException e) {
            Files.deleteIfExists(tmp.path());
            throw e;
        }
        return tmp.path();
    }

    /**
     * Makes a complete temporary file the object {@code sha256}. False (and the temporary file is gone) if
     * the object was already there: same hash, same bytes.
     */
    boolean commit(Path tmp, String sha256) throws IOException {
        Path target = path(sha256);
        if (Files.exists(target, LinkOption.NOFOLLOW_LINKS)) {
            Files.delete(tmp);
            return false;
        }
        String sub = sha256.substring(0, 2);
        if (subdirsMade.add(sub)) {
            Files.createDirectories(target.getParent());
        }
        try {
            Files.move(tmp, target, StandardCopyOption.ATOMIC_MOVE);
        } catch (AtomicMoveNotSupportedException | FileAlreadyExistsException e) {
            Files.deleteIfExists(tmp);
            throw e;
        }
        return true;
    }

    void delete(String sha256) throws IOException {
        Files.deleteIfExists(path(sha256));
    }

    /** Every stored object's hash (temporary files excluded). */
    Set<String> all() throws IOException {
        Set<String> out = new HashSet<>();
        if (!Files.isDirectory(dir)) {
            return out;
        }
        try (DirectoryStream<Path> subs = Files.newDirectoryStream(dir)) {
            for (Path sub : subs) {
                String s = sub.getFileName().toString();
                if (s.length() != 2 || !Files.isDirectory(sub, LinkOption.NOFOLLOW_LINKS)) {
                    continue;
                }
                try (DirectoryStream<Path> objects = Files.newDirectoryStream(sub)) {
                    for (Path o : objects) {
                        String hash = s + o.getFileName();
                        if (hash.matches("[0-9a-f]{64}")) {
                            out.add(hash);
                        }
                    }
                }
            }
        }
        return out;
    }

    /** Deletes the temporary files an interrupted capture left behind. */
    void removeTemporaries() throws IOException {
        if (!Files.isDirectory(dir)) {
            return;
        }
        try (DirectoryStream<Path> s = Files.newDirectoryStream(dir, TEMP_PREFIX + "*")) {
            for (Path p : s) {
                try {
                    Files.deleteIfExists(p);
                } catch (NoSuchFileException ignored) {
                    // gone already
                }
            }
        }
    }
}
