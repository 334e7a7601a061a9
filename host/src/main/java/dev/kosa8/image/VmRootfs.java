package dev.kosa8.image;

import dev.kosa8.host.FileTrees;
import dev.kosa8.host.HostCommand;
import dev.kosa8.host.KosaException;
import dev.kosa8.image.debian.LockFile;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.Consumer;

/**
 * The root filesystem built inside a guest, the builder VM (docs/image.md, "The builder VM"): the host
 * resolves and fetches the packages itself (kosa8's archive client: signed indices, every file's SHA-256),
 * makes the Java runtime as for the host build, and hands all of it in on read-only disks, with the builder's
 * own unconfigured Debian unpacked here into one tar ({@link BuilderRootTar}); the guest builds a minimal
 * Debian with mmdebstrap in its own RAM (as root there), runs the package install's
 * second stage, adds kosa8's files, makes the image's Java trust store on the image's own runtime, and writes
 * the tree with {@code mke2fs -d} onto the image's raw disk; it hands back the CA bundle and dpkg's status.
 * The host needs QEMU, {@code qemu-img} and Java: no mmdebstrap, apt, dpkg, mke2fs, nor root, and its file
 * system never holds a root-owned file of the image.
 */
final class VmRootfs {
    /** The packages of the builder's own unconfigured Debian beside minbase: what runs the build. */
    static final List<String> BUILDER_PACKAGES = List.of("mmdebstrap", "e2fsprogs", "mount", "tar");
    static final String BUNDLE = "etc/ssl/certs/ca-certificates.crt";
    static final String DPKG_STATUS = "var/lib/dpkg/status";

    private VmRootfs() {
    }

    /** Builds {@link RootfsPart#FILE} in {@code dir}; returns what became of the lock, as {@link RootfsPart} does. */
    static String make(Recipe recipe, JavaRuntime java, ArchivePackages archive, Optional<LockedBuild> locked,
                       BuilderRun.Kit kit, Path log, StepReporter steps, Consumer<String> progress, Path dir) throws IOException {
        steps.begin("packages for the builder VM (kosa8's archive client)", Duration.ofSeconds(10));
        LockFile lock = locked.map(LockedBuild::rootfs)
                .orElseGet(() -> archive.resolveRootfs(recipe.includes(), recipe.suite()));
        List<Path> files = archive.download(lock);
        LockFile builder = archive.resolveBuilder(BUILDER_PACKAGES, recipe.suite());
        List<Path> builderFiles = archive.download(builder);

        Path in = dir.resolve("in");
        Path repo = in.resolve("repo");
        FlatRepo.write(repo, recipe.suite(), lock.packages(), files);
        Path root = in.resolve("root");
        if (recipe.javaPackage() == null) {
            steps.begin("Java runtime (jlink java.base, CDS archive)", Duration.ofSeconds(10));
            RootfsPart.javaRuntime(java, root.resolve("opt/kosa8/jre"), log);
        }
        Files.createDirectories(root.resolve("etc"));
        Files.writeString(root.resolve("etc/hostname"), RootfsPart.HOSTNAME + "\n");
        Files.writeString(root.resolve("etc/hosts"), RootfsPart.HOSTS);
        Files.createDirectories(root.resolve("workspace"));
        for (Class<?> c : List.of(JavaTrustStore.class, GuestTrustStore.class)) {
            Path f = in.resolve("classes").resolve(c.getName().replace('.', '/') + ".class");
            Files.createDirectories(f.getParent());
            try (InputStream s = c.getResourceAsStream(c.getSimpleName() + ".class")) {
                if (s == null) {
                    throw new KosaException(KosaException.Kind.INTERNAL, "this kosa8 build lacks " + f.getFileName(),
                            "build kosa8 with `mvn package` from the project root");
                }
                Files.write(f, s.readAllBytes());
            }
        }
        // every package of the lock by name, as the host's build from a lock does: asked for the recipe's includes
        // alone, mmdebstrap took minbase's apt from a flat repository without the archive's priorities (whose
        // control files are all it has), so apt and its libraries were missing (BuilderVmIT, 2026-12-07)
        List<String> includes = lock.packages().stream().map(p -> p.name()).toList();
        Files.writeString(in.resolve("build.sh"), buildScript(recipe, lock, includes));
        Path raw = dir.resolve("raw.img");
        BuilderRun.sparse(raw, bytes(recipe.diskSize()));

        steps.begin("in the builder VM: mmdebstrap " + recipe.suite() + ", mke2fs", Duration.ofMinutes(4));
        Map<String, byte[]> handed = BuilderRun.run(kit, builderFiles, in, raw, dir, log, progress,
                Duration.ofMinutes(45));
        byte[] bundle = handed.get(BUNDLE);
        byte[] status = handed.get(DPKG_STATUS);
        if (bundle == null || status == null) {
            throw new KosaException(KosaException.Kind.IMAGE, "the builder VM did not hand back " + BUNDLE + " and "
                    + DPKG_STATUS + " (it handed back " + handed.keySet() + ")", "see the build log " + log);
        }
        Files.write(dir.resolve(Image.SYSTEM_CERTIFICATES), bundle);
        Path tree = dir.resolve("handed-back");
        Files.createDirectories(tree.resolve(DPKG_STATUS).getParent());
        Files.write(tree.resolve(DPKG_STATUS), status);
        String fate = RootfsPart.lockFate(Optional.of(lock), locked, tree, dir);
        FileTrees.delete(tree);

        steps.begin("qcow2", Duration.ofSeconds(10));
        HostCommand.of("qemu-img", "convert", "-f", "raw", "-O", "qcow2", raw.toString(), dir.resolve(RootfsPart.FILE).toString())
                .logTo(log).run(KosaException.Kind.IMAGE, "root filesystem: qemu-img convert");
        Files.deleteIfExists(raw);
        return fate;
    }

