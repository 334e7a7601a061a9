package dev.kosa8.image;

import dev.kosa8.host.AtomicFile;
import dev.kosa8.host.BuildId;
import dev.kosa8.host.FileTrees;
import dev.kosa8.host.HostCommand;
import dev.kosa8.host.HostPaths;
import dev.kosa8.host.KosaException;
import dev.kosa8.vm.GuestArch;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.Supplier;

/**
 * Builds the guest image, or returns it from the cache. The kernel, the
 * initramfs and the root filesystem are each cached under the hash of their
 * own inputs (see {@link PartHashes}), so only what changed is rebuilt: a new
 * agent jar costs a new initramfs, about a second.
 *
 * <p>{@link #ensure()} runs on first use and keeps the Debian package versions
 * the current image was built from, so it needs no network once an image
 * exists; {@link #build()} ({@code kosa8 image build}) asks the Debian archive's
 * signed indices for the newest ({@link ArchivePackages}).
 */
public final class ImageBuilder {
    private static final DateTimeFormatter LOG_NAME =
            DateTimeFormatter.ofPattern("'build-'yyyyMMdd'T'HHmmss'Z.log'").withZone(ZoneOffset.UTC);

    private final HostPaths paths;
    /** Where this builder's architecture keeps its images ({@link ImageStore#directory}). */
    private final Path images;
    private final BuildProgress progress;
    private final Recipe recipe;
    private final Supplier<GuestFiles> guestFiles;
    private final JavaRuntime java;
    private final boolean root;
    // what an ensure found depends on, besides the current image's pinned packages: this build of kosa8 (its
    // guest files and recipe) and the Java it bundles; null where that is not known, and then no stamp
    private final String inputs;

    public ImageBuilder(HostPaths paths, BuildProgress progress) {
        this(paths, progress, GuestArch.host());
    }

    /** The builder of {@code arch}'s standard image ({@link Recipe#standard}), kept in that architecture's store. */
    public ImageBuilder(HostPaths paths, BuildProgress progress, GuestArch arch) {
        this(paths, progress, Recipe.standard(arch), GuestFiles::fromResources, JavaRuntime.current(), isRoot(),
                BuildId.current().equals("unknown") ? null : BuildId.current() + " " + JavaRuntime.current().version());
    }

    ImageBuilder(HostPaths paths, BuildProgress progress, Recipe recipe, Supplier<GuestFiles> guestFiles,
                 JavaRuntime java, boolean root) {
        this(paths, progress, recipe, guestFiles, java, root, null);
    }

    ImageBuilder(HostPaths paths, BuildProgress progress, Recipe recipe, Supplier<GuestFiles> guestFiles,
                 JavaRuntime java, boolean root, String inputs) {
        this.paths = paths;
        recipe.arch().requireRunnableHere();
        this.images = ImageStore.directory(paths, recipe.arch());
        this.progress = progress;
        this.recipe = recipe;
        this.guestFiles = guestFiles;
        this.java = java;
        this.root = root;
        this.inputs = inputs != null && inputs.contains("\n") ? null : inputs;
    }

    /**
     * Whether {@link #ensure()} would find the current image as it is, known
     * without hashing the guest files, taking the build lock or reading a
     * manifest: the last ensure ran with these very inputs (this build of
     * kosa8, its Java, and the host's compilers, which the kernel part's hash
     * has under {@code KOSA8_IMAGE_BUILDER=host}), found the image that is still current, and that image is still
     * complete. {@code run}, {@code create} and {@code start}
     * then pay the full ensure once per build instead of on every call: its
     * first call in a JVM costs 0.3-2 s here, most of it reading the manifest
     * (BENCHMARKS.md, "`kosa8 run -- true`").
     */
    public boolean ensuredBefore() {
        if (inputs == null) {
            return false;
        }
        ImageStore store = new ImageStore(images, recipe.arch());
        try {
            Path stamp = images.resolve(ENSURED);
            if (!Files.isRegularFile(stamp)) {
                return false;
            }
            Optional<String> current = store.currentId();
            return current.isPresent() && Files.readString(stamp).equals(stamp(current.get()))
                    && store.complete(current.get());
        } catch (IOException | KosaException e) {
            return false; // the full ensure says what is wrong
        }
    }

