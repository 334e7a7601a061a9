package dev.kosa8.cli;

import dev.kosa8.client.DaemonConnection;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.kosa8.host.KosaException;
import dev.kosa8.vm.GuestArch;
import dev.kosa8.image.Image;
import dev.kosa8.image.ImageBuilder;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.ParentCommand;

@Command(name = "image", mixinStandardHelpOptions = true,
        description = {"Build, list, inspect, remove and prune images."},
        subcommands = {ImageCommand.Build.class, ImageCommand.Ls.class, ImageCommand.Inspect.class,
            ImageCommand.Import.class, ImageCommand.Pull.class, ImageCommand.Rm.class, ImageCommand.Prune.class,
            ImageEnsureCommand.class, ImageLockCommand.class})
final class ImageCommand {
    @ParentCommand
    Main main;

    @Command(name = "build", mixinStandardHelpOptions = true, sortOptions = false, description = {
        "Build an image from a Dockerfile: each RUN runs in a build sandbox (a real kosa8 microVM) whose network is "
                + "closed but for --allow; each step's result is cached, so an unchanged prefix is not built again.",
        "Supported: FROM, RUN, ENV, ARG, COPY, ADD (files of the context), WORKDIR, USER, LABEL, ENTRYPOINT, CMD; "
                + "anything else is an error naming its line. See docs/images.md.",
        "Without CONTEXT or -f: builds kosa8's own image (kosa8/debian: Debian's kernel, an initramfs with the "
                + "kosa8 init, a Debian root with git, curl and python3), looking up the newest packages; with "
                + "--from-lock, exactly the packages of a lock `kosa8 image lock` wrote."},
        footer = {"", "Examples:",
            "  kosa8 image build -t app .",
            "  kosa8 image lock > kosa8-image.lock    # later, or on another machine:",
            "  kosa8 image build --from-lock kosa8-image.lock",
            "  kosa8 image build -t app --allow @debian --trust-host-cas -f docker/Dockerfile .",
            "  kosa8 run --image app -- jq --version"})
    static final class Build implements Callable<Integer> {
        @ParentCommand
        ImageCommand parent;

        @Option(names = {"-f", "--file"}, paramLabel = "DOCKERFILE",
                description = "The Dockerfile (default: CONTEXT/Dockerfile).")
        Path file;

        @Option(names = {"-t", "--tag"}, paramLabel = "NAME",
                description = "The image's name, such as app or team/tool:1.2 (default: none; its id names it).")
        String tag = "";

        @Option(names = "--allow", paramLabel = "HOST",
                description = {"Let RUN steps reach HOST (repeatable): a name, *.domain, name:port or @preset, as "
                        + "for `kosa8 run`. Everything else is denied and the refusal is in the build's log."})
        List<String> allow = new ArrayList<>();

        @Option(names = "--trust-host-cas", negatable = true,
                description = "Let RUN steps trust this machine's locally added CAs (as `kosa8 run --trust-host-cas`).")
        Boolean trustHostCas;

        @Option(names = "--from-lock", paramLabel = "FILE", description = {"Build kosa8's own image from exactly "
                + "the Debian packages FILE names (written by `kosa8 image lock`): the same kernel, busybox and root "
                + "filesystem versions, each .deb checked against the lock's SHA-256; no newer version is taken. "
                + "Not with CONTEXT or -f."})
        Path fromLock;

        @Option(names = "--arch", paramLabel = "ARCH", description = {"Build kosa8's own image for guests of ARCH: "
                + "amd64 or arm64 (default: this host's). Another architecture's image is built in a builder VM of "
                + "that architecture under emulation (about 15 minutes here) and kept apart, so each has its own "
                + "current image; `kosa8 run --arch ARCH` boots it. Not with CONTEXT or -f."})
        String arch;

        @Option(names = "--no-cache", description = "Build every step again, taking nothing from the cache.")
        boolean noCache;

