package dev.kosa8.daemon;

import dev.kosa8.host.KosaException;
import dev.kosa8.image.BuildContext;
import dev.kosa8.image.BuildState;
import dev.kosa8.image.CopyArchive;
import dev.kosa8.image.Dockerfile;
import dev.kosa8.image.Image;
import dev.kosa8.image.ImageConfig;
import dev.kosa8.image.Instruction;
import dev.kosa8.image.JavaTrustStore;
import dev.kosa8.image.NamedImage;
import dev.kosa8.image.NamedImages;
import dev.kosa8.image.PlannedStep;
import dev.kosa8.image.StepRecord;
import dev.kosa8.image.StepStore;
import dev.kosa8.protocol.Message;
import dev.kosa8.vm.GuestCommand;
import dev.kosa8.vm.GuestExec;
import java.io.IOException;
import java.io.InputStream;
import java.io.PipedInputStream;
import java.io.PipedOutputStream;
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
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Consumer;

/**
 * {@code kosa8 image build}: a Dockerfile's steps, each run in a build
 * sandbox ({@link BuildSandbox}) or taken from the step cache
 * ({@link StepStore}), and the result recorded under its name
 * ({@link NamedImages}). Nothing is listed until the whole build succeeded;
 * the steps that did succeed stay in the cache for the next build.
 */
final class ImageBuilds {
    /** What to build. */
    record Request(Path context, Path dockerfile, String tag, List<String> allow, boolean noCache,
                   Map<String, String> buildArgs, Boolean trustHostCas, int cpus, int memoryMiB) {
        Request {
            allow = List.copyOf(allow);
            buildArgs = Map.copyOf(buildArgs);
        }
    }

    /** Where a build says what it does. */
    interface Progress {
        /** Step {@code n} of {@code total} begins ({@code cached}: taken from the cache, nothing runs). */
        void step(int n, int total, String text, boolean cached);

        /** A step's output, as it comes. */
        void output(byte[] bytes);

        /** Something worth saying that is not a step. */
        void note(String text);
    }

    /** How long one RUN may take. */
    static final Duration STEP_TIMEOUT = Duration.ofHours(2);
    private static final DateTimeFormatter LOG_NAME =
            DateTimeFormatter.ofPattern("'dockerfile-'yyyyMMdd'T'HHmmss'Z.log'").withZone(ZoneOffset.UTC);
    /**
     * Run once at the end of a build, in the last layer: takes out of the image what the build sandbox's own boot
     * put into its trust stores (its CA, the host's CAs it may have trusted), and refreshes the copy of the image's
     * own CA bundle that every sandbox's trust is made from (a step may have changed the bundle).
     */
    static final String FINISH = """
            rm -f /usr/local/share/ca-certificates/kosa8-sandbox.crt /usr/local/share/ca-certificates/kosa8-host.crt \\
                  /etc/ssl/certs/kosa8-sandbox.pem /etc/ssl/certs/kosa8-host.pem /etc/kosa8/ca.pem
            if command -v update-ca-certificates >/dev/null 2>&1 && [ -d /usr/share/ca-certificates ]; then
              update-ca-certificates >/dev/null 2>&1 || true
              [ -f /etc/ssl/certs/ca-certificates.crt ] && cp /etc/ssl/certs/ca-certificates.crt /etc/kosa8/system-ca.crt
            elif [ -f /etc/kosa8/system-ca.crt ]; then
              cp /etc/kosa8/system-ca.crt /etc/ssl/certs/ca-certificates.crt
            fi
            cat /etc/kosa8/system-ca.crt 2>/dev/null || true
            """;

    private final SandboxManager manager;
    private final Path images;
    private final StepStore steps;
    private final NamedImages named;
    private final Consumer<String> log;
    private final ReentrantLock lock = new ReentrantLock();