    /** The kernel part's "toolchain" of an architecture kosa8 does not build the workspace's module for. */
    private static final String NO_MODULE = "no kosa8_ws9p module for this architecture";

    /** The file naming the inputs of the last ensure and the image it found ({@link #ensuredBefore}). */
    static final String ENSURED = "ensured";

    /** The stamp of an ensure that found {@code imageId}: its inputs, the host's toolchain (the kernel part's hash has it), the image. */
    private String stamp(String imageId) {
        return inputs + "\n" + WorkspaceModule.toolchain() + "\n" + imageId + "\n";
    }

    /** The current image, building whatever part of it is missing or out of date. */
    public Image ensure() {
        return run(false);
    }

    /** Looks up the newest Debian packages and builds what they, or anything else, changed. */
    public Image build() {
        return run(true, Optional.empty());
    }

    /**
     * Builds the image of exactly the packages a whole image's lock names ({@code kosa8 image lock}): the same
     * kernel, busybox and root filesystem packages, each file checked against the lock's SHA-256 ({@link LockedBuild}).
     */
    public Image buildFromLock(Path lockFile) {
        return run(true, Optional.of(LockedBuild.read(lockFile, recipe)));
    }

    private Image run(boolean newestPackages) {
        return run(newestPackages, Optional.empty());
    }

    private Image run(boolean newestPackages, Optional<LockedBuild> locked) {
        Path log = images.resolve("logs").resolve(LOG_NAME.format(Instant.now()));
        try {
            Files.createDirectories(images);
            try (BuildLock lock = BuildLock.acquire(images,
                    () -> progress.note("another kosa8 is building the image; waiting for it"))) {
                return underLock(newestPackages, locked, images, log);
            }
        } catch (IOException e) {
            throw new KosaException(KosaException.Kind.IMAGE, "building the image failed: " + e
                    + (Files.exists(log) ? " (full log: " + log + ")" : ""),
                    "run `kosa8 image build` again; if it fails the same way, the log says why", e);
        } finally {
            handBackToSudoUser(images);
        }
    }

