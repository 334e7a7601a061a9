package dev.kosa8.image;

import dev.kosa8.host.HostCommand;
import dev.kosa8.host.KosaException;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Builds {@code kosa8_ws9p.ko}, the guest kernel's own 9p transport to the
 * workspace's port (its source, {@code kmod/kosa8_ws9p.c} beside this class,
 * says what it does), against the kernel package's own headers.
 *
 * <p>Why kosa8 builds a kernel module at all: without it every workspace
 * request crosses a process in the guest (the agent's relay: the kernel's
 * {@code trans=fd} cannot write a virtio-serial port itself), which under TCG
 * cost the metadata rows two thirds of their time (bench/history/workspace.md,
 * run 8). Nothing is installed on the host: the
 * three header packages ({@code linux-headers-ABI}, its {@code -common},
 * {@code linux-kbuild-X.Y}, the versions of the kernel package) are unpacked
 * into a scratch folder and the module built there with kbuild, by the C
 * compiler the kernel was built with ({@code CONFIG_CC_VERSION_TEXT}: gcc-12
 * for Debian 12's). A host without that compiler or {@code make} has it built
 * in the builder VM ({@link VmModule}), unless {@code KOSA8_IMAGE_BUILDER=host}:
 * then the image comes without it, told how to get it, and its sandboxes use
 * the relay, and {@link #toolchain} is part of the kernel part's hash, so
 * installing the compiler later rebuilds that part.
 */
final class WorkspaceModule {
    static final String NAME = "kosa8_ws9p";
    private static final String SOURCE = "kmod/" + NAME + ".c";
    private static final Pattern GCC = Pattern.compile("gcc(-[0-9]+)?");
    private static final Pattern CC_TEXT = Pattern.compile("(?m)^CONFIG_CC_VERSION_TEXT=\"([^\" ]+)");

    private WorkspaceModule() {
    }

    /** The module's C source, as shipped in kosa8's jar. */
    static byte[] source() {
        try (InputStream in = WorkspaceModule.class.getResourceAsStream(SOURCE)) {
            if (in == null) {
                throw new IllegalStateException("kosa8's jar lacks " + SOURCE);
            }
            return in.readAllBytes();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /**
     * What the host offers to build the module with: {@code make} and the
     * {@code gcc}s on the PATH, by name. Part of the kernel part's hash.
     */
    static String toolchain() {
        TreeSet<String> found = new TreeSet<>();
        for (String dir : System.getenv().getOrDefault("PATH", "").split(":")) {
            if (dir.isEmpty()) {
                continue;
            }
            try (var s = Files.list(Path.of(dir))) {
                s.map(p -> p.getFileName().toString())
                        .filter(n -> n.equals("make") || GCC.matcher(n).matches())
                        .filter(n -> Files.isExecutable(Path.of(dir, n)))
                        .forEach(found::add);
            } catch (IOException | RuntimeException e) {
                // a PATH entry that is not a readable folder offers nothing
            }
        }
        return String.join(" ", found);
    }

    /** The three packages kbuild needs for {@code kernel} ({@code linux-image-ABI}). */
    static List<DebPackage> headerPackages(DebPackage kernel) {
        String prefix = "linux-image-";
        if (!kernel.name().startsWith(prefix) || kernel.name().lastIndexOf('-') <= prefix.length()) {
            throw new IllegalArgumentException("not a kernel image package: " + kernel.name());
        }
        String abi = kernel.name().substring(prefix.length());               // 6.1.0-57-amd64
        String common = abi.substring(0, abi.lastIndexOf('-'));            // 6.1.0-57
        Matcher mm = Pattern.compile("^([0-9]+\\.[0-9]+)").matcher(abi);
        if (!mm.find()) {
            throw new IllegalArgumentException("no kernel version in " + kernel.name());
        }
        return List.of(new DebPackage("linux-headers-" + abi, kernel.version(), kernel.architecture()),
                new DebPackage("linux-headers-" + common + "-common", kernel.version(), "all"),
                new DebPackage("linux-kbuild-" + mm.group(1), kernel.version(), kernel.architecture()));
    }

    /** The compiler named by a kernel's {@code .config}, e.g. {@code gcc-12}. */
    static Optional<String> compiler(String config) {
        Matcher m = CC_TEXT.matcher(config);
        return m.find() ? Optional.of(m.group(1)) : Optional.empty();
    }

    /**
     * Builds the module for {@code kernel} into {@code ko}; on the way, a
     * failure says why, and what to install, without failing the image.
     *
     * @return empty when built, else the reason it was not
     */
    static Optional<String> build(DebPackage kernel, DebianPackages apt, Path scratch, Path log, Path ko) {
        return build(kernel, apt, scratch, log, ko, (cc, missing) -> Optional.of(missing));
    }

    /**
     * As above; where the host lacks the compiler or {@code make}, {@code elsewhere} is asked instead (the builder
     * VM, {@link VmModule}), given the compiler and the reason the host could not.
     */
    static Optional<String> build(DebPackage kernel, DebianPackages apt, Path scratch, Path log, Path ko,
                                  java.util.function.BiFunction<String, String, Optional<String>> elsewhere) {
        try {
            Path root = Files.createDirectories(scratch.resolve("headers"));
            List<DebPackage> packages = headerPackages(kernel);
            for (DebPackage p : packages) {
                apt.unpack(apt.download(p), root);
            }
            Path headers = root.resolve("usr/src").resolve(packages.getFirst().name());
            Path commonDir = root.resolve("usr/src").resolve(packages.get(1).name());
            // its Makefile includes the -common one by absolute path: point it at the unpacked copy
            Files.writeString(headers.resolve("Makefile"),
                    "include " + commonDir.toAbsolutePath() + "/Makefile\n", StandardCharsets.UTF_8);
            String cc = compiler(Files.readString(headers.resolve(".config"), StandardCharsets.UTF_8))
                    .orElse("gcc");
            List<String> missing = new ArrayList<>();
            List<String> offered = List.of(toolchain().split(" "));
            for (String tool : List.of(cc, "make")) {
                if (!offered.contains(tool)) {
                    missing.add(tool);
                }
            }
            if (!missing.isEmpty()) {
                return elsewhere.apply(cc, "the kernel was built with " + cc + "; this host lacks " + String.join(" and ",
                        missing) + " (install them, e.g. `sudo apt-get install " + String.join(" ", missing)
                        + "`, then run `kosa8 image build`)");
            }
            Path src = Files.createDirectories(scratch.resolve("src"));
            Files.write(src.resolve(NAME + ".c"), source());
            Files.writeString(src.resolve("Makefile"), "obj-m := " + NAME + ".o\n", StandardCharsets.UTF_8);
            HostCommand.of("make", "-C", headers.toAbsolutePath().toString(), "M=" + src.toAbsolutePath(),
                            "CC=" + cc, "modules")
                    .logTo(log).timeout(Duration.ofMinutes(5)).run(KosaException.Kind.IMAGE, "build " + NAME);
            Path built = src.resolve(NAME + ".ko");
            try {
                // debug sections are 95% of it and the guest never reads them
                HostCommand.of("strip", "--strip-debug", built.toString()).logTo(log)
                        .timeout(Duration.ofMinutes(1)).run(KosaException.Kind.IMAGE, "strip " + NAME);
            } catch (KosaException e) {
                // unstripped works the same
            }
            Files.copy(built, ko);
            return Optional.empty();
        } catch (IOException | RuntimeException e) {
            return Optional.of("building it failed: " + e.getMessage() + " (the log says more: " + log + ")");
        }
    }
}