    ImageBuilds(SandboxManager manager, Consumer<String> log) {
        this.manager = manager;
        this.images = manager.paths().images();
        this.steps = new StepStore(images);
        this.named = new NamedImages(images);
        this.log = log;
    }

    /** Where a build's layers go ({@code images/layers/ID/}). */
    Path layers() {
        return images.resolve("layers");
    }

    /** The lock every build, and every prune of layers, holds: one at a time in this daemon. */
    ReentrantLock lock() {
        return lock;
    }

    /** The base a Dockerfile's FROM names: its step key, disk, config and the system image that boots it. */
    private record Base(String key, Path disk, ImageConfig config, String systemImage, String describe) {
    }

    /** A build in progress; {@link #cancel} ends it (the client went away). */
    final class Build {
        private final Request request;
        private final Progress progress;
        private volatile BuildSandbox sandbox;
        private volatile boolean cancelled;
        private Path logFile;

        Build(Request request, Progress progress) {
            this.request = request;
            this.progress = progress;
        }

        void cancel() {
            cancelled = true;
            BuildSandbox s = sandbox;
            if (s != null) {
                s.kill();
            }
        }

        NamedImage run() {
            if (!lock.tryLock()) {
                progress.note("another image build runs; waiting for it");
                lock.lock();
            }
            try {
                logFile = images.resolve("logs").resolve(LOG_NAME.format(Instant.now()));
                Files.createDirectories(logFile.getParent());
                steps.sweep();
                sweepLayers();
                return build();
            } catch (IOException e) {
                throw new KosaException(KosaException.Kind.IMAGE, "the image build failed: " + e.getMessage()
                        + (logFile != null ? " (build log: " + logFile + ")" : ""), "see the build log", e);
            } finally {
                lock.unlock();
            }
        }

        private void logLine(String line) {
            try {
                Files.writeString(logFile, line + "\n", StandardCharsets.UTF_8, StandardOpenOption.CREATE,
                        StandardOpenOption.APPEND);
            } catch (IOException e) {
                log.accept("cannot write the build log " + logFile + ": " + e.getMessage());
            }
        }

        private void output(byte[] b) {
            try {
                Files.write(logFile, b, StandardOpenOption.CREATE, StandardOpenOption.APPEND);
            } catch (IOException e) {
                log.accept("cannot write the build log " + logFile + ": " + e.getMessage());
            }
            progress.output(b);
        }

        private KosaException failed(String what, String suggestion) {
            logLine("FAILED: " + what);
            return new KosaException(KosaException.Kind.USAGE, what + " (build log: " + logFile + ")", suggestion);
        }

