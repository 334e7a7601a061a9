package dev.kosa8.image;

import dev.kosa8.host.HostCommand;
import dev.kosa8.host.KosaException;
import dev.kosa8.image.debian.LockFile;
import dev.kosa8.image.debian.Locked;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * Finds, downloads and unpacks Debian packages without installing anything,
 * into a cache folder by file name, each beside a {@code NAME.sha256} with
 * the SHA-256 it was checked against when it came (the signed index's, or
 * the hash of what apt checked): a cached file is hashed again before each
 * use, and one whose bytes changed on disk, or that has no such record, is
 * deleted and downloaded again, which the user is told. By default through kosa8's own archive
 * client ({@link ArchivePackages}: signed indices, checked {@code .deb}s, no
 * apt needed); with {@code KOSA8_DEBIAN_FETCH=apt}, or when built without
 * one, through the host's apt: {@code apt-cache show}, {@code apt-get
 * download}, and when apt's package lists are stale or missing
 * {@code apt-get update} once if we are root, else the exact command to run.
 * Unpacking is {@code dpkg-deb -x} where dpkg is installed, else
 * {@link DebUnpack} in Java.
 */
final class DebianPackages {
    private final Path debs;
    private final Path log;
    private final boolean root;
    private final java.util.function.Consumer<String> note;
    private final java.util.function.Supplier<ArchivePackages> archive;
    private ArchivePackages opened;
    private boolean updated;
    /** Packages to fetch by their lock entry, not by the index ({@code kosa8 image build --from-lock}). */
    private final java.util.Map<DebPackage, Locked> pinned = new java.util.HashMap<>();

    /** Through the host's apt. */
    DebianPackages(Path debs, Path log, boolean root) {
        this(debs, log, root, null, line -> {
        });
    }

    /**
     * Through {@code archive} (made on first use: an ensure with everything cached needs no network);
     * {@code note} tells the user of a damaged cached file.
     */
    DebianPackages(Path debs, Path log, boolean root, java.util.function.Supplier<ArchivePackages> archive,
                   java.util.function.Consumer<String> note) {
        this.debs = debs;
        this.log = log;
        this.root = root;
        this.note = note;
        this.archive = "apt".equals(System.getenv("KOSA8_DEBIAN_FETCH")) ? null : archive;
    }

    private ArchivePackages archive() {
        if (opened == null) {
            opened = archive.get();
        }
        return opened;
    }

    /** Whether packages come through kosa8's archive client (not {@code KOSA8_DEBIAN_FETCH=apt}). */
    boolean usesArchiveClient() {
        return archive != null;
    }

    /** kosa8's archive client, unless this builder goes through the host's apt. */
    java.util.Optional<ArchivePackages> archiveClient() {
        return archive == null ? java.util.Optional.empty() : java.util.Optional.of(archive());
    }

    /**
     * Fetches {@code entry}'s package by the lock entry itself (its archive path and SHA-256), not by the
     * signed index, which may have replaced that version since: what {@code --from-lock} builds from.
     */
    void pin(Locked entry) {
        if (archive == null) {
            throw new KosaException(KosaException.Kind.USAGE, "a build from a lock fetches its packages with kosa8's"
                    + " own archive client, and KOSA8_DEBIAN_FETCH=apt turns that off", "unset KOSA8_DEBIAN_FETCH");
        }
        pinned.put(new DebPackage(entry.name(), entry.version(), entry.architecture()), entry);
    }

    /**
     * The lock entry {@code pkg}'s cached {@code .deb} was checked against, when kosa8's archive client fetched
     * it (recorded beside it as {@code NAME.deb.locked}, a lock of that one package, and only while the file's
     * recorded SHA-256 is that entry's); empty for a file apt fetched, or one fetched before kosa8 kept these.
     */
    java.util.Optional<Locked> locked(DebPackage pkg) {
        Path entry = debs.resolve(pkg.fileName() + ".locked");
        Path sum = debs.resolve(pkg.fileName() + ".sha256");
        try {
            if (!Files.isRegularFile(entry, java.nio.file.LinkOption.NOFOLLOW_LINKS)
                    || !Files.isRegularFile(sum, java.nio.file.LinkOption.NOFOLLOW_LINKS)) {
                return java.util.Optional.empty();
            }
            java.util.Optional<Locked> l = LockFile.parse(Files.readString(entry), entry.toString()).packages()
                    .stream().findFirst();
            String sha = Files.readString(sum, java.nio.charset.StandardCharsets.US_ASCII).strip();
            return l.filter(x -> x.sha256().equals(sha) && x.name().equals(pkg.name())
                    && x.version().equals(pkg.version()) && x.architecture().equals(pkg.architecture()));
        } catch (IOException | RuntimeException e) {
            return java.util.Optional.empty(); // not known: the image's lock says so, naming the part
        }
    }

