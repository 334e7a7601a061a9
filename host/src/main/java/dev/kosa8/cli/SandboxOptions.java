package dev.kosa8.cli;

import picocli.CommandLine.Option;

/**
 * The shape of a new sandbox, shared by `run` and `create`: each setting from the command line, else from the
 * project's {@code .kosa8/config.toml} ({@link ProjectConfigFile}), else kosa8's default.
 */
final class SandboxOptions {
    // kosa8's defaults, named once for picocli, for `config show` and for the options of a plain `run` ({@link
    // HotPath}); cpus, memory and net are left null when not given, so that .kosa8/config.toml can set them
    static final int DEFAULT_CPUS = 2;
    static final String DEFAULT_MEMORY = "1G";
    static final String DEFAULT_NET = "closed";
    static final String ACCEL = "auto";
    static final String TRANSPORT = "auto";

    @Option(names = "--cpus", paramLabel = "N",
            description = "Virtual CPUs (default: cpus in .kosa8/config.toml, else " + DEFAULT_CPUS + ").")
    Integer cpus;

    @Option(names = "--memory", paramLabel = "SIZE",
            description = "Guest memory, like 512M or 2G (default: memory in .kosa8/config.toml, else " + DEFAULT_MEMORY
                    + ").")
    String memory;

    @Option(names = "--accel", paramLabel = "ACCEL", defaultValue = ACCEL,
            description = "kvm, hvf, tcg, or auto: probe once and cache the result (default: ${DEFAULT-VALUE}).")
    String accel;

    @Option(names = "--arch", paramLabel = "ARCH",
            description = {"The guest's processor architecture: amd64 or arm64 (default: this host's). Another "
                    + "architecture's guest runs under emulation (TCG), slower, on kosa8's own image of that "
                    + "architecture, built on first use (`kosa8 image build --arch ARCH`); not with --image. "
                    + "KOSA8_ARCH in the environment sets the default."})
    String arch;

    @Option(names = "--workspace", paramLabel = "DIR",
            description = {"The one host folder the sandbox sees, live, at /workspace and at the same path as on"
                    + " the host; commands start in it. Default: the current directory. 'none' for no folder."})
    String workspace;

    @Option(names = "--workspace-transport", paramLabel = "HOW", defaultValue = TRANSPORT,
            description = {"How the guest kernel reaches the folder: auto (default), through kosa8's own 9p transport "
                    + "in the guest kernel, the guest caching the folder, kept true to the host by notices of what "
                    + "changes there (every command sees every host change made before it starts), else through "
                    + "the agent's relay, uncached; uncached, the transport without the cache (every read crosses "
                    + "to the host: several times slower; for diagnosis); relay, always the relay (slower still "
                    + "on small files; for diagnosis)."})
    String workspaceTransport;

    @Option(names = "--allow", paramLabel = "HOST",
            description = {"Let the sandbox reach HOST (repeatable). HOST is a name (pypi.org), *.domain, name:port,",
                    "'METHODS name/path-prefix' ('GET,HEAD api.example.com/v1/'), or a preset: @pypi, @npm,",
                    "@github, @debian, @anthropic, @openai, @google-ai (and your own in presets.json in kosa8's",
                    "config directory).",
                    "Without a port a rule covers ports 80 and 443. Everything else is denied."})
    java.util.List<String> allow = new java.util.ArrayList<>();

    @Option(names = "--passthrough", paramLabel = "HOST",
            description = {"Let the sandbox reach HOST (repeatable) with its TLS passed through unread: for clients "
                    + "that pin certificates or need the server's own certificate. Every other allowed host's TLS "
                    + "ends at kosa8's broker, which checks that each request names the host allowed; a "
                    + "passthrough host's requests are not seen (docs/network.md, \"What the broker sees\")."})
    java.util.List<String> passthrough = new java.util.ArrayList<>();

    @Option(names = "--secret", paramLabel = "NAME",
            description = {"Give the sandbox a secret from `kosa8 secret set` (repeatable). Its host joins the "
                    + "allow-list; commands see only a placeholder in its variable, and the network broker puts the "
                    + "real key into HTTPS requests to that host alone."})
    java.util.List<String> secrets = new java.util.ArrayList<>();

    @Option(names = "--hold", paramLabel = "CLASS",
            description = "Hold this class of paths for review again after --no-hold (classes: git, hook-managers, direnv,"
                    + " editors, agents, ci, symlinks, and your own in held-paths.txt; docs/workspace.md).")
    java.util.List<String> hold = new java.util.ArrayList<>();

