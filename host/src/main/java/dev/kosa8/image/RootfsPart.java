package dev.kosa8.image;

import dev.kosa8.host.FileTrees;
import dev.kosa8.host.HostCommand;
import dev.kosa8.host.KosaException;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import dev.kosa8.image.debian.LockFile;
import java.util.List;
import java.util.Optional;

/**
 * Makes the root filesystem: a minimal Debian from {@code mmdebstrap}, a
 * jlink'ed Java runtime at {@code /opt/kosa8/jre}, written into an ext4 disk
 * image and converted to qcow2. Beside it goes a copy of the image's CA
 * bundle ({@link Image#SYSTEM_CERTIFICATES}), from which the daemon makes
 * each sandbox's Java trust store (the bundle plus the sandbox's CA); the
 * runtime's {@code lib/security/cacerts} links to that store's path, as
 * Debian's JDKs do, so Java programs trust what curl trusts. mmdebstrap
 * needs root here (it must create files owned by other users and device
 * nodes); {@link ImageBuilder} checks that.
 * Downloaded packages are kept in a cache folder and reused by the next build.
 */
final class RootfsPart {
    /** Bump when the way this part is made changes, so cached copies are rebuilt. */
    static final String VERSION = "3";
    static final String FILE = "rootfs.qcow2";
    static final String HOSTNAME = "sandbox";
    static final String HOSTS = """
            127.0.0.1\tlocalhost
            127.0.1.1\tsandbox
            ::1\tlocalhost ip6-localhost ip6-loopback
            """;

    /**
     * The agent launcher's options that decide whether the CDS archive's full
     * module graph can be used: jlink's {@code --generate-cds-archive} dumps
     * without {@code --enable-native-access}, and the JVM then disables
     * "optimized module handling". So the archive is dumped with these
     * (kosa8-agent.sh must pass the same).
     */
    static final List<String> CDS_DUMP_OPTIONS = List.of("-Xmx64m", "--enable-native-access=ALL-UNNAMED");

    private RootfsPart() {
    }

    static void make(Recipe recipe, JavaRuntime java, Path aptCache, Path log, StepReporter steps, Path dir)
            throws IOException {
        make(recipe, java, aptCache, log, steps, dir, Optional.empty());
    }

    /**
     * As above; with {@code archive}, the packages are first resolved and
     * fetched (checked) by kosa8's archive client into mmdebstrap's package
     * cache, and when the tree then holds exactly them, their lock is kept
     * as {@link RootfsLock#FILE}.
     *
     * @return what became of the lock: "kept", "differs: …", or "not made" (no archive client)
     */
    static String make(Recipe recipe, JavaRuntime java, Path aptCache, Path log, StepReporter steps, Path dir,
                       Optional<ArchivePackages> archive) throws IOException {
        return make(recipe, java, aptCache, log, steps, dir, archive, Optional.empty());
    }

