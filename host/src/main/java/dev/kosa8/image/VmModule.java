package dev.kosa8.image;


import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.Consumer;

/**
 * {@code kosa8_ws9p.ko} built in the builder VM ({@link BuilderRun}) where the host lacks the kernel's compiler or
 * {@code make}: the builder's Debian is minbase with that compiler, make and what the kernel's three header
 * packages depend on, and those packages (the kernel's own version) unpacked at their own paths, so kbuild runs exactly as {@link WorkspaceModule} runs it on a host; the
 * module comes back on the hand-back disk. Like the host build it never fails the image: a failure is the reason
 * sandboxes use the relay.
 */
final class VmModule {
    private VmModule() {
    }

    /**
     * The module of the kernel part being made in {@code dir}: built on the host where it has the compiler and
     * make ({@link WorkspaceModule}), else, when {@code mayUseVm} and the archive client is on, in the builder VM.
     *
     * @return empty when built, else why not
     */
    static Optional<String> buildForPart(DebPackage kernel, DebianPackages apt, boolean mayUseVm, String suite,
                                         java.util.function.Supplier<BuilderRun.Kit> kit, Path dir, Path log,
                                         Consumer<String> progress) throws IOException {
        Path scratch = dir.resolve("ws9p-build");
        Path vmWork = dir.resolve("ws9p-vm");
        Path ko = dir.resolve(KernelPart.MODULES).resolve(WorkspaceModule.NAME + ".ko");
        try {
            return WorkspaceModule.build(kernel, apt, scratch, log, ko, (cc, why) -> {
                if (!mayUseVm || apt.archiveClient().isEmpty()) {
                    return Optional.of(why);
                }
                progress.accept("this host lacks " + cc + " or make: building the workspace's kernel module in the "
                        + "builder VM");
                return build(kernel, apt, apt.archiveClient().get(), suite, kit.get(), cc, vmWork, log, progress, ko)
                        .map(r -> why + "; " + r);
            });
        } finally {
            dev.kosa8.host.FileTrees.delete(scratch);
            dev.kosa8.host.FileTrees.delete(vmWork);
        }
    }

    /** Builds the module into {@code ko}; empty when built, else why not. */
    static Optional<String> build(DebPackage kernel, DebianPackages apt, ArchivePackages archive, String suite,
                                  BuilderRun.Kit kit, String cc, Path work, Path log, Consumer<String> progress,
                                  Path ko) {
        try {
            Files.createDirectories(work);
            // the headers are the kernel's exact version, taken by name (a pinned kernel's may have left the index)
            List<DebPackage> headers = WorkspaceModule.headerPackages(kernel);
            List<Path> debs = new ArrayList<>(archive.download(archive.resolveBuilder(tools(cc), suite)));
            for (DebPackage p : headers) {
                debs.add(apt.download(p));
            }
            Path in = work.resolve("in");
            Path src = Files.createDirectories(in.resolve("src"));
            Files.write(src.resolve(WorkspaceModule.NAME + ".c"), WorkspaceModule.source());
            Files.writeString(src.resolve("Makefile"), "obj-m := " + WorkspaceModule.NAME + ".o\n",
                    StandardCharsets.UTF_8);
            Files.writeString(in.resolve("build.sh"), buildScript(headers.getFirst().name(), cc));
            Map<String, byte[]> back = BuilderRun.run(kit, debs, in, null, work, log, progress, Duration.ofMinutes(20));
            byte[] module = back.get(WorkspaceModule.NAME + ".ko");
            if (module == null) {
                return Optional.of("the builder VM handed back no " + WorkspaceModule.NAME + ".ko (the log says more: "
                        + log + ")");
            }
            Files.write(ko, module);
            return Optional.empty();
        } catch (IOException | RuntimeException e) {
            return Optional.of("building it in the builder VM failed: " + e.getMessage() + " (the log says more: "
                    + log + ")");
        }
    }

    /**
     * The builder's packages beside minbase: the compiler, make, and what kbuild's own programs need that the
     * header packages' dependencies would bring (objtool links libelf1; the rest of their dependencies, such as
     * libssl3 for sign-file, only serve what an external module's build does not run).
     */
    static List<String> tools(String cc) {
        return List.of(cc, "make", "libelf1");
    }

    /**
     * What the kernel part's hash takes for the module where the builder VM may build it: the builder's recipe
     * ({@code builder.sh}, this build script, the packages), so a kosa8 whose recipe changed builds it again
     * rather than keep a part whose module a faulty recipe failed to build.
     */
    static String recipe() {
        return "builder VM " + ContentHash.of("vm-module").add("builder.sh", GuestFiles.resource("builder.sh"))
                .add("script", buildScript("HEADERS", "CC").getBytes(StandardCharsets.UTF_8))
                .add("tools", String.join(",", tools("CC")).getBytes(StandardCharsets.UTF_8)).hex();
    }

    /** What the builder runs: kbuild against the headers at their own path, then the module stripped and handed back. */
    static String buildScript(String headersPackage, String cc) {
        String name = WorkspaceModule.NAME;
        return "# written by kosa8 (VmModule): the workspace's kernel module, built inside the builder VM\n"
                + "echo 'kosa8-builder: make " + name + ".ko with " + cc + "'\n"
                // kbuild runs awk, which only mawk's (unrun) postinst would link
                + "command -v awk > /dev/null || ln -s mawk /usr/bin/awk\n"
                + VmRootfs.quote(List.of("make", "-C", "/usr/src/" + headersPackage, "M=/in/src", "CC=" + cc,
                        "modules")) + "\n"
                + "strip --strip-debug /in/src/" + name + ".ko\n"
                + "tar -cf \"$KOSA8_BACK\" -C /in/src " + name + ".ko\n"
                + "sync\n";
    }
}