        private NamedImage build() throws IOException {
            Path file = request.dockerfile();
            String name = file.toString();
            if (!request.tag().isEmpty() && !NamedImage.isValidName(request.tag())) {
                throw new KosaException(KosaException.Kind.USAGE, "'" + request.tag() + "' is not an image name",
                        "use lower-case letters, digits and . _ - in parts separated by /, with an optional :tag");
            }
            if (!request.tag().isEmpty() && BootImages.isDefault(request.tag())) {
                throw new KosaException(KosaException.Kind.USAGE, NamedImage.DEFAULT + " is kosa8's own image",
                        "give the image another name with -t");
            }
            if (!Files.isRegularFile(file)) {
                throw new KosaException(KosaException.Kind.USAGE, "there is no Dockerfile " + file,
                        "give it with -f FILE, or put a Dockerfile in the build context");
            }
            if (Files.size(file) > Dockerfile.MAX_BYTES) {
                throw new KosaException(KosaException.Kind.USAGE, file + " is larger than " + Dockerfile.MAX_BYTES
                        + " bytes", "");
            }
            Dockerfile df = Dockerfile.parse(Files.readString(file, StandardCharsets.UTF_8), name);
            BuildContext context = BuildContext.open(request.context());
            BuildState state = new BuildState(name, df, request.buildArgs());
            logLine("kosa8 image build: " + file + " in " + context.root() + (request.tag().isEmpty() ? ""
                    : " as " + request.tag()) + (request.noCache() ? ", no cache" : ""));
            String fromRef = state.base(df.from());
            if (pullsFromRegistry(fromRef) && named.find(nameOf(fromRef)).isEmpty()) {
                progress.note("pulling " + fromRef);
                logLine("pulling " + fromRef);
                manager.images().pull(fromRef, fromRef.contains("@") ? "" : nameOf(fromRef));
            }
            Base base = base(pullsFromRegistry(fromRef) ? nameOf(fromRef) : fromRef, df.from());
            state.start(base.config());
            List<String> unused = state.unusedBuildArgs();
            if (!unused.isEmpty()) {
                progress.note("build arguments no ARG declares: " + String.join(", ", unused));
            }
            int total = df.body().size() + 1;
            progress.step(1, total, df.from().text() + "  (" + base.describe() + ")", true);
            logLine("== 1/" + total + " " + df.from().text() + " -> " + base.disk());

            String parent = base.key();
            Path disk = base.disk();
            String lastDisk = base.key();
            boolean missed = false; // after a step is made anew, every later one is too, as in Docker
            // whether a step that changes the disk was made anew: the finishing step, made on the last disk, is
            // cached by that disk alone, so a changed CMD or LABEL at the end reuses it
            boolean diskMissed = false;
            List<StepRecord> pending = new ArrayList<>();
            try {
                int n = 1;
                for (Instruction in : df.body()) {
                    n++;
                    if (cancelled) {
                        throw failed("the build was cancelled", "");
                    }
                    PlannedStep ps = state.apply(in);
                    List<BuildContext.Entry> entries = null;
                    String inputs = "";
                    if (ps instanceof PlannedStep.Copy c) {
                        entries = context.select(c.sources(), c.destination(), name + " line " + c.line());
                        inputs = BuildContext.hash(entries);
                    }
                    String key = StepStore.key(parent, ps.key(), inputs);
                    Optional<StepRecord> hit = request.noCache() || missed ? Optional.empty() : steps.find(key);
                    if (hit.isPresent()) {
                        progress.step(n, total, ps.text(), true);
                        logLine("== " + n + "/" + total + " CACHED " + ps.text());
                        disk = Path.of(hit.get().disk());
                        if (!(ps instanceof PlannedStep.ConfigOnly)) {
                            lastDisk = key;
                        }
                        parent = key;
                        continue;
                    }
                    missed = true;
                    diskMissed |= !(ps instanceof PlannedStep.ConfigOnly);
                    progress.step(n, total, ps.text(), false);
                    logLine("== " + n + "/" + total + " " + ps.text());
                    Instant t0 = Instant.now();
                    if (!(ps instanceof PlannedStep.ConfigOnly)) {
                        BuildSandbox box = sandbox(base, disk);
                        Path layer = box.newLayer();
                        runStep(box, ps, entries, name);
                        box.sync();
                        disk = layer;
                        lastDisk = key;
                    }
                    pending.add(new StepRecord(key, parent, ps.text(), disk.toString(), base.systemImage(),
                            ps.config(), Instant.now().toString(), seconds(t0)));
                    parent = key;
                }
                Path finalDisk = disk;
                if (!lastDisk.equals(base.key())) {
                    String finishKey = StepStore.key(lastDisk, "kosa8: finish the image", "");
                    Optional<StepRecord> fin = request.noCache() || diskMissed ? Optional.empty()
                            : steps.find(finishKey);
                    if (fin.isPresent()) {
                        finalDisk = Path.of(fin.get().disk());
                    } else {
                        Instant t0 = Instant.now();
                        BuildSandbox box = sandbox(base, disk);
                        Path layer = box.newLayer();
                        finish(box, layer);
                        box.sync();
                        finalDisk = layer;
                        pending.add(new StepRecord(finishKey, lastDisk, "(kosa8: finish the image)",
                                layer.toString(), base.systemImage(), state.config(), Instant.now().toString(),
                                seconds(t0)));
                    }
                }
                closeSandbox();
                commit(pending);
                String imageKey = StepStore.key(parent, "image", finalDisk.toString());
                NamedImage image = new NamedImage(request.tag().isEmpty() ? imageKey.substring(0, 16) : request.tag(),
                        imageKey.substring(0, 16), parent, finalDisk.toString(), base.systemImage(),
                        state.base(df.from()), state.config(), Instant.now().toString(),
                        ownBytes(finalDisk, base.disk()));
                named.save(image);
                logLine("image " + image.name() + " (" + image.id() + ") ready");
                return image;
            } catch (IOException | RuntimeException e) {
                try {
                    closeSandbox();
                    commit(pending); // the steps that succeeded are the next build's cache
                } catch (KosaException | IOException x) {
                    log.accept("image build: the steps before the failure could not be kept: " + x.getMessage());
                }
                throw e;
            }
        }

