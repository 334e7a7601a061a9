package dev.kosa8.cli;

import picocli.CommandLine.Option;

/**
 * The shape of a new sandbox, shared by `run` and `create`: each setting from the command line, else from the
 * project's {@code .kosa8/config.toml} ({@link ProjectConfigFile}), else kosa8's default.
 */
final class SandboxOptions {
    static final int DEFAULT_CPUS = 2;
    static final String DEFAULT_MEMORY = "1G";
    static final String DEFAULT_NET = "closed";

    @Option(names = "--cpus", paramLabel = "N",
            description = "Virtual CPUs (default: cpus in .kosa8/config.toml, else " + DEFAULT_CPUS + ").")
    Integer cpus;

    @Option(names = "--memory", paramLabel = "SIZE",
            description = "Guest memory, like 512M or 2G (default: memory in .kosa8/config.toml, else " + DEFAULT_MEMORY
                    + ").")
    String memory;

    @Option(names = "--accel", paramLabel = "ACCEL", defaultValue = "auto",
            description = "kvm, hvf, tcg, or auto: probe once and cache the result (default: ${DEFAULT-VALUE}).")
    String accel;

    @Option(names = "--workspace", paramLabel = "DIR",
            description = {"The one host folder the sandbox sees, live, at /workspace and at the same path as on"
                    + " the host; commands start in it. Default: the current directory. 'none' for no folder."})
    String workspace;

    @Option(names = "--workspace-transport", paramLabel = "HOW", defaultValue = "auto",
            description = {"How the guest kernel reaches the folder: auto (default), through kosa8's own 9p transport "
                    + "in the guest kernel where the image has it, else through the agent's relay; relay, always "
                    + "the relay (slower on small files; for diagnosis)."})
    String workspaceTransport;

    @Option(names = "--allow", paramLabel = "HOST",
            description = {"Let the sandbox reach HOST (repeatable). HOST is a name (pypi.org), *.domain, name:port,",
                    "'METHODS name/path-prefix' ('GET,HEAD api.example.com/v1/'), or a preset: @pypi, @npm,",
                    "@github, @debian (and your own in presets.json in kosa8's config directory).",
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

    /** The settings the sandbox gets, each with where it came from (`kosa8 config show`). */
    EffectiveSettings effective() {
        return EffectiveSettings.of(this, ProjectConfigFile.read(projectFolder()));
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
        return q.toString();
    }

    static String enc(String s) {
        return java.net.URLEncoder.encode(s, java.nio.charset.StandardCharsets.UTF_8);
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