    /**
     * The script the builder runs in its unconfigured Debian (chrooted, as root): mmdebstrap from the flat
     * repository asking for {@code includes}, as {@link RootfsPart#mmdebstrapFromRepo} runs it on a host, then kosa8's files, the
     * trust store, the hand-back and the ext4 file system. Every word is quoted for {@code sh}.
     */
    static String buildScript(Recipe recipe, LockFile lock, List<String> includes) {
        List<String> mmdebstrap = List.copyOf(RootfsPart.mmdebstrapFromRepo(recipe, includes, Path.of("/in/repo"),
                Path.of("/target")));
        String store = JavaTrustStore.GUEST_PATH;
        return "# written by kosa8 (VmRootfs): the root filesystem's build inside the builder VM\n"
                + "command -v mmdebstrap > /dev/null || { echo 'the builder has no mmdebstrap'; exit 1; }\n"
                + "echo 'kosa8-builder: mmdebstrap " + recipe.suite() + ", " + lock.packages().size() + " packages'\n"
                + quote(mmdebstrap) + "\n"
                + "echo 'kosa8-builder: kosa8'\"'\"'s files and the Java trust store'\n"
                // over what mmdebstrap made, whose folders (/, /etc, /opt) keep their owner, mode and time
                + "tar -C /in/root -cf - . | tar -C /target --no-overwrite-dir -xpf -\n"
                + packagedJava(recipe)
                + "ln -sfn " + quote(List.of(store)) + " /target/opt/kosa8/jre/lib/security/cacerts\n"
                + trustStore(recipe, store)
                + "echo 'kosa8-builder: mke2fs -t ext4 -d'\n"
                + "mke2fs -q -t ext4 -F -L kosa8-root -d /target \"$KOSA8_OUT\"\n"
                // last: a hand-back means every step before it succeeded
                + "tar -cf \"$KOSA8_BACK\" -C /target " + BUNDLE + " " + DPKG_STATUS + "\n"
                + "sync\n";
    }

    /**
     * The lines making the image's Java trust store at {@code store} from its CA bundle, run by the image's own
     * runtime. A jlink'ed runtime is self-contained and runs from the tree; Debian's package reaches outside its
     * folder by absolute links (its {@code conf} is {@code /etc/java-25-openjdk}), so it runs in the tree as its
     * root ({@code chroot}, with {@code /proc} for the JVM, unmounted again before {@code mke2fs} reads the tree).
     */
    static String trustStore(Recipe recipe, String store) {
        String main = GuestTrustStore.class.getName();
        if (recipe.javaPackage() == null) {
            return "/target/opt/kosa8/jre/bin/java -Xshare:off -cp /in/classes " + main + " /target/" + BUNDLE
                    + " /target" + store + "\n";
        }
        return "mkdir -p /target/tmp/kosa8-trust && cp -R /in/classes/. /target/tmp/kosa8-trust/\n"
                + "mount -t proc proc /target/proc\n"
                + "status=0\n"
                + "chroot /target /opt/kosa8/jre/bin/java -Xshare:off -XX:-UsePerfData -cp /tmp/kosa8-trust " + main
                + " /" + BUNDLE
                + " " + store + " || status=$?\n"
                + "umount /target/proc\n"
                + "rm -rf /target/tmp/kosa8-trust\n"
                + "[ \"$status\" = 0 ] || { echo \"the trust store's maker failed ($status)\"; exit 1; }\n";
    }

    /**
     * For a recipe whose Java is a Debian package ({@link Recipe#javaPackage}): {@code /opt/kosa8/jre}, where the
     * agent's launcher looks, as a relative link to where the package put it (relative, so it resolves in the
     * tree being built as in the guest); "" for a jlink'ed runtime, which the input already holds there.
     */
    static String packagedJava(Recipe recipe) {
        if (recipe.javaPackage() == null) {
            return "";
        }
        String home = recipe.packagedJavaHome();
        return "[ -x " + quote(List.of("/target" + home + "/bin/java")) + " ] || { echo "
                + quote(List.of(recipe.javaPackage() + " left no " + home + "/bin/java")) + "; exit 1; }\n"
                + "mkdir -p /target/opt/kosa8\n"
                + "ln -sfn " + quote(List.of("../.." + home)) + " /target/opt/kosa8/jre\n";
    }

    /** The words for {@code sh}, each in single quotes. */
    static String quote(List<String> words) {
        StringBuilder s = new StringBuilder();
        for (String w : words) {
            if (!s.isEmpty()) {
                s.append(' ');
            }
            s.append('\'').append(w.replace("'", "'\"'\"'")).append('\'');
        }
        return s.toString();
    }

    /** A size as mke2fs reads it ({@code 4G}, {@code 512M}; no suffix: KiB), in bytes. */
    static long bytes(String size) {
        java.util.regex.Matcher m = java.util.regex.Pattern.compile("([0-9]{1,12})([KMGT]?)").matcher(size);
        if (!m.matches()) {
            throw new IllegalArgumentException("not a disk size mke2fs reads: \"" + size + "\" (say 4G or 512M)");
        }
        long n = Long.parseLong(m.group(1));
        return switch (m.group(2)) {
            case "M" -> n << 20;
            case "G" -> n << 30;
            case "T" -> n << 40;
            default -> n << 10;
        };
    }
}
