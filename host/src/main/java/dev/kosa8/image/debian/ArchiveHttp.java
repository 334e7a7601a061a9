package dev.kosa8.image.debian;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Duration;
import java.util.HexFormat;

/**
 * HTTP for the archive client: through {@link ProxySettings}, redirects
 * followed (never from https to http), every body bounded. A file with an
 * expected size and SHA-256 is streamed to a temporary file beside its
 * target, hashed on the way, and moved into place only when both match;
 * more bytes than expected stop the download at once, fewer are a
 * truncated download; either way nothing is left behind.
 */
public final class ArchiveHttp {
    private static final int BUFFER = 64 * 1024;
    private static final long REPORT_EVERY = 512 * 1024;

    private final HttpClient client;

    public ArchiveHttp(ProxySettings proxy) {
        this.client = HttpClient.newBuilder().proxy(proxy).followRedirects(HttpClient.Redirect.NORMAL)
                .connectTimeout(Duration.ofSeconds(20)).build();
    }

    /** The body of {@code uri}, refused past {@code max} bytes. */
    public byte[] fetch(URI uri, long max, String what) {
        try (InputStream in = open(uri, what)) {
            byte[] body = in.readNBytes((int) Math.min(Integer.MAX_VALUE - 8, max + 1));
            if (body.length > max) {
                throw ArchiveErrors.unverified(what + " is larger than " + max + " bytes, more than any real one");
            }
            return body;
        } catch (IOException e) {
            throw ArchiveErrors.unreachable(what + " (" + uri + ")", e);
        }
    }

    /** Downloads {@code uri} to {@code target}, which then has exactly {@code size} bytes hashing to {@code sha256}. */
    public void download(URI uri, Path target, long size, String sha256, String what, DownloadProgress progress) {
        Path partial = target.resolveSibling("." + target.getFileName() + ".partial");
        try {
            Files.createDirectories(target.getParent());
            MessageDigest digest = sha256();
            long done = 0;
            long reported = 0;
            try (InputStream in = open(uri, what); OutputStream out = Files.newOutputStream(partial)) {
                byte[] buf = new byte[BUFFER];
                int n;
                while ((n = in.read(buf)) > 0) {
                    done += n;
                    if (done > size) {
                        throw ArchiveErrors.unverified(what + " is longer than the " + size
                                + " bytes its signed index says");
                    }
                    digest.update(buf, 0, n);
                    out.write(buf, 0, n);
                    if (done - reported >= REPORT_EVERY) {
                        progress.downloaded(what, done, size);
                        reported = done;
                    }
                }
            }
            progress.downloaded(what, done, size);
            if (done < size) {
                throw ArchiveErrors.unverified(what + " was cut short: " + done + " of " + size + " bytes arrived");
            }
            String got = HexFormat.of().formatHex(digest.digest());
            if (!got.equals(sha256)) {
                throw ArchiveErrors.unverified(what + " has the SHA-256 " + got + ", but its signed index says "
                        + sha256);
            }
            Files.move(partial, target, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
        } catch (IOException e) {
            throw ArchiveErrors.unreachable(what + " (" + uri + ")", e);
        } finally {
            try {
                Files.deleteIfExists(partial);
            } catch (IOException ignored) {
                // the next download of it replaces it
            }
        }
    }

    private InputStream open(URI uri, String what) throws IOException {
        HttpRequest request = HttpRequest.newBuilder(uri).timeout(Duration.ofSeconds(60))
                .header("User-Agent", "kosa8").GET().build();
        HttpResponse<InputStream> r;
        try {
            r = client.send(request, HttpResponse.BodyHandlers.ofInputStream());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException("interrupted", e);
        }
        if (r.statusCode() != 200) {
            r.body().close();
            throw new IOException("HTTP " + r.statusCode() + (r.statusCode() == 404
                    ? " (not on this mirror: the suite or package may be gone from it)" : ""));
        }
        return r.body();
    }

    static MessageDigest sha256() {
        try {
            return MessageDigest.getInstance("SHA-256");
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }
}