    /** The SHA-256 the cached {@code .deb} of {@code pkg} was checked against when it came, if it is cached. */
    java.util.Optional<String> recordedSha256(DebPackage pkg) {
        Path sum = debs.resolve(pkg.fileName() + ".sha256");
        try {
            return Files.isRegularFile(sum, java.nio.file.LinkOption.NOFOLLOW_LINKS)
                    ? java.util.Optional.of(Files.readString(sum, java.nio.charset.StandardCharsets.US_ASCII).strip())
                    : java.util.Optional.empty();
        } catch (IOException e) {
            return java.util.Optional.empty();
        }
    }

    /** The version of {@code name} that would be installed now. */
    AptRecord candidate(String name) {
        if (archive != null) {
            return archive().candidate(name);
        }
        return AptRecord.parse(withUpdateOnFailure("look up the package " + name,
                () -> HostCommand.of("apt-cache", "show", "--no-all-versions", name).logTo(log)
                        .run(KosaException.Kind.IMAGE, "apt-cache show " + name)));
    }

    /**
     * The cached {@code .deb} of {@code pkg}, its bytes hashed again and matching the SHA-256 it was checked
     * against when it came; downloaded (and checked) first when it is not cached, or no longer matches.
     */
    Path download(DebPackage pkg) {
        Path deb = debs.resolve(pkg.fileName());
        Path sum = debs.resolve(pkg.fileName() + ".sha256");
        Path entry = debs.resolve(pkg.fileName() + ".locked");
        try {
            if (Files.exists(deb, java.nio.file.LinkOption.NOFOLLOW_LINKS)) {
                String damage = damage(deb, sum);
                Locked pin = pinned.get(pkg);
                if (damage == null && pin != null && !pin.sha256().equals(Files.readString(sum).strip())) {
                    damage = "is not the file the lock names (its SHA-256 is not " + pin.sha256() + ")";
                }
                if (damage == null) {
                    return deb;
                }
                note.accept("the cached " + pkg.fileName() + " " + damage + ": deleted, downloading it again");
                Files.delete(deb);
            }
            Files.deleteIfExists(sum);
            Files.deleteIfExists(entry);
            Files.createDirectories(debs);
        } catch (IOException e) {
            throw new KosaException(KosaException.Kind.HOST, "cannot check or clear " + deb + ": " + e.getMessage(),
                    "check that " + debs + " is writable, or delete " + deb, e);
        }
        if (archive != null) {
            Locked pin = pinned.get(pkg);
            ArchivePackages.Fetched checked = pin != null ? archive().download(pin) : archive().download(pkg);
            copyChecked(checked.file(), checked.sha256(), deb, sum);
            try {
                dev.kosa8.host.AtomicFile.write(entry, new LockFile(java.util.List.of(), java.util.List.of(
                        checked.entry())).text().getBytes(java.nio.charset.StandardCharsets.UTF_8));
            } catch (IOException e) {
                note.accept("cannot record where " + pkg.fileName() + " came from (" + e.getMessage()
                        + "): the image's lock will not name it");
            }
            return deb;
        }
        withUpdateOnFailure("download " + pkg.aptSelector(),
                () -> HostCommand.of("apt-get", "download", pkg.aptSelector()).in(debs).logTo(log)
                        .run(KosaException.Kind.IMAGE, "apt-get download " + pkg.aptSelector()));
        if (!Files.isRegularFile(deb)) {
            throw new KosaException(KosaException.Kind.IMAGE,
                    "apt-get download " + pkg.aptSelector() + " did not write " + deb + " (see " + log + ")",
                    "check the log; the package name or version may have changed");
        }
        try {
            // apt-get download checked it against apt's signed lists: what it wrote is what later uses must find
            dev.kosa8.host.AtomicFile.write(sum, (dev.kosa8.image.debian.DebCache.hash(deb) + "\n")
                    .getBytes(java.nio.charset.StandardCharsets.US_ASCII));
        } catch (IOException e) {
            throw new KosaException(KosaException.Kind.HOST, "cannot write " + sum + ": " + e.getMessage(),
                    "check that " + debs + " is writable", e);
        }
        return deb;
    }