    private Image underLock(boolean newestPackages, Optional<LockedBuild> given, Path images, Path log)
            throws IOException {
        ImageStore store = new ImageStore(images, recipe.arch());
        PartStore parts = new PartStore(images);
        int stale = parts.removeStalePartials();
        GuestFiles guest = guestFiles.get();
        DebianPackages apt = new DebianPackages(paths.cache().resolve("debs"), log, root,
                () -> new ArchivePackages(paths.cache().resolve("debian"), recipe.suite(), recipe.arch().debianName(), System.getenv(),
                        line -> appendLog(log, line), progress::note), line -> {
                            appendLog(log, line);
                            progress.note(line);
                        });

        Optional<ImageManifest> pinned = newestPackages ? Optional.empty()
                : store.currentId().flatMap(store::manifest);
        // a current image built from a lock stays that lock's
        Optional<LockedBuild> locked = given.isEmpty() && pinned.isPresent() ? lockOf(pinned.get(), parts) : given;
        if (given.isPresent() || apt.usesArchiveClient()) { // a recorded lock under KOSA8_DEBIAN_FETCH=apt: by version
            locked.ifPresent(l -> l.pin(apt));
        }
        DebPackage kernelPackage = pinned.map(ImageManifest::kernelPackage).or(() -> locked.map(LockedBuild::kernel))
                .orElseGet(() -> apt.candidate(recipe.kernelMetapackage()).firstDependency());
        DebPackage busyboxPackage = pinned.map(ImageManifest::busyboxPackage)
                .or(() -> locked.map(LockedBuild::busybox))
                .orElseGet(() -> apt.candidate(recipe.busyboxPackage()).toPackage());
        // the module is built whatever the host has where the builder VM may build it (all but an explicit
        // KOSA8_IMAGE_BUILDER=host), so only then does the kernel part depend on the host's compilers (installing
        // one rebuilds it, with the module); otherwise on the builder's recipe, so a fixed recipe builds it again
        boolean moduleInVm = RootfsBuilder.mayBuildModule(System.getenv()) && apt.usesArchiveClient();
        String moduleTools = !recipe.buildsWorkspaceModule() ? NO_MODULE
                : moduleInVm ? VmModule.recipe() : WorkspaceModule.toolchain();
        PartHashes hashes = PartHashes.of(recipe, kernelPackage, busyboxPackage, guest, java.version(),
                moduleTools, locked.map(LockedBuild::digest).orElse(null));

        if (given.isPresent()) {
            // a lock from a file names what would run as root here: taken only as far as the archive signed it,
            // also when its image is here already (the parts are found by package version, not by the lock's hashes)
            apt.archiveClient().orElseThrow(() -> new KosaException(KosaException.Kind.USAGE, "a build from a lock "
                    + "needs kosa8's own archive client", "unset KOSA8_DEBIAN_FETCH"))
                    .verify(given.get().lock(), given.get().source());
        }
        Optional<Image> existing = store.find(hashes.imageId());
        if (existing.isPresent()) {
            if (!store.currentId().equals(Optional.of(existing.get().id()))) {
                store.setCurrent(existing.get().id());
            }
            noteEnsured(images, existing.get().id());
            return existing.get();
        }

        // another architecture's maintainer scripts run only in a guest of it: always the builder VM
        RootfsBuilder builder = recipe.arch().foreign() ? RootfsBuilder.VM : RootfsBuilder.choose(System.getenv(),
                root, t -> dev.kosa8.host.HostTools.which(t) != null);
        List<PartKind> missing = new ArrayList<>();
        for (PartKind kind : List.of(PartKind.KERNEL, PartKind.ROOTFS, PartKind.INITRAMFS)) {
            if (parts.has(kind, hashes.of(kind))) {
                progress.reused(kind.displayName(), hashes.of(kind).substring(0, 12));
            } else {
                missing.add(kind);
            }
        }
        if (missing.contains(PartKind.ROOTFS)) {
            builder.requireUsable(root, apt.archiveClient().isPresent(),
                    locked.map(LockedBuild::command).orElse("image build"));
        }
        appendLog(log, "kosa8 image build: image " + hashes.imageId() + (!missing.contains(PartKind.ROOTFS) ? ""
                : builder == RootfsBuilder.VM ? ", root filesystem built in the builder VM"
                : ", root filesystem built on the host") + ", kernel " + kernelPackage.fileName()
                + ", busybox " + busyboxPackage.fileName() + ", java " + java.version()
                + (stale > 0 ? ", removed " + stale + " unfinished part(s) of an earlier build" : ""));

        int rootfsSteps = builder == RootfsBuilder.VM ? 4 : 3;
        Steps steps = new Steps(missing.stream().mapToInt(k -> k == PartKind.ROOTFS ? rootfsSteps : 1).sum(), log);
        for (PartKind kind : missing) {
            String hash = hashes.of(kind);
            Instant start = Instant.now();
            Map<String, String> inputs;
            switch (kind) {
                case KERNEL -> {
                    steps.begin(kind, "download and extract " + kernelPackage.name()
                            + (recipe.buildsWorkspaceModule() ? ", build kosa8's 9p module" : ""),
                            Duration.ofSeconds(12));
                    Path deb = apt.download(kernelPackage);
                    inputs = Map.of("package", kernelPackage.fileName(), "recipe", recipe.version());
                    parts.build(kind, hash, dir -> {
                        String v = KernelPart.make(deb, apt, recipe.arch(), recipe.modules(), dir);
                        Optional<String> notBuilt = !recipe.buildsWorkspaceModule()
                                ? Optional.of("kosa8 builds it for x86-64 guests only so far")
                                : VmModule.buildForPart(kernelPackage, apt, moduleInVm,
                                recipe.suite(), () -> BuilderRun.kit(apt, dir, busyboxPackage,
                                        paths.cache().resolve("accelerator.json"), progress::note), dir, log,
                                progress::note);
                        if (notBuilt.isEmpty()) {
                            KernelPart.appendModule(dir, WorkspaceModule.NAME);
                        } else {
                            progress.note("the workspace's kernel transport was not built, so sandboxes will use "
                                    + "the slower relay: " + notBuilt.get());
                        }
                        Map<String, String> facts = new java.util.HashMap<>(KernelPart.facts(dir, v));
                        facts.put("ws9pModule", notBuilt.map(r -> "not built: " + r).orElse("built"));
                        apt.locked(kernelPackage).ifPresent(l -> facts.put(ImageLocks.FACT, l.line()));
                        writeManifest(dir, kind, hash, start, inputs, facts);
                    });
                }
                case ROOTFS -> {
                    inputs = new java.util.HashMap<>(Map.of("suite", recipe.suite(), "includes",
                            String.join(",", recipe.includes()), "java", java.version(), "recipe", recipe.version()));
                    locked.ifPresent(l -> inputs.put("lock", l.digest()));
                    parts.build(kind, hash, dir -> {
                        StepReporter reporter = (what, about) -> steps.begin(kind, what, about);
                        String lock = builder == RootfsBuilder.VM
                                ? VmRootfs.make(recipe, java, apt.archiveClient().orElseThrow(), locked,
                                        BuilderRun.kit(apt, recipe.arch(), parts.directory(PartKind.KERNEL,
                                                hashes.kernel()), busyboxPackage, paths.cache().resolve("accelerator.json"),
                                                progress::note), log, reporter, progress::note, dir)
                                : RootfsPart.make(recipe, java, paths.cache().resolve("apt-archives"), log, reporter,
                                        dir, apt.archiveClient(), locked);
                        appendLog(log, "root filesystem's package lock: " + lock);
                        writeManifest(dir, kind, hash, start, inputs,
                                Map.of("qcow2Bytes", String.valueOf(Files.size(dir.resolve(RootfsPart.FILE))),
                                        "packagesLock", lock));
                    });
                }
                case INITRAMFS -> {
                    steps.begin(kind, "busybox, " + recipe.modules().size() + " kernel modules, agent", Duration.ZERO);
                    Path deb = apt.download(busyboxPackage);
                    inputs = Map.of("busybox", busyboxPackage.fileName(), "kernel", hashes.kernel(),
                            "agentJarSha256", ContentHash.of("agent").add("jar", guest.agentJar()).hex(),
                            "recipe", recipe.version());
                    Path kernelDir = parts.directory(PartKind.KERNEL, hashes.kernel());
                    parts.build(kind, hash, dir -> {
                        InitramfsPart.make(deb, apt, kernelDir, guest, dir);
                        Map<String, String> facts = new java.util.HashMap<>(
                                Map.of("cpioBytes", String.valueOf(Files.size(dir.resolve(InitramfsPart.FILE)))));
                        apt.locked(busyboxPackage).ifPresent(l -> facts.put(ImageLocks.FACT, l.line()));
                        writeManifest(dir, kind, hash, start, inputs, facts);
                    });
                }
            }
            appendLog(log, "-- " + kind.displayName() + " built in " + seconds(start) + " s");
            dev.kosa8.host.CrashPoints.reached("image", kind.directoryName());
        }
        String kernelVersion = Manifests.readPart(parts.directory(PartKind.KERNEL, hashes.kernel()))
                .facts().get("kernelVersion");
        Image image = store.writeImage(new ImageManifest(ImageManifest.FORMAT, hashes.imageId(),
                Instant.now().toString(), kernelVersion, kernelPackage, busyboxPackage, hashes));
        dev.kosa8.host.CrashPoints.reached("image", "manifest");
        store.setCurrent(image.id());
        dev.kosa8.host.CrashPoints.reached("image", "current");
        appendLog(log, "image " + image.id() + " ready: " + image.sizeBytes() + " bytes");
        if (!newestPackages) {
            noteEnsured(images, image.id());
        }
        return image;
    }

