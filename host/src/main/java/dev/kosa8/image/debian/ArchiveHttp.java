package dev.kosa8.image.debian;

import java.io.FilterInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpConnectTimeoutException;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.http.HttpTimeoutException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Duration;
import java.util.HexFormat;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;

/**
 * HTTP for the archive client: through {@link ProxySettings}, redirects
 * followed (never from https to http), every body bounded. A file with an
 * expected size and SHA-256 is streamed to a temporary file beside its
 * target, hashed on the way, and moved into place only when both match;
 * more bytes than expected stop the download at once, fewer are a
 * truncated download; either way nothing is left behind. A server that
 * sends nothing for {@link #IDLE} (no answer, or a body that stops coming)
 * fails the fetch naming the URL, instead of hanging the build.
 */
public final class ArchiveHttp {
    /** How long a response's headers, or the next bytes of its body, may take. */
    static final Duration IDLE = Duration.ofSeconds(60);
    private static final int BUFFER = 64 * 1024;
    private static final long REPORT_EVERY = 512 * 1024;
    /** Closes a body nothing arrived on for too long, which ends a read blocked on it. */
    private static final ScheduledThreadPoolExecutor WATCHDOG = watchdog();

    private final HttpClient client;
    private final Duration idle;
    private final Duration connectTimeout;

    public ArchiveHttp(ProxySettings proxy) {
        this(proxy, IDLE);
    }

    /** With another idle bound (tests: a second). */
    ArchiveHttp(ProxySettings proxy, Duration idle) {
        this.idle = idle;
        this.connectTimeout = idle.compareTo(Duration.ofSeconds(20)) < 0 ? idle : Duration.ofSeconds(20);
        this.client = HttpClient.newBuilder().proxy(proxy).followRedirects(HttpClient.Redirect.NORMAL)
                .connectTimeout(connectTimeout).build();
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
        HttpRequest request = HttpRequest.newBuilder(uri).timeout(idle)
                .header("User-Agent", "kosa8").GET().build();
        HttpResponse<InputStream> r;
        try {
            r = client.send(request, HttpResponse.BodyHandlers.ofInputStream());
        } catch (HttpConnectTimeoutException e) {
            throw new IOException("could not connect to " + uri.getHost() + (uri.getPort() < 0 ? "" : ":"
                    + uri.getPort()) + " within " + connectTimeout.toSeconds() + " s, the connect timeout (check "
                    + "the network, and the proxy settings: https_proxy, http_proxy, no_proxy)", e);
        } catch (HttpTimeoutException e) {
            throw new IOException("no answer within " + idle.toSeconds() + " s (the server or proxy stalled)", e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException("interrupted", e);
        }
        if (r.statusCode() != 200) {
            r.body().close();
            throw new IOException("HTTP " + r.statusCode() + (r.statusCode() == 404
                    ? " (not on this mirror: the suite or package may be gone from it)" : ""));
        }
        return new IdleBody(r.body());
    }

    /** A body whose read fails once nothing arrived for {@link #idle}: the watchdog closes it under the read. */
    private final class IdleBody extends FilterInputStream {
        private volatile boolean stalled;

        IdleBody(InputStream in) {
            super(in);
        }

        @Override
        public int read() throws IOException {
            byte[] one = new byte[1];
            int n = read(one, 0, 1);
            return n < 0 ? -1 : one[0] & 0xff;
        }

        @Override
        public int read(byte[] b, int off, int len) throws IOException {
            ScheduledFuture<?> alarm = WATCHDOG.schedule(this::stall, idle.toMillis(), TimeUnit.MILLISECONDS);
            int n;
            try {
                n = in.read(b, off, len);
            } catch (IOException e) {
                throw stalled ? stalledError() : e;
            } finally {
                alarm.cancel(false);
            }
            if (stalled) {
                throw stalledError();
            }
            return n;
        }

        private void stall() {
            stalled = true;
            try {
                in.close();
            } catch (IOException ignored) {
                // the read it ends says why
            }
        }

        private IOException stalledError() {
            return new IOException("no data for " + idle.toSeconds() + " s in the middle of the body (the server or "
                    + "proxy stalled)");
        }
    }

    private static ScheduledThreadPoolExecutor watchdog() {
        ScheduledThreadPoolExecutor e = new ScheduledThreadPoolExecutor(1,
                Thread.ofPlatform().daemon().name("kosa8-archive-idle").factory());
        e.setRemoveOnCancelPolicy(true);
        return e;
    }

    static MessageDigest sha256() {
        try {
            return MessageDigest.getInstance("SHA-256");
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }
}