    /**
     * Copies the archive client's checked {@code from} to {@code deb} through a {@code .fetch-*.deb} beside it,
     * hashed again on the way in, and records the hash in {@code sum}; on any failure the temporary file is gone.
     */
    static void copyChecked(Path from, String sha256, Path deb, Path sum) {
        Path tmp = null;
        try {
            tmp = Files.createTempFile(deb.getParent(), ".fetch-", ".deb");
            Files.copy(from, tmp, java.nio.file.StandardCopyOption.REPLACE_EXISTING);
            String got = dev.kosa8.image.debian.DebCache.hash(tmp);
            if (!got.equals(sha256)) {
                throw new KosaException(KosaException.Kind.IMAGE, "the copy of " + deb.getFileName()
                        + " from the archive client's cache has the SHA-256 " + got + ", not the signed " + sha256,
                        "run `kosa8 image build` again");
            }
            dev.kosa8.host.AtomicFile.write(sum, (got + "\n").getBytes(java.nio.charset.StandardCharsets.US_ASCII));
            Files.move(tmp, deb, java.nio.file.StandardCopyOption.ATOMIC_MOVE);
        } catch (IOException e) {
            throw new KosaException(KosaException.Kind.HOST, "cannot write " + deb + ": " + e.getMessage(),
                    "check that " + deb.getParent() + " is writable", e);
        } finally {
            if (tmp != null) {
                try {
                    // gone after the move; on every failure (copy, hash, mismatch, record) removed here
                    Files.deleteIfExists(tmp);
                } catch (IOException ignored) {
                    // a .fetch- file never read by name: the next build's own temporary file does not collide
                }
            }
        }
    }

    /** Null when {@code deb} is a regular file whose SHA-256 is the one {@code sum} records, else what is wrong. */
    private static String damage(Path deb, Path sum) throws IOException {
        if (!Files.isRegularFile(deb, java.nio.file.LinkOption.NOFOLLOW_LINKS)) {
            return "is not a regular file";
        }
        if (!Files.isRegularFile(sum, java.nio.file.LinkOption.NOFOLLOW_LINKS)) {
            return "has no record of the SHA-256 it was checked against (an older kosa8 kept it)";
        }
        String want = Files.readString(sum, java.nio.charset.StandardCharsets.US_ASCII).strip();
        String got = dev.kosa8.image.debian.DebCache.hash(deb);
        return got.equals(want) ? null : "changed on disk since it was checked (" + Files.size(deb)
                + " bytes with the SHA-256 " + got + ", it was checked as " + want + ")";
    }

    /** Unpacks {@code deb} into {@code dir} ({@code dpkg-deb -x}, else in Java: no scripts run, nothing installed). */
    void unpack(Path deb, Path dir) {
        if (dev.kosa8.host.HostTools.which("dpkg-deb") == null) {
            DebUnpack.extract(deb, dir);
            return;
        }
        HostCommand.of("dpkg-deb", "-x", deb.toString(), dir.toString()).logTo(log)
                .run(KosaException.Kind.IMAGE, "unpack " + deb.getFileName());
    }

    /**
     * Where {@code path} is in a package unpacked into {@code dir}: as named, else under {@code usr/} (Debian 13's
     * packages have merged /usr: its busybox is {@code usr/bin/busybox}, its kernel's modules {@code usr/lib/modules}).
     */
    static Path unpacked(Path dir, String path) {
        Path asNamed = dir.resolve(path);
        return Files.exists(asNamed) ? asNamed : dir.resolve("usr").resolve(path);
    }

    private String withUpdateOnFailure(String what, java.util.function.Supplier<String> action) {
        try {
            return action.get();
        } catch (KosaException first) {
            if (updated) {
                throw first;
            }
            if (!root) {
                throw new KosaException(KosaException.Kind.IMAGE,
                        "could not " + what + "; apt's package lists may be missing or out of date: "
                                + first.getMessage(),
                        "run `sudo apt-get update`, then run the command again", first);
            }
            updated = true;
            HostCommand.of("apt-get", "update").logTo(log).run(KosaException.Kind.IMAGE, "apt-get update");
            return action.get();
        }
    }
}