        private BuildSandbox sandbox(Base base, Path disk) {
            if (sandbox == null) {
                BootImage boot = manager.bootImages().system(base.systemImage());
                BootImage on = new BootImage(boot.id(), boot.kernel(), boot.initramfs(), disk, boot.kernelArgs());
                progress.note("starting the build sandbox (network: " + (request.allow().isEmpty() ? "closed"
                        : String.join(" ", request.allow())) + ")");
                sandbox = BuildSandbox.start(manager, on, request.allow(), request.trustHostCas(), request.cpus(),
                        request.memoryMiB(), layers());
                logLine("build sandbox " + sandbox.id());
                if (cancelled) {
                    sandbox.kill();
                }
            }
            return sandbox;
        }

        private void closeSandbox() {
            BuildSandbox s = sandbox;
            if (s != null) {
                s.close();
            }
        }

        private void runStep(BuildSandbox box, PlannedStep ps, List<BuildContext.Entry> entries, String file) {
            String where = file + " line " + ps.line();
            switch (ps) {
                case PlannedStep.Run r -> {
                    long logStart = size(box.auditLog());
                    Message.ExecSpec spec = new Message.ExecSpec(r.argv(), r.env(), r.workdir(),
                            r.user().split(":", 2)[0], false, 0, 0);
                    GuestExec.Exit exit;
                    try {
                        exit = box.exec(spec, null, this::output, this::output, STEP_TIMEOUT);
                    } catch (RuntimeException e) {
                        throw failed(where + ": " + r.text() + " could not run: " + e.getMessage(),
                                "check the command and the image's working directory and user");
                    }
                    if (exit.exitCode() != 0 || exit.signal() != 0) {
                        List<String> denied = denials(box.auditLog(), logStart);
                        String net = denied.isEmpty() ? "" : "; the network refused: " + String.join("; ", denied);
                        throw failed(where + ": " + r.text() + " failed with " + (exit.signal() != 0
                                ? "signal " + exit.signal() : "exit code " + exit.exitCode()) + net,
                                denied.isEmpty() ? "fix the command; its output is above and in the build log"
                                        : "allow the hosts the step needs with --allow HOST (or a @preset)");
                    }
                }
                case PlannedStep.Copy c -> copy(box, c, entries, where);
                case PlannedStep.Workdir w -> {
                    GuestCommand.Result res = box.run(List.of("mkdir", "-p", w.path()), Duration.ofMinutes(1));
                    if (res.exitCode() != 0) {
                        throw failed(where + ": cannot make the working directory " + w.path() + ": "
                                + res.stderr().strip(), "");
                    }
                }
                case PlannedStep.ConfigOnly c -> { }
            }
        }