        @Option(names = "--build-arg", paramLabel = "NAME=VALUE", description = "Set an ARG (repeatable).")
        List<String> buildArgs = new ArrayList<>();

        @Option(names = {"-v", "--verbose"}, description = "Show each step's output as it runs (always in the log).")
        boolean verbose;

        @Option(names = "--cpus", paramLabel = "N", defaultValue = "2",
                description = "Virtual CPUs of the build sandbox (default: ${DEFAULT-VALUE}).")
        int cpus;

        @Option(names = "--memory", paramLabel = "SIZE", defaultValue = "1G",
                description = "Memory of the build sandbox (default: ${DEFAULT-VALUE}).")
        String memory;

        @Parameters(index = "0", arity = "0..1", paramLabel = "CONTEXT",
                description = "The folder COPY and ADD take files from.")
        Path context;

        @Override
        public Integer call() throws IOException {
            if (fromLock != null && (context != null || file != null)) {
                throw new KosaException(KosaException.Kind.USAGE, "--from-lock builds kosa8's own image; it takes no "
                        + "CONTEXT or Dockerfile", "run `kosa8 image build --from-lock " + fromLock + "` alone");
            }
            if (arch != null && (context != null || file != null)) {
                throw new KosaException(KosaException.Kind.USAGE, "--arch builds kosa8's own image; an image from a "
                        + "Dockerfile is built on the image of this host's architecture",
                        "run `kosa8 image build --arch " + arch + "` alone");
            }
            GuestArch guest = arch == null ? GuestArch.host() : GuestArch.parse(arch);
            if (fromLock != null && guest.foreign()) {
                throw new KosaException(KosaException.Kind.USAGE, "--from-lock rebuilds the image of this host's "
                        + "architecture; a lock of an " + guest.debianName() + " image is not supported yet",
                        "run `kosa8 image build --arch " + guest.debianName() + "` without --from-lock");
            }
            if (fromLock != null) {
                Image img = new ImageBuilder(parent.main.paths, Images.printer(System.err), guest)
                        .buildFromLock(fromLock.toAbsolutePath().normalize());
                System.out.println(img.id());
                return 0;
            }
            if (context == null && file == null) {
                Image img = new ImageBuilder(parent.main.paths, Images.printer(System.err), guest).build();
                System.out.println(img.id());
                return 0;
            }
            Path ctx = (context == null ? Path.of("") : context).toAbsolutePath().normalize();
            Path df = file == null ? ctx.resolve("Dockerfile") : file.toAbsolutePath().normalize();
            Images.ensure(parent.main.paths, System.err);
            StringBuilder q = new StringBuilder("context=" + SandboxOptions.enc(ctx.toString()) + "&dockerfile="
                    + SandboxOptions.enc(df.toString()) + "&tag=" + SandboxOptions.enc(tag) + "&noCache=" + noCache
                    + "&verbose=" + verbose + "&cpus=" + cpus + "&memoryMiB=" + Sizes.mebibytes(memory));
            for (String a : allow) {
                q.append("&allow=").append(SandboxOptions.enc(a));
            }
            for (String a : buildArgs) {
                q.append("&buildArg=").append(SandboxOptions.enc(a));
            }
            if (trustHostCas != null) {
                q.append("&trustHostCas=").append(trustHostCas);
            }
            JsonNode i = follow(parent.main.daemon(), q.toString());
            System.err.println("kosa8: image " + i.path("name").asText() + " built");
            System.out.println(i.path("id").asText());
            return 0;
        }

