package dev.kosa8.image;

import dev.kosa8.host.KosaException;
import dev.kosa8.image.debian.ArchiveHttp;
import dev.kosa8.image.debian.ArchiveKeys;
import dev.kosa8.image.debian.DebCache;
import dev.kosa8.image.debian.DebianArchive;
import dev.kosa8.image.debian.DownloadProgress;
import dev.kosa8.image.debian.LockFile;
import dev.kosa8.image.debian.Locked;
import dev.kosa8.image.debian.Mirror;
import dev.kosa8.image.debian.PackageEntry;
import dev.kosa8.image.debian.ProxySettings;
import dev.kosa8.image.debian.Relation;
import dev.kosa8.image.debian.Source;

import java.nio.file.Path;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;

/**
 * The image builder's Debian packages through kosa8's own archive client
 * ({@link DebianArchive}), not the host's apt: the suite's, its updates' and
 * its security suite's signed indices, read once per build, and each
 * {@code .deb} checked against them. {@link DebianPackages} uses it for the
 * kernel, busybox and the kernel headers.
 */
final class ArchivePackages {
    private final DebianArchive archive;
    private final List<Source> sources;
    private final Map<String, Mirror> mirrors = new LinkedHashMap<>();
    private final String architecture;
    private final Consumer<String> log;
    private final Consumer<String> note;
    private DebianArchive.Indexed indexed;

    /** {@code note}: a line for the user now and then while a large file downloads. */
    ArchivePackages(Path cache, String suite, String architecture, Map<String, String> env, Consumer<String> log,
                    Consumer<String> note) {
        this(new DebianArchive(new ArchiveHttp(ProxySettings.fromEnvironment()), ArchiveKeys.debian(),
                new DebCache(cache), Instant::now), Source.standard(suite, env), architecture, log, note);
    }

    /** Through {@code archive} (tests: one on loopback, signed by a key made there) from {@code sources}. */
    ArchivePackages(DebianArchive archive, List<Source> sources, String architecture, Consumer<String> log,
                    Consumer<String> note) {
        this.archive = archive;
        this.sources = sources;
        sources.forEach(s -> mirrors.putIfAbsent(s.label(), s.mirror()));
        this.architecture = architecture;
        this.log = log;
        this.note = note;
    }

    /** Files over 8 MB are reported at each quarter, so a slow mirror is seen to move. */
    private DownloadProgress progress() {
        return new DownloadProgress() {
            private String current = "";
            private int quarter;

            @Override
            public void note(String line) {
                note.accept(line);
            }

            @Override
            public void downloaded(String what, long done, long total) {
                if (total < 8_000_000) {
                    return;
                }
                if (!what.equals(current)) {
                    current = what;
                    quarter = 0;
                }
                int q = (int) (done * 4 / total);
                if (q > quarter) {
                    quarter = q;
                    note.accept("downloading " + what + ": " + done / 1_000_000 + " of " + total / 1_000_000 + " MB");
                }
            }
        };
    }

    private DebianArchive.Indexed index() {
        if (indexed == null) {
            long t0 = System.nanoTime();
            indexed = archive.index(sources, architecture, progress());
            log.accept("debian archive: " + indexed.index().size() + " packages indexed in "
                    + (System.nanoTime() - t0) / 1_000_000 + " ms; " + String.join("; ", indexed.notes()));
        }
        return indexed;
    }

    /** The newest {@code name} in the signed indices, as an apt record (Package, Version, Architecture, Depends). */
    AptRecord candidate(String name) {
        PackageEntry e = entry(name);
        Map<String, String> fields = new LinkedHashMap<>();
        fields.put("Package", e.name());
        fields.put("Version", e.versionText());
        fields.put("Architecture", e.architecture());
        if (!e.depends().isEmpty()) {
            fields.put("Depends", String.join(", ", e.depends().stream()
                    .map(g -> String.join(" | ", g.stream().map(Relation::toString).toList())).toList()));
        }
        return new AptRecord(fields);
    }

    /** A {@code .deb} in the archive client's cache and the lock entry it was checked against. */
    record Fetched(Path file, Locked entry) {
        String sha256() {
            return entry.sha256();
        }
    }

    /**
     * Exactly the file {@code entry} names, from the cache or its archive's mirror, checked against its SHA-256;
     * no index is read (a lock's package the suite has since replaced is still fetched, while the mirror keeps it).
     */
    Fetched download(Locked entry) {
        return new Fetched(archive.download(new LockFile(List.of(), List.of(entry)), mirrors, progress()).getFirst(),
                entry);
    }

