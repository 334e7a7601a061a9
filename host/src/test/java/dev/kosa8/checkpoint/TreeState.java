package dev.kosa8.checkpoint;

import java.io.IOException;
import java.nio.file.FileVisitResult;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.SimpleFileVisitor;
import java.nio.file.attribute.BasicFileAttributes;
import java.nio.file.attribute.FileTime;
import java.security.MessageDigest;
import java.util.HexFormat;
import java.util.Map;
import java.util.SortedMap;
import java.util.TreeMap;

/**
 * Describes a folder the way the tests compare it: per path, the kind, the
 * permission bits, the mtime (nanoseconds as the file system keeps them) and
 * the content (a file's SHA-256, a symlink's target). Written with plain
 * java.nio, independently of the code under test, and never following a
 * symlink.
 */
final class TreeState {
    record Node(String kind, int mode, FileTime mtime, String content) {
    }

    private TreeState() {
    }

    static SortedMap<String, Node> describe(Path root) throws IOException {
        SortedMap<String, Node> out = new TreeMap<>();
        Files.walkFileTree(root, new SimpleFileVisitor<>() {
            @Override
            public FileVisitResult preVisitDirectory(Path dir, BasicFileAttributes attrs) throws IOException {
                out.put(root.relativize(dir).toString(), node(dir));
                return FileVisitResult.CONTINUE;
            }

            @Override
            public FileVisitResult visitFile(Path file, BasicFileAttributes attrs) throws IOException {
                out.put(root.relativize(file).toString(), node(file));
                return FileVisitResult.CONTINUE;
            }

            @Override
            public FileVisitResult visitFileFailed(Path file, IOException exc) throws IOException {
                throw exc;
            }
        });
        return out;
    }

    static Node node(Path p) throws IOException {
        Map<String, Object> a = Files.readAttributes(p, "unix:mode,lastModifiedTime", LinkOption.NOFOLLOW_LINKS);
        int mode = (Integer) a.get("mode");
        FileTime mtime = (FileTime) a.get("lastModifiedTime");
        return switch (mode & 0170000) {
            case 0040000 -> new Node("dir", mode & 07777, mtime, null);
            case 0100000 -> new Node("file", mode & 07777, mtime, sha256(Files.readAllBytes(p)));
            case 0120000 -> new Node("symlink", mode & 07777, mtime, Files.readSymbolicLink(p).toString());
            case 0010000 -> new Node("fifo", mode & 07777, mtime, null);
            default -> new Node("other " + Integer.toOctalString(mode), mode & 07777, mtime, null);
        };
    }

    static String sha256(byte[] b) {
        try {
            return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(b));
        } catch (java.security.NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }
}