    /**
     * The lock image {@code m} was built from, when its root filesystem was ({@code kosa8 image build --from-lock}:
     * the part's {@code lock} input), so that an ensure keeps that image, and rebuilds what it lacks from the very
     * same packages, instead of taking the suite's newest; empty for an image built the usual way.
     */
    private Optional<LockedBuild> lockOf(ImageManifest m, PartStore parts) throws IOException {
        Path rootfs = parts.directory(PartKind.ROOTFS, m.parts().rootfs());
        try {
            if (!Files.isRegularFile(rootfs.resolve(Manifests.FILE))
                    || !Manifests.readPart(rootfs).inputs().containsKey("lock")) {
                return Optional.empty();
            }
        } catch (IOException | RuntimeException e) {
            return Optional.empty(); // a damaged part: the ensure rebuilds it, as it did before locks
        }
        // what is on this machine only: an ensure needs no network. The lock was checked when the image was built
        return Optional.of(LockedBuild.recorded(ImageLocks.recorded(paths, m), m.id()));
    }

    /** Notes that an ensure with these inputs found image {@code id} ({@link #ensuredBefore}). */
    private void noteEnsured(Path images, String id) throws IOException {
        if (inputs == null) {
            return;
        }
        Path f = images.resolve(ENSURED);
        if (!Files.isRegularFile(f) || !Files.readString(f).equals(stamp(id))) {
            AtomicFile.write(f, stamp(id).getBytes(StandardCharsets.UTF_8));
        }
    }