    /**
     * Refuses a lock naming any package the archive's signed indices do not list exactly so (name, version,
     * architecture, SHA-256, size, path, archive). A lock's packages are installed as root on this host
     * (mmdebstrap runs their maintainer scripts), so a lock from elsewhere is trusted no further than the archive
     * signed it: a lock file alone, edited or hostile, cannot name a file of its choosing.
     */
    void verify(LockFile lock, String source) {
        List<Locked> unsigned = lock.all().stream().filter(l -> !index().index().lists(l)).toList();
        if (!unsigned.isEmpty()) {
            Locked first = unsigned.getFirst();
            throw new KosaException(KosaException.Kind.IMAGE, unsigned.size() + " package(s) of " + source
                    + " are not in the Debian archive's signed indices as it names them (the first: " + first.name()
                    + " " + first.version() + " " + first.architecture() + " from " + first.archive() + ", SHA-256 "
                    + first.sha256() + "); kosa8 installs only packages the archive signed",
                    "a lock builds only while the archive still lists its versions (a security or point release "
                            + "replaces them); build with `kosa8 image build` and lock that image");
        }
        log.accept("debian archive: every package of " + source + " is in the signed indices as locked");
    }

    /** Every root filesystem package of {@code lock}, checked, in the lock's order; no index is read. */
    List<Path> download(LockFile lock) {
        List<Path> files = archive.download(new LockFile(lock.comments(), lock.packages()), mirrors, progress());
        log.accept("debian archive: " + files.size() + " root filesystem packages of the lock fetched and checked");
        return files;
    }

    /** Downloads exactly {@code pkg} (checked against the signed index) and returns its file in the cache. */
    Fetched download(DebPackage pkg) {
        return download(locked(pkg));
    }

    /** The lock entry of exactly {@code pkg} in the signed indices; an error if they now have another version. */
    Locked locked(DebPackage pkg) {
        PackageEntry e = entry(pkg.name());
        if (!e.versionText().equals(pkg.version()) || !e.architecture().equals(pkg.architecture())) {
            throw new KosaException(KosaException.Kind.IMAGE, "the Debian archive no longer has " + pkg.name() + " "
                    + pkg.version() + " (" + pkg.architecture() + "): it has " + e.versionText() + " ("
                    + e.architecture() + ")", "run `kosa8 image build`, which takes the newest packages");
        }
        Locked l = e.locked();
        return new Locked(l.name(), l.version(), l.architecture(), l.sha256(), l.size(),
                index().index().origin(e.name()), l.filename());
    }

    /**
     * Resolves the root filesystem's packages (minbase and {@code includes})
     * from the signed indices, downloads each, checked, and puts it into
     * mmdebstrap's package cache under the name apt gives it, so mmdebstrap
     * installs these very files instead of downloading; returns the lock.
     */
    LockFile prefetchRootfs(List<String> includes, String suite, Path aptCache) {
        LockFile lock = DebianArchive.resolve(index(), includes, true, suite);
        List<Path> files = archive.download(lock, mirrors, progress());
        try {
            java.nio.file.Files.createDirectories(aptCache);
            for (int i = 0; i < files.size(); i++) {
                Locked p = lock.packages().get(i);
                Path target = aptCache.resolve(new DebPackage(p.name(), p.version(), p.architecture()).fileName());
                if (!java.nio.file.Files.isRegularFile(target)) {
                    Path tmp = java.nio.file.Files.createTempFile(aptCache, ".fetch-", ".part");
                    java.nio.file.Files.copy(files.get(i), tmp, java.nio.file.StandardCopyOption.REPLACE_EXISTING);
                    java.nio.file.Files.move(tmp, target, java.nio.file.StandardCopyOption.ATOMIC_MOVE);
                }
            }
        } catch (java.io.IOException e) {
            throw new KosaException(KosaException.Kind.HOST, "cannot fill the package cache " + aptCache + ": "
                    + e.getMessage(), "check that " + aptCache + " is writable", e);
        }
        log.accept("debian archive: " + lock.packages().size() + " root filesystem packages fetched and checked");
        return lock;
    }

    /** The root filesystem's packages (minbase and {@code includes}) resolved from the signed indices: their lock. */
    LockFile resolveRootfs(List<String> includes, String suite) {
        return DebianArchive.resolve(index(), includes, true, suite);
    }

    /**
     * The builder VM's own packages (minbase and {@code names}, docs/image.md, "The builder VM"), resolved from
     * the same signed indices as the root filesystem's.
     */
    LockFile resolveBuilder(List<String> names, String suite) {
        LockFile lock = DebianArchive.resolve(index(), names, true, suite);
        log.accept("debian archive: the builder VM's " + lock.packages().size() + " packages resolved");
        return lock;
    }

    private PackageEntry entry(String name) {
        return index().index().get(name).orElseThrow(() -> new KosaException(KosaException.Kind.IMAGE,
                "the Debian archive's signed indices have no package " + name + " for " + architecture,
                "check the suite and mirror (KOSA8_DEBIAN_MIRROR)"));
    }
}