    /**
     * As above; with {@code locked}, exactly the lock's packages are installed, from a repository of their
     * checked files alone ({@link FlatRepo}), and a tree that then holds anything else fails the build.
     */
    static String make(Recipe recipe, JavaRuntime java, Path aptCache, Path log, StepReporter steps, Path dir,
                       Optional<ArchivePackages> archive, Optional<LockedBuild> locked) throws IOException {
        Path tree = dir.resolve("tree");
        Path raw = dir.resolve("raw.img");

        steps.begin("mmdebstrap " + recipe.suite() + (locked.isPresent() ? " from the lock" : ""),
                Duration.ofSeconds(30));
        Files.createDirectories(aptCache);
        Optional<LockFile> lock;
        List<String> argv;
        Path repo = dir.resolve("repo");
        if (locked.isPresent()) {
            ArchivePackages a = archive.orElseThrow(() -> new KosaException(KosaException.Kind.USAGE,
                    "a build from a lock needs kosa8's own archive client", "unset KOSA8_DEBIAN_FETCH"));
            lock = Optional.of(locked.get().rootfs());
            FlatRepo.write(repo, recipe.suite(), lock.get().packages(), a.download(lock.get()));
            argv = mmdebstrapFromRepo(recipe, lock.get(), repo, tree);
        } else {
            lock = archive.map(a -> a.prefetchRootfs(recipe.includes(), recipe.suite(), aptCache));
            argv = mmdebstrap(recipe, aptCache, tree);
        }
        HostCommand.of(argv).logTo(log).timeout(Duration.ofMinutes(20))
                .run(KosaException.Kind.IMAGE, "root filesystem: mmdebstrap " + recipe.suite());
        FileTrees.delete(repo);
        String lockFate = lockFate(lock, locked, tree, dir);

        steps.begin("Java runtime (jlink java.base, CDS archive)", Duration.ofSeconds(10));
        Path jre = tree.resolve("opt/kosa8/jre");
        javaRuntime(java, jre, log);
        javaTrust(tree, jre, dir);
        Files.writeString(tree.resolve("etc/hostname"), HOSTNAME + "\n");
        Files.writeString(tree.resolve("etc/hosts"), HOSTS);
        Files.createDirectories(tree.resolve("workspace"));

        steps.begin("ext4 disk image " + recipe.diskSize() + " and qcow2", Duration.ofSeconds(15));
        HostCommand.of("mke2fs", "-q", "-t", "ext4", "-F", "-L", "kosa8-root", "-d", tree.toString(),
                        raw.toString(), recipe.diskSize())
                .logTo(log).run(KosaException.Kind.IMAGE, "root filesystem: mke2fs");
        FileTrees.delete(tree);
        HostCommand.of("qemu-img", "convert", "-f", "raw", "-O", "qcow2", raw.toString(), dir.resolve(FILE).toString())
                .logTo(log).run(KosaException.Kind.IMAGE, "root filesystem: qemu-img convert");
        Files.delete(raw);
        return lockFate;
    }

    /**
     * What became of the lock once {@code tree} (at least its dpkg status) is built: "kept" (written into
     * {@code dir}) when the tree holds exactly its packages, "differs: …" when not, "not made" without one; a
     * build from a lock whose tree differs fails.
     */
    static String lockFate(Optional<LockFile> lock, Optional<LockedBuild> locked, Path tree, Path dir)
            throws IOException {
        if (lock.isEmpty()) {
            return "not made";
        }
        List<String> diff = RootfsLock.differences(lock.get(), tree);
        if (diff.isEmpty()) {
            lock.get().write(dir.resolve(RootfsLock.FILE));
            return "kept";
        }
        if (locked.isPresent()) {
            throw new KosaException(KosaException.Kind.IMAGE, "the root filesystem built from "
                    + locked.get().source() + " does not hold exactly its packages: "
                    + String.join(", ", diff.subList(0, Math.min(diff.size(), 10))),
                    "see the build log; a lock an image build of this kosa8 wrote installs whole");
        }
        return "differs: " + String.join(", ", diff.subList(0, Math.min(diff.size(), 10)));
    }

    /** The guest's Java runtime at {@code jre}: jlink'ed {@code java.base} and its CDS archive, dumped here. */
    static void javaRuntime(JavaRuntime java, Path jre, Path log) throws IOException {
        Files.createDirectories(jre.getParent());
        // --strip-java-debug-attributes, not --strip-debug: that one also strips native symbols with binutils'
        // objcopy, which a host of QEMU and Java alone lacks; Temurin's libraries carry no debug sections, so the
        // two give the same bytes (compared on 25.0.3)
        HostCommand.of(java.jlink().toString(), "--add-modules", "java.base", "--strip-java-debug-attributes",
                        "--no-header-files", "--no-man-pages", "--output", jre.toString())
                .logTo(log).run(KosaException.Kind.IMAGE, "root filesystem: jlink");
        List<String> dump = new ArrayList<>(List.of(jre.resolve("bin/java").toString()));
        dump.addAll(CDS_DUMP_OPTIONS);
        dump.add("-Xshare:dump");
        HostCommand.of(dump).logTo(log).run(KosaException.Kind.IMAGE, "root filesystem: CDS archive");
    }