    @Option(names = "--no-hold", paramLabel = "CLASS",
            description = "Let the sandbox write this class of paths straight to the folder (see --hold).")
    java.util.List<String> noHold = new java.util.ArrayList<>();

    @Option(names = "--net", paramLabel = "MODE",
            description = {"closed: only --allow'ed hosts (default); open: every host, still address-checked and "
                    + "logged; none: no network device at all."})
    String net;

    @Option(names = "--image", paramLabel = "NAME",
            description = {"The image to boot: kosa8/debian (default), or one built with `kosa8 image build -t NAME` "
                    + "or imported; its ENV, WORKDIR and USER apply to every command. `kosa8 image ls` lists them."})
    String image;

    @Option(names = "--trust-host-cas", negatable = true,
            description = {"Let the guest trust the CA certificates added to this machine's trust locally (such as "
                    + "a TLS-inspecting company proxy's, in /usr/local/share/ca-certificates): its system bundle, "
                    + "the variables clients read, Java's and Node's stores. Default: trustHostCas in kosa8's "
                    + "network.json, else off."})
    Boolean trustHostCas;

    @Option(names = "--disk-budget", paramLabel = "SIZE",
            description = {"The most the sandbox may keep on this machine's disk: its root disk's growth, its "
                    + "checkpoints and its logs together (default: \"diskBudget\" in kosa8's settings.json, else 32G). "
                    + "A checkpoint that would go past it is refused; `kosa8 df` shows what each sandbox uses."})
    String diskBudget;

    @Option(names = "--max-checkpoints", paramLabel = "N",
            description = {"The most checkpoints the sandbox keeps; one more is refused until one is removed "
                    + "(default: \"checkpointCount\" in settings.json, else 64)."})
    Integer maxCheckpoints;

    @Option(names = "--checkpoint-bytes", paramLabel = "SIZE",
            description = {"The most its checkpoints may hold alone, as `kosa8 checkpoints` counts them "
                    + "(default: \"checkpointBytes\" in settings.json, else no limit of their own)."})
    String checkpointBytes;

    @Option(names = "--console-limit", paramLabel = "SIZE",
            description = {"The most of the guest's console output kept on this machine; older output is "
                    + "dropped, and the log says so (default: \"consoleLimit\" in settings.json, else 4M)."})
    String consoleLimit;

    @Option(names = {"-p", "--publish"}, paramLabel = "[HOST:]GUEST",
            description = {"Publish a TCP port of the sandbox on this machine's 127.0.0.1: connections to HOST "
                    + "reach GUEST on the guest's loopback, carried by kosa8 (the guest gets no network for it). "
                    + "HOST left out: a free port, printed. Repeatable. ADDRESS:HOST:GUEST listens on another address "
                    + "(0.0.0.0: every interface, so other machines can connect; kosa8 warns). "
                    + "Example: -p 8000, -p 8080:80. `kosa8 port` changes them later."})
    java.util.List<String> publish = new java.util.ArrayList<>();

    /** What {@link #effective} found: the project's file is read once per command, not once per use. */
    private EffectiveSettings effective;

    /**
     * The settings the sandbox gets, each with where it came from (`kosa8 config show`); read on first use, once
     * picocli has set the options.
     */
    EffectiveSettings effective() {
        if (effective == null) {
            effective = EffectiveSettings.of(this, ProjectConfigFile.read(projectFolder()));
        }
        return effective;
    }

    /** Where .kosa8/config.toml is looked for: the folder to share, else the current directory. */
    java.nio.file.Path projectFolder() {
        String w = workspaceFolder();
        return java.nio.file.Path.of(w.isEmpty() ? "" : w).toAbsolutePath();
    }

    /** The image to boot after the project's settings: empty for kosa8's own. */
    String image() {
        return effective().value("image");
    }

    /** The guest's architecture: as asked, else this host's. */
    dev.kosa8.vm.GuestArch guestArch() {
        String asked = arch != null ? arch : System.getenv(ARCH_ENVIRONMENT);
        return asked == null || asked.isBlank() ? dev.kosa8.vm.GuestArch.host() : dev.kosa8.vm.GuestArch.parse(asked);
    }

    /** The environment variable that sets {@code --arch}'s default (the arm64 test profile runs the suite so). */
    static final String ARCH_ENVIRONMENT = "KOSA8_ARCH";