        /**
         * Runs a build (the query of {@code /v1/images/build}) and shows its steps on stderr as they come; shared
         * with {@code kosa8 agent}, whose image is a build too.
         *
         * @return the image built, as the daemon describes it
         */
        static JsonNode follow(DaemonClient daemon, String query) throws IOException {
            ObjectMapper json = new ObjectMapper();
            try (DaemonConnection.Stream s = daemon.upgrade("/v1/images/build?" + query)) {
                BufferedReader in = new BufferedReader(new InputStreamReader(s.in(), StandardCharsets.UTF_8));
                String line;
                while ((line = in.readLine()) != null) {
                    JsonNode m = json.readTree(line);
                    if (m.has("step")) {
                        System.err.printf("[%d/%d] %s%s%n", m.path("step").asInt(), m.path("total").asInt(),
                                m.path("cached").asBoolean() ? "CACHED " : "", m.path("text").asText());
                    } else if (m.has("output")) {
                        System.err.print(m.path("output").asText());
                    } else if (m.has("note")) {
                        System.err.println("kosa8: " + m.path("note").asText());
                    } else if (m.has("image")) {
                        return m.path("image");
                    } else if (m.has("error")) {
                        KosaException.Kind kind;
                        try {
                            kind = KosaException.Kind.valueOf(m.path("kind").asText("INTERNAL"));
                        } catch (IllegalArgumentException e) {
                            kind = KosaException.Kind.INTERNAL;
                        }
                        throw new KosaException(kind, m.path("error").asText(), m.path("suggestion").asText(""));
                    }
                }
            }
            throw new KosaException(KosaException.Kind.INTERNAL, "the daemon ended the build without a result",
                    "see the daemon's log");
        }
    }

    @Command(name = "prune", mixinStandardHelpOptions = true, description = {
        "Remove the guest images, booted templates and build layers no sandbox needs: every build of kosa8's own "
                + "image but the current one, every template but each image's current one, and the build cache's "
                + "layers no named image uses, unless a sandbox's disk rests on them.",
        "Each build of kosa8's image leaves the last one (about 1 GB) and its templates behind; nothing removes "
                + "them but this. `kosa8 doctor` says when there is something to remove.",
        "Example: kosa8 image prune --dry-run"})
    static final class Prune implements Callable<Integer> {
        @ParentCommand
        ImageCommand parent;

        @Option(names = "--dry-run", description = "Only list what would be removed.")
        boolean dryRun;

        @Override
        public Integer call() {
            var answer = parent.main.daemon().post("/v1/images/prune" + (dryRun ? "?dryRun=true" : ""));
            String verb = dryRun ? "would remove" : "removed";
            for (var item : answer.path("removed")) {
                System.out.printf("%s %s %s (%s)%n", verb, item.path("kind").asText(), item.path("name").asText(),
                        Sizes.human(item.path("bytes").asLong()));
            }
            if (answer.path("removed").isEmpty()) {
                System.out.println("nothing to remove: every image, template and layer is current or in use");
            } else {
                System.out.printf("%s %s in all%n", dryRun ? "would free" : "freed",
                        Sizes.human(answer.path("bytes").asLong()));
            }
            return 0;
        }
    }

    @Command(name = "ls", mixinStandardHelpOptions = true,
            description = {"List the images sandboxes can be made from: name, id, size, base, created."})
    static final class Ls implements Callable<Integer> {
        @ParentCommand
        ImageCommand parent;

        @Override
        public Integer call() {
            String fmt = "%-28s  %-16s  %8s  %-32s  %s%n";
            System.out.printf(fmt, "NAME", "ID", "SIZE", "BASE", "CREATED");
            for (JsonNode i : parent.main.daemon().get("/v1/images")) {
                long size = i.path("sizeBytes").asLong();
                System.out.printf(fmt, i.path("name").asText(), i.path("id").asText(),
                        size < 0 ? "?" : Sizes.human(size), i.path("base").asText(), i.path("created").asText());
            }
            return 0;
        }
    }

    @Command(name = "inspect", mixinStandardHelpOptions = true,
            description = {"Show an image as JSON: its config (env, working directory, user, entrypoint, cmd, "
                    + "labels), its disk, base and size."})
    static final class Inspect implements Callable<Integer> {
        @ParentCommand
        ImageCommand parent;

        @Parameters(index = "0", paramLabel = "NAME", description = "The image's name or id.")
        String name;