    /** Numbers the steps of this build and logs each. */
    private final class Steps {
        private final int total;
        private final Path log;
        private int next = 1;

        Steps(int total, Path log) {
            this.total = total;
            this.log = log;
        }

        void begin(PartKind kind, String description, Duration estimate) {
            BuildStep step = new BuildStep(Math.min(next++, total), total, kind.displayName(), description, estimate);
            appendLog(log, "== " + step.line() + " at " + Instant.now());
            progress.step(step);
        }
    }

    private void writeManifest(Path dir, PartKind kind, String hash, Instant start,
                               Map<String, String> inputs, Map<String, String> facts) throws IOException {
        Manifests.write(dir, new PartManifest(PartManifest.FORMAT, kind.directoryName(), hash,
                Instant.now().toString(), seconds(start), inputs, facts));
    }

    private static double seconds(Instant start) {
        return Duration.between(start, Instant.now()).toMillis() / 1000.0;
    }

    private static void appendLog(Path log, String line) {
        try {
            Files.createDirectories(log.getParent());
            Files.writeString(log, line + System.lineSeparator(), StandardCharsets.UTF_8,
                    StandardOpenOption.CREATE, StandardOpenOption.APPEND);
        } catch (IOException e) {
            throw new KosaException(KosaException.Kind.HOST, "cannot write the build log " + log + ": " + e.getMessage(),
                    "check that " + log.getParent() + " is writable", e);
        }
    }

    private static boolean isRoot() {
        try {
            return ((Number) Files.getAttribute(Path.of("/proc/self"), "unix:uid")).intValue() == 0;
        } catch (IOException | UnsupportedOperationException | IllegalArgumentException e) {
            return false;
        }
    }

    /**
     * Under sudo, gives the images and the package cache back to the user who
     * ran it, also after a failure, so their own later builds can clean up.
     * Best effort: a failure here must not hide the build's own outcome.
     */
    private void handBackToSudoUser(Path images) {
        String uid = System.getenv("SUDO_UID");
        String gid = System.getenv("SUDO_GID");
        if (!root || uid == null || gid == null || !uid.matches("\\d+") || !gid.matches("\\d+") || uid.equals("0")) {
            return;
        }
        for (Path p : List.of(images, paths.cache())) {
            if (Files.exists(p)) {
                try {
                    HostCommand.of("chown", "-R", uid + ":" + gid, p.toString())
                            .run(KosaException.Kind.HOST, "give " + p + " back to the user who ran sudo");
                } catch (KosaException e) {
                    progress.note("could not give " + p + " back to uid " + uid + ": " + e.getMessage());
                }
            }
        }
    }
}