        private void copy(BuildSandbox box, PlannedStep.Copy c, List<BuildContext.Entry> entries, String where) {
            try (PipedInputStream in = new PipedInputStream(1 << 20)) {
                PipedOutputStream out = new PipedOutputStream(in);
                Thread writer = Thread.ofVirtual().start(() -> {
                    try (out) {
                        CopyArchive.write(entries, c.chmod(), out);
                    } catch (IOException e) {
                        logLine("writing the files of " + where + " failed: " + e.getMessage());
                    }
                });
                ByteCollector err = new ByteCollector();
                GuestExec.Exit exit = box.exec(new Message.ExecSpec(List.of("tar", "-x", "-p", "-f", "-", "-C", "/"),
                        Map.of(), "/", "", false, 0, 0), in, this::output, err, Duration.ofHours(1));
                writer.join();
                if (exit.exitCode() != 0) {
                    throw failed(where + ": " + c.text() + ": unpacking the files in the build sandbox failed: "
                            + err.text(), "the image needs tar to copy files into it");
                }
            } catch (IOException e) {
                throw failed(where + ": " + c.text() + ": " + e.getMessage(), "");
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw failed("interrupted", "");
            }
            if (!c.chown().isEmpty() && !entries.isEmpty()) {
                StringBuilder list = new StringBuilder();
                for (BuildContext.Entry e : entries) {
                    list.append(e.destination()).append('\0');
                }
                ByteCollector err = new ByteCollector();
                GuestExec.Exit exit = box.exec(new Message.ExecSpec(List.of("xargs", "-0", "chown", "-h", "--",
                        c.chown()), Map.of(), "/", "", false, 0, 0),
                        new java.io.ByteArrayInputStream(list.toString().getBytes(StandardCharsets.UTF_8)),
                        this::output, err, Duration.ofMinutes(30));
                if (exit.exitCode() != 0) {
                    throw failed(where + ": --chown=" + c.chown() + " failed: " + err.text(),
                            "name a user and group the image has");
                }
            }
        }

        /** The last step: the image's own trust stores, without the build sandbox's; the bundle kept beside it. */
        private void finish(BuildSandbox box, Path layer) throws IOException {
            GuestCommand.Result r;
            try {
                r = box.run(List.of("sh", "-c", FINISH), Duration.ofMinutes(10));
            } catch (RuntimeException e) {
                progress.note("the image has no shell, so the build sandbox's trust was not taken out of it: "
                        + e.getMessage());
                return;
            }
            byte[] bundle = r.stdout().getBytes(StandardCharsets.US_ASCII);
            if (r.exitCode() == 0 && bundle.length > 0) {
                Files.write(box.whileRunning(layer).resolveSibling(Image.SYSTEM_CERTIFICATES), bundle);
                try {
                    box.putFiles(List.of(new GuestCommand.GuestFile(JavaTrustStore.GUEST_PATH, 0644,
                            JavaTrustStore.pkcs12(JavaTrustStore.readPem(bundle), null))));
                } catch (java.security.cert.CertificateException | RuntimeException e) {
                    progress.note("the image's Java trust store was left as the build made it: " + e.getMessage());
                }
            }
        }

    }

    Build start(Request request, Progress progress) {
        return new Build(request, progress);
    }

    /**
     * Whether a FROM names an image in a registry, to be pulled when not here: a reference whose first part names
     * a registry ({@code ghcr.io/…}, {@code localhost:5000/…}) or that pins a digest. A bare name
     * ({@code alpine:3.20}) is an image of this machine's, never pulled implicitly ({@code kosa8 image pull} it).
     */
    static boolean pullsFromRegistry(String ref) {
        int slash = ref.indexOf('/');
        String first = slash < 0 ? "" : ref.substring(0, slash);
        return ref.contains("@sha256:") || first.contains(".") || first.contains(":") || first.equals("localhost");
    }

    /** The name a FROM's registry image is listed under once pulled. */
    private static String nameOf(String ref) {
        return dev.kosa8.image.oci.RegistryPull.defaultName(ref);
    }