        @Override
        public Integer call() throws IOException {
            JsonNode i = parent.main.daemon().get("/v1/images/inspect?name=" + SandboxOptions.enc(name));
            System.out.println(new ObjectMapper().writerWithDefaultPrettyPrinter().writeValueAsString(i));
            return 0;
        }
    }

    @Command(name = "import", mixinStandardHelpOptions = true,
            description = {"Import an image from a `docker save` tarball or an OCI image layout (a tar file or a "
                    + "folder). Its layers are applied on the host into the image's own disk (nothing of the image "
                    + "runs), and kosa8's agent runs beside it, so any root file system boots: busybox-only, no "
                    + "shell, musl.", "",
                    "  kosa8 image import -t tools:1 tools.tar && kosa8 run --image tools:1 -- busybox echo ok"})
    static final class Import implements Callable<Integer> {
        @ParentCommand
        ImageCommand parent;

        @Option(names = {"-t", "--tag"}, paramLabel = "NAME",
                description = "The name to list it under. Default: the name the archive gives.")
        String tag = "";

        @Parameters(index = "0", paramLabel = "ARCHIVE", description = "The archive file or OCI layout folder.")
        java.nio.file.Path archive;

        @Override
        public Integer call() {
            JsonNode i = parent.main.daemon().post("/v1/images/import?archive="
                    + SandboxOptions.enc(archive.toAbsolutePath().normalize().toString())
                    + "&tag=" + SandboxOptions.enc(tag));
            System.err.printf("kosa8: imported %d layers, %s unpacked, in %.1f s%n", i.path("layers").asInt(),
                    Sizes.human(i.path("unpackedBytes").asLong()), i.path("millis").asLong() / 1000.0);
            System.out.println(i.path("name").asText() + " " + i.path("id").asText());
            return 0;
        }
    }

    @Command(name = "pull", mixinStandardHelpOptions = true,
            description = {"Pull an image from a registry (Docker Hub, GHCR, any OCI registry), by tag or by "
                    + "digest, its linux/amd64 image when the tag names several, and import it. Credentials come "
                    + "from Docker's config ($DOCKER_CONFIG or ~/.docker/config.json, credential helpers too). A "
                    + "registry on a loopback address may answer over plain HTTP; every other one needs TLS.", "",
                    "  kosa8 image pull alpine:3.20 && kosa8 run --image alpine:3.20 -- cat /etc/os-release"})
    static final class Pull implements Callable<Integer> {
        @ParentCommand
        ImageCommand parent;

        @Option(names = {"-t", "--tag"}, paramLabel = "NAME",
                description = "The name to list it under. Default: its repository and tag.")
        String tag = "";

        @Parameters(index = "0", paramLabel = "REFERENCE", description = "[REGISTRY/]REPOSITORY[:TAG|@DIGEST]")
        String reference;

        @Override
        public Integer call() {
            JsonNode i = parent.main.daemon().post("/v1/images/pull?ref=" + SandboxOptions.enc(reference)
                    + "&tag=" + SandboxOptions.enc(tag));
            System.err.printf("kosa8: pulled and imported %d layers, %s unpacked, in %.1f s%n",
                    i.path("layers").asInt(), Sizes.human(i.path("unpackedBytes").asLong()),
                    i.path("millis").asLong() / 1000.0);
            System.out.println(i.path("name").asText() + " " + i.path("id").asText());
            return 0;
        }
    }

    @Command(name = "rm", mixinStandardHelpOptions = true,
            description = {"Remove images by name. Sandboxes made from one keep working; its layers go with "
                    + "`kosa8 image prune` once nothing rests on them."})
    static final class Rm implements Callable<Integer> {
        @ParentCommand
        ImageCommand parent;

        @Parameters(arity = "1..*", paramLabel = "NAME", description = "The images' names or ids.")
        List<String> names;

        @Override
        public Integer call() {
            for (String n : names) {
                JsonNode r = parent.main.daemon().delete("/v1/images?name=" + SandboxOptions.enc(n));
                System.out.println(r.path("removed").asText());
            }
            return 0;
        }
    }
}
