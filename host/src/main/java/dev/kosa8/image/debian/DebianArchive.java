package dev.kosa8.image.debian;

import org.apache.commons.compress.compressors.gzip.GzipCompressorInputStream;
import org.tukaani.xz.XZInputStream;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.Supplier;

/**
 * The Debian archive client: the chain of trust from kosa8's shipped keys
 * to every {@code .deb}. A suite's {@code InRelease} is verified against
 * {@link ArchiveKeys}; its signed text gives the SHA-256 of the
 * {@code Packages} index, which is checked before it is read; each entry of
 * the index gives the SHA-256 of its {@code .deb}, checked as it is
 * downloaded into the {@link DebCache}. Anything that does not check is
 * refused, nothing unverified is parsed past its signature or hash. A
 * Release older than one already accepted from the same mirror and suite is
 * refused too ({@link ReleaseDates}).
 */
public final class DebianArchive {
    /** Far larger than any real InRelease (bookworm's is about 150 KB). */
    static final long MAX_INRELEASE = 8L << 20;
    /** Far larger than any real uncompressed Packages (bookworm main amd64 is about 45 MB). */
    static final long MAX_PACKAGES = 512L << 20;

    private final ArchiveHttp http;
    private final ArchiveKeys keys;
    private final DebCache cache;
    private final Supplier<Instant> clock;
    private final ReleaseDates dates;

    public DebianArchive(ArchiveHttp http, ArchiveKeys keys, DebCache cache, Supplier<Instant> clock) {
        this.http = http;
        this.keys = keys;
        this.cache = cache;
        this.clock = clock;
        this.dates = new ReleaseDates(cache.dir().resolve("releases"));
    }

    /** The packages chosen for an image: the lock entries, and the signed Releases they came through. */
    public record Resolution(LockFile lock, int indexSize) {
    }

    /** The verified Release of one source. */
    public ReleaseFile release(Source s) {
        String what = s.suite() + "'s InRelease from " + s.mirror().base();
        byte[] body = http.fetch(s.mirror().resolve("dists/" + s.suite() + "/InRelease"), MAX_INRELEASE, what);
        ClearSigned.Verified v = ClearSigned.verify(body, keys, what, clock.get());
        ReleaseFile r = ReleaseFile.parse(v.text());
        r.check(s.suite(), clock.get());
        dates.accept(s, r);
        return r;
    }

    /** The index of every source's {@code Packages} for {@code arch}, each checked against its signed Release. */
    public Indexed index(List<Source> sources, String arch, DownloadProgress progress) {
        PackageIndex index = new PackageIndex();
        Map<String, String> origin = new LinkedHashMap<>();
        List<String> notes = new ArrayList<>();
        for (Source s : sources) {
            ReleaseFile r = release(s);
            notes.add(s.label() + " " + s.suite() + " " + s.component() + " " + arch + ": Release of " + r.date());
            String text = packagesText(s, r, arch, progress);
            index.addAll(text, s.suite() + "'s Packages", arch, s.label());
        }
        return new Indexed(index, notes);
    }

    /** An index and the lines that say where it came from (for the lock file's comments). */
    public record Indexed(PackageIndex index, List<String> notes) {
    }

    /** The closure of {@code includes} (plus the minbase set when {@code minbase}) as a lock. */
    public static LockFile resolve(Indexed indexed, List<String> includes, boolean minbase, String suite) {
        List<String> names = new ArrayList<>();
        if (minbase) {
            names.addAll(Resolver.minbase(indexed.index()));
        }
        includes.stream().filter(n -> !names.contains(n)).forEach(names::add);
        List<Locked> locked = Resolver.closure(indexed.index(), names).stream()
                .map(e -> e.locked().withArchive(indexed.index().origin(e.name()))).toList();
        List<String> comments = new ArrayList<>();
        comments.add("suite " + suite + (minbase ? ", minbase" : "") + ", includes " + String.join(",", includes));
        comments.addAll(indexed.notes());
        return new LockFile(comments, locked);
    }

    /**
     * Every package of {@code lock}, from the cache or downloaded from its
     * archive's mirror ({@code mirrors} by label), each checked against the
     * lock's SHA-256; in the lock's order.
     */
    public List<Path> download(LockFile lock, Map<String, Mirror> mirrors, DownloadProgress progress) {
        List<Path> out = new ArrayList<>();
        int i = 0;
        for (Locked p : lock.packages()) {
            i++;
            Mirror m = mirrors.get(p.archive());
            if (m == null) {
                throw new dev.kosa8.host.KosaException(dev.kosa8.host.KosaException.Kind.IMAGE,
                        "the lock names the archive '" + p.archive() + "', which kosa8 has no mirror for",
                        "use a lock file a kosa8 image build wrote");
            }
            String what = p.name() + "_" + p.version() + "_" + p.architecture() + ".deb";
            Optional<Path> cached = cache.get(p.sha256(), p.size(), what, progress);
            progress.file(i, lock.packages().size(), p.name() + " " + p.version(), cached.isPresent());
            out.add(cached.orElseGet(() -> cache.fetch(http, m.resolve(p.filename()), p.size(), p.sha256(), what,
                    progress)));
        }
        return out;
    }

    private String packagesText(Source s, ReleaseFile r, String arch, DownloadProgress progress) {
        String base = s.component() + "/binary-" + arch + "/Packages";
        String name = r.sha256().containsKey(base + ".xz") ? base + ".xz"
                : r.sha256().containsKey(base + ".gz") ? base + ".gz" : base;
        ReleaseFile.FileHash h = r.hashOf(name);
        String what = s.suite() + "'s " + name;
        Path file = cache.fetch(http, s.mirror().resolve("dists/" + s.suite() + "/" + name), h.size(), h.sha256(),
                what, progress);
        byte[] plain;
        try (InputStream raw = Files.newInputStream(file);
             InputStream in = name.endsWith(".xz") ? new XZInputStream(raw)
                     : name.endsWith(".gz") ? new GzipCompressorInputStream(raw) : raw) {
            plain = readBounded(in, MAX_PACKAGES, what);
        } catch (IOException e) {
            throw ArchiveErrors.malformed(what + " does not decompress: " + e.getMessage());
        }
        ReleaseFile.FileHash uncompressed = r.sha256().get(base);
        if (uncompressed != null && !name.equals(base)) {
            MessageDigest d = ArchiveHttp.sha256();
            String got = HexFormat.of().formatHex(d.digest(plain));
            if (plain.length != uncompressed.size() || !got.equals(uncompressed.sha256())) {
                throw ArchiveErrors.unverified(what + " decompresses to data whose SHA-256 is not the signed one");
            }
        }
        return new String(plain, StandardCharsets.UTF_8);
    }

    static byte[] readBounded(InputStream in, long max, String what) throws IOException {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        byte[] buf = new byte[64 * 1024];
        long total = 0;
        int n;
        while ((n = in.read(buf)) > 0) {
            total += n;
            if (total > max) {
                throw ArchiveErrors.unverified(what + " decompresses to more than " + max + " bytes");
            }
            out.write(buf, 0, n);
        }
        return out.toByteArray();
    }
}
