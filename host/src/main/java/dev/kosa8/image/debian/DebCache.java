package dev.kosa8.image.debian;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.util.HexFormat;
import java.util.Optional;

/**
 * Downloaded archive files under the SHA-256 they must have
 * ({@code DIR/sha256/ab/abcdef…}): a file is only ever moved in after its
 * hash was checked, and checked again when it is taken out, so a damaged
 * cache costs a download, never a bad image. The same {@code .deb} needed
 * by two builds (or two suites) is kept once.
 */
public final class DebCache {
    private final Path dir;

    public DebCache(Path dir) {
        this.dir = dir;
    }

    /** The cache's folder. */
    public Path dir() {
        return dir;
    }

    /** Where the file with this hash lives. */
    public Path path(String sha256) {
        return dir.resolve("sha256").resolve(sha256.substring(0, 2)).resolve(sha256);
    }

    /**
     * The cached file with this size and hash, if it is there and intact; a damaged one (its bytes changed on
     * disk: truncated, overwritten) is removed, and {@code progress} told so, naming it as {@code what}.
     */
    public Optional<Path> get(String sha256, long size, String what, DownloadProgress progress) {
        Path p = path(sha256);
        try {
            if (!Files.isRegularFile(p, java.nio.file.LinkOption.NOFOLLOW_LINKS)) {
                return Optional.empty();
            }
            long had = Files.size(p);
            String got = hash(p);
            if (had == size && got.equals(sha256)) {
                return Optional.of(p);
            }
            Files.delete(p);
            progress.note("the cached " + what + " was damaged (" + had + " bytes with the SHA-256 " + got
                    + ", its signed index says " + size + " bytes with " + sha256 + "): deleted, downloading it again");
        } catch (IOException e) {
            progress.note("the cached " + what + " cannot be read (" + e.getMessage() + "): downloading it again");
        }
        return Optional.empty();
    }

    /** The file with this hash: from the cache, else downloaded (and checked) into it. */
    public Path fetch(ArchiveHttp http, java.net.URI uri, long size, String sha256, String what,
                      DownloadProgress progress) {
        return get(sha256, size, what, progress).orElseGet(() -> {
            http.download(uri, path(sha256), size, sha256, what, progress);
            return path(sha256);
        });
    }

    /** The SHA-256 of a file's bytes, in lower-case hex. */
    public static String hash(Path p) throws IOException {
        MessageDigest d = ArchiveHttp.sha256();
        try (InputStream in = Files.newInputStream(p)) {
            byte[] buf = new byte[64 * 1024];
            int n;
            while ((n = in.read(buf)) > 0) {
                d.update(buf, 0, n);
            }
        }
        return HexFormat.of().formatHex(d.digest());
    }
}