    private Base base(String ref, Instruction.From from) {
        if (BootImages.isDefault(ref)) {
            BootImage sys = manager.bootImages().of(NamedImage.DEFAULT);
            return new Base(StepStore.key("", "FROM system " + sys.id(), ""), sys.rootDisk(), ImageConfig.NONE,
                    sys.id(), NamedImage.DEFAULT + " " + sys.id());
        }
        Optional<NamedImage> n = named.find(ref);
        if (n.isPresent()) {
            NamedImage i = n.get();
            return new Base(StepStore.key("", "FROM image " + i.id() + " " + i.disk(), ""), Path.of(i.disk()),
                    i.config(), i.systemImage(), i.name() + " " + i.id());
        }
        throw new KosaException(KosaException.Kind.USAGE, "line " + from.line() + ": FROM " + ref
                + ": there is no such image here", "build it first, or use " + NamedImage.DEFAULT
                + "; `kosa8 image ls` lists the images");
    }

    /**
     * Deletes the layers no committed step names (what a failed or killed build left); the caller holds the
     * lock, so no build is making one.
     */
    void sweepLayers() throws IOException {
        Path root = layers();
        if (!Files.isDirectory(root)) {
            return;
        }
        java.util.Set<Path> kept = new java.util.HashSet<>();
        for (StepRecord r : steps.list()) {
            kept.add(Path.of(r.disk()).getParent());
        }
        try (var list = Files.list(root)) {
            for (Path d : list.toList()) {
                if (!kept.contains(d)) {
                    steps.remove(d);
                }
            }
        }
    }

    private void commit(List<StepRecord> pending) throws IOException {
        for (StepRecord r : pending) {
            steps.commit(r);
        }
        pending.clear();
    }

    /** Denied connections logged since {@code from} bytes into the audit log. */
    private static List<String> denials(Path auditLog, long from) {
        List<String> out = new ArrayList<>();
        try {
            byte[] all = Files.readAllBytes(auditLog);
            String tail = new String(all, (int) Math.min(from, all.length), (int) Math.max(0, all.length - from),
                    StandardCharsets.UTF_8);
            var json = new com.fasterxml.jackson.databind.ObjectMapper();
            for (String line : tail.split("\n")) {
                if (line.isBlank()) {
                    continue;
                }
                var n = json.readTree(line);
                if ("deny".equals(n.path("decision").asText())) {
                    String what = n.path("host").asText("?") + (n.has("port") ? ":" + n.path("port").asInt() : "")
                            + " (" + n.path("reason").asText() + ")";
                    if (!out.contains(what)) {
                        out.add(what);
                    }
                }
            }
        } catch (IOException e) {
            // no log, no denials to report
        }
        return out;
    }

    private static long size(Path f) {
        try {
            return Files.size(f);
        } catch (IOException e) {
            return 0;
        }
    }

    private static double seconds(Instant t0) {
        return Duration.between(t0, Instant.now()).toMillis() / 1000.0;
    }

    /** The bytes of the layers between {@code disk} and {@code base}: what the build added. */
    private static long ownBytes(Path disk, Path base) {
        long bytes = 0;
        try {
            for (Path layer : Pruner.chain(disk)) {
                if (layer.equals(base.toRealPath())) {
                    break;
                }
                bytes += Files.size(layer);
            }
        } catch (IOException | RuntimeException e) {
            return -1;
        }
        return bytes;
    }

    /** Collects a little of a stream (an error message), bounded. */
    private static final class ByteCollector implements Consumer<byte[]> {
        private final java.io.ByteArrayOutputStream out = new java.io.ByteArrayOutputStream();

        @Override
        public void accept(byte[] b) {
            if (out.size() < 64 * 1024) {
                out.writeBytes(b);
            }
        }

        String text() {
            return out.toString(StandardCharsets.UTF_8).strip();
        }
    }
}