    /**
     * Keeps the image's CA bundle beside the disk, writes the Java trust store
     * of the bundle alone (what a sandbox without a network keeps), and points
     * the runtime's own store at it.
     */
    private static void javaTrust(Path tree, Path jre, Path dir) throws IOException {
        byte[] bundle = Files.readAllBytes(tree.resolve("etc/ssl/certs/ca-certificates.crt"));
        Files.write(dir.resolve(Image.SYSTEM_CERTIFICATES), bundle);
        Path store = tree.resolve(JavaTrustStore.GUEST_PATH.substring(1));
        Files.createDirectories(store.getParent());
        try {
            Files.write(store, JavaTrustStore.pkcs12(JavaTrustStore.readPem(bundle), null));
        } catch (java.security.cert.CertificateException e) {
            throw new KosaException(KosaException.Kind.IMAGE, "root filesystem: the image's CA bundle cannot be read: "
                    + e.getMessage(), "rebuild the image with `kosa8 image build`", e);
        }
        Path cacerts = jre.resolve("lib/security/cacerts");
        Files.deleteIfExists(cacerts);
        Files.createSymbolicLink(cacerts, Path.of(JavaTrustStore.GUEST_PATH));
    }

    /**
     * The mmdebstrap command line for a build from a lock: the one source is the repository of the lock's files,
     * and every locked package is asked for by name (apt has no other version of any of them to take).
     */
    static List<String> mmdebstrapFromRepo(Recipe recipe, LockFile lock, Path repo, Path tree) {
        return mmdebstrapFromRepo(recipe, lock.packages().stream().map(p -> p.name()).toList(), repo, tree);
    }

    /** As above, asking for {@code includes} by name (apt takes the rest from the repository, its only source). */
    static List<String> mmdebstrapFromRepo(Recipe recipe, List<String> includes, Path repo, Path tree) {
        List<String> argv = new ArrayList<>(List.of("mmdebstrap", "--mode=root", "--variant=minbase",
                "--include=" + String.join(",", includes),
                "--skip=download/empty", "--skip=essential/unlink",
                "--customize-hook=rm -f \"$1\"/var/cache/apt/archives/*.deb",
                // mmdebstrap writes its source (the build's own repository, gone after) into the image: the
                // guest's apt gets the suite's sources instead, as an image built the usual way has them
                "--customize-hook=printf '%s' '" + sources(recipe.suite()) + "' > \"$1\"/etc/apt/sources.list"));
        argv.add(recipe.suite());
        argv.add(tree.toString());
        argv.add(FlatRepo.sourceLine(repo));
        return argv;
    }

    /** The apt sources mmdebstrap writes into an image of {@code suite} it builds from Debian's own mirrors. */
    static String sources(String suite) {
        if (!suite.matches("[a-z]+")) {
            throw new IllegalArgumentException("bad suite " + suite);
        }
        return "deb http://deb.debian.org/debian " + suite + " main\n"
                + "deb http://deb.debian.org/debian " + suite + "-updates main\n"
                + "deb http://security.debian.org/debian-security " + suite + "-security main\n";
    }

    /** The mmdebstrap command line; the apt cache is synced in before and out after. */
    static List<String> mmdebstrap(Recipe recipe, Path aptCache, Path tree) {
        List<String> argv = new ArrayList<>(List.of("mmdebstrap", "--mode=root", "--variant=minbase",
                "--include=" + String.join(",", recipe.includes()),
                "--skip=download/empty", "--skip=essential/unlink",
                "--setup-hook=mkdir -p \"$1\"/var/cache/apt/archives/",
                "--setup-hook=sync-in " + aptCache + " /var/cache/apt/archives/",
                "--customize-hook=sync-out /var/cache/apt/archives " + aptCache,
                "--customize-hook=rm -f \"$1\"/var/cache/apt/archives/*.deb"));
        argv.add(recipe.suite());
        argv.add(tree.toString());
        return argv;
    }
}