    /** The options as picocli sets them when none is given. */
    static SandboxOptions defaults() {
        SandboxOptions o = new SandboxOptions();
        o.accel = ACCEL;
        o.workspaceTransport = TRANSPORT;
        return o;
    }

    String query() {
        EffectiveSettings e = effective();
        String a = accel.equalsIgnoreCase("auto") ? "auto" : dev.kosa8.vm.Accelerator.parse(accel).qemuName();
        StringBuilder q = new StringBuilder("cpus=" + e.value("cpus") + "&memoryMiB=" + Sizes.mebibytes(e.value("memory"))
                + "&accelerator=" + a + "&workspace=" + enc(workspaceFolder()) + "&net="
                + enc(dev.kosa8.egress.NetMode.parse(e.value("net")).label())
                + "&workspaceTransport=" + dev.kosa8.vm.WorkspaceTransport.parse(workspaceTransport).label());
        if (!e.value("image").isEmpty()) {
            q.append("&image=").append(enc(e.value("image")));
        }
        // --arch as asked; KOSA8_ARCH's default only for kosa8's own image (an image by name is this host's
        // architecture's, as `kosa8 agent`'s are)
        if (guestArch().foreign() && (arch != null || e.value("image").isEmpty())) {
            q.append("&arch=").append(guestArch().debianName());
        }
        if (diskBudget != null) {
            q.append("&diskBudget=").append(Sizes.bytes("--disk-budget", diskBudget));
        }
        if (maxCheckpoints != null) {
            q.append("&maxCheckpoints=").append(maxCheckpoints);
        }
        if (checkpointBytes != null) {
            q.append("&checkpointBytes=").append(Sizes.bytes("--checkpoint-bytes", checkpointBytes));
        }
        if (consoleLimit != null) {
            q.append("&consoleLimit=").append(Sizes.bytes("--console-limit", consoleLimit));
        }
        if (trustHostCas != null) {
            q.append("&trustHostCas=").append(trustHostCas);
        }
        for (String name : e.list("secrets")) {
            q.append("&secret=").append(enc(name));
        }
        for (String rule : e.list("allow")) {
            q.append("&allow=").append(enc(rule));
        }
        for (String host : e.list("passthrough")) {
            q.append("&allow=").append(enc(dev.kosa8.egress.AllowRule.PASSTHROUGH + " " + host));
        }
        for (String c : hold) {
            q.append("&hold=").append(enc(c));
        }
        for (String c : noHold) {
            q.append("&noHold=").append(enc(c));
        }
        for (String spec : publish) {
            PortCommand.warnIfNotLoopback(dev.kosa8.ports.PortMapping.parse(spec));
            q.append("&port=").append(enc(spec));
        }
        return q.toString();
    }

    static String enc(String s) {
        return java.net.URLEncoder.encode(s, java.nio.charset.StandardCharsets.UTF_8);
    }

    /**
     * Under WSL, says on {@code err} when the folder to share is on a Windows drive, before the sandbox is made:
     * it works, slowly and without Unix modes or links ({@link #windowsDriveWarning}; docs/wsl2.md).
     */
    void warnOfWindowsDrive(java.io.PrintStream err) {
        String w = workspaceFolder();
        if (w.isEmpty()) {
            return;
        }
        dev.kosa8.host.Wsl wsl = dev.kosa8.host.Wsl.host();
        if (wsl.any()) {
            String warning = windowsDriveWarning(wsl, w, dev.kosa8.host.Mounts.host(java.nio.file.Path.of(w)));
            if (warning != null) {
                err.println(warning);
            }
        }
    }

    /** The warning for a folder on {@code mount} under {@code wsl}, or null when there is none to give. */
    static String windowsDriveWarning(dev.kosa8.host.Wsl wsl, String folder,
                                      java.util.Optional<dev.kosa8.host.Mounts.Mount> mount) {
        if (!wsl.any() || mount.isEmpty() || !mount.get().windowsDrive()) {
            return null;
        }
        return "kosa8: warning: " + folder + " is on a Windows drive (" + mount.get().point() + "): the sandbox's"
                + " folder works there, but slowly, and without Unix modes or symlinks; keep the project in the Linux"
                + " file system (e.g. ~/src) for speed (docs/wsl2.md)";
    }

    /** The folder to share as an absolute path, or empty for none; the daemon checks it further. */
    String workspaceFolder() {
        if ("none".equals(workspace)) {
            return "";
        }
        java.nio.file.Path p = java.nio.file.Path.of(workspace == null ? "" : workspace).toAbsolutePath().normalize();
        return p.toString();
    }
}
