package dev.kosa8.it;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * Runs the real kosa8 CLI (the built jar, in its own JVM) the way a user
 * does, against a kosa8 home of the tests' own so the user's sandboxes are
 * never touched. Every call has a timeout; a timed-out call fails with the
 * output so far.
 */
public final class Kosa {
    /** Where the integration tests keep images, sandboxes and the daemon's socket. */
    public static final Path HOME = Path.of(System.getProperty("kosa8.it.home",
            Path.of("target", "it-home").toAbsolutePath().toString()));
    static final Path JAR = Path.of(System.getProperty("kosa8.jar",
            Path.of("target", "kosa8.jar").toAbsolutePath().toString()));

    private Kosa() {
    }

    /** A finished CLI call. */
    public record Result(int exitCode, byte[] stdoutBytes, String stderr) {
        public String stdout() {
            return new String(stdoutBytes, StandardCharsets.UTF_8);
        }

        @Override
        public String toString() {
            String out = stdout();
            return "exit " + exitCode + "\n--- stdout ---\n" + (out.length() > 4000 ? out.substring(0, 4000) + "…" : out)
                    + "\n--- stderr ---\n" + stderr;
        }
    }

    public static List<String> command(String... args) {
        List<String> argv = jvm();
        argv.addAll(List.of("-cp", JAR.toString(), "dev.kosa8.cli.Main"));
        argv.addAll(List.of(args));
        return argv;
    }

    /**
     * The JVM and the flags the launcher ({@code kosa8}, the script) starts the CLI with, its AOT cache included
     * ({@link CliAotCache}): the tests' CLI starts as a user's does, 70-160 ms sooner a call than without the cache.
     */
    public static List<String> jvm() {
        String java = ProcessHandle.current().info().command().orElse("java");
        List<String> argv = new ArrayList<>(List.of(java));
        argv.addAll(CliAotCache.LAUNCHER_FLAGS);
        argv.addAll(CliAotCache.flags(java, JAR));
        return argv;
    }

    /** The host-side egress test settings (loopback servers for test names), outside every workspace. */
    public static final Path EGRESS_TEST_CONFIG = HOME.resolveSibling("it-egress.json");


    /** The daemon's network settings in the tests' home; the daemon reads them when it starts. */
    static final Path NETWORK_SETTINGS = HOME.resolve("config").resolve("network.json");

    /**
     * Network settings for the classes that reach the real npm registry: this machine reaches it through a proxy
     * (an address exception for its addresses) whose TLS-inspecting CA the host trusts. Stops the daemon first, so
     * the next call starts one that reads them; {@link #dropNetworkSettings} undoes it.
     */
    static void useNpmRegistrySettings(Duration timeout) throws IOException {
        Files.createDirectories(NETWORK_SETTINGS.getParent());
        run(timeout, "daemon", "stop");
        Files.writeString(NETWORK_SETTINGS, """
                {"addressExceptions": {"registry.npmjs.org": ["203.0.113.0/24"]},
                 "trustHostCas": true}
                """);
    }

    /** Removes the network settings and stops the daemon, so the next class's starts without them. */
    static void dropNetworkSettings(Duration timeout) throws IOException {
        Files.deleteIfExists(NETWORK_SETTINGS);
        run(timeout, "daemon", "stop");
    }

    /**
     * Whether the tests' sandboxes are another architecture's guests than the host's ({@code ./run-tests arm64} on
     * an x86-64 host): they boot cold, as no template is made for another architecture (docs/arm64.md).
     */
    static boolean foreignGuests() {
        return guestArch().foreign();
    }

    /** The architecture of the tests' sandboxes: {@code kosa8.it.arch}'s, else the host's. */
    static dev.kosa8.vm.GuestArch guestArch() {
        String arch = System.getProperty("kosa8.it.arch", "");
        return arch.isEmpty() ? dev.kosa8.vm.GuestArch.host() : dev.kosa8.vm.GuestArch.parse(arch);
    }

    /** The CLI's working directory in tests, so a sandbox's default workspace is a folder of the tests'. */
    public static final Path CWD = HOME.resolveSibling("it-cwd");

    public static ProcessBuilder builder(String... args) {
        ProcessBuilder pb = new ProcessBuilder(command(args));
        pb.environment().put("KOSA8_HOME", HOME.toString());
        // the daemon these calls start reads it when a broker starts; only NetworkIT writes the file
        pb.environment().put("KOSA8_EGRESS_TEST_CONFIG", EGRESS_TEST_CONFIG.toString());
        // the daemon's bounds on turn checkpoints, small enough that TurnCheckpointIT reaches each within a few
        // checkpoints: three at once, then one per ten minutes (never, within a test run), two kept
        pb.environment().put("KOSA8_TEST_TURN_BOUNDS", "burst=3,refill=600,kept=2");
        // secrets in a file under KOSA8_HOME, never in the keyring of whoever runs the tests
        pb.environment().put("KOSA8_SECRET_STORE", "file");
        // ./run-tests arm64: every sandbox the tests make is an arm64 guest (the CLI's default --arch)
        String arch = System.getProperty("kosa8.it.arch", "");
        if (!arch.isEmpty()) {
            pb.environment().put("KOSA8_ARCH", arch);
        }
        try {
            java.nio.file.Files.createDirectories(CWD);
        } catch (java.io.IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
        pb.directory(CWD.toFile());
        return pb;
    }

    /** Deletes a folder tree the tests made, including read-only entries a guest left. */
    /** The SHA-256 of a host file, in hex, as {@code sha256sum} prints it. */
    public static String sha256(Path p) throws Exception {
        java.security.MessageDigest md = java.security.MessageDigest.getInstance("SHA-256");
        try (var in = java.nio.file.Files.newInputStream(p)) {
            byte[] buf = new byte[1 << 20];
            int n;
            while ((n = in.read(buf)) > 0) {
                md.update(buf, 0, n);
            }
        }
        return java.util.HexFormat.of().formatHex(md.digest());
    }

    /** The template sandbox {@code id}'s root disk rests on: the folder of its disk's backing file. */
    static Path templateOf(String id) throws java.io.IOException {
        Process info = new ProcessBuilder("qemu-img", "info", "-U", "--output=json", HOME.resolve("data/sandboxes")
                .resolve(id).resolve("root.qcow2").toString()).redirectErrorStream(true).start();
        String json = new String(info.getInputStream().readAllBytes());
        java.util.regex.Matcher m = java.util.regex.Pattern.compile("\"backing-filename\": \"([^\"]*)/disk.qcow2\"")
                .matcher(json);
        if (!m.find()) {
            throw new AssertionError("sandbox " + id + " rests on no template: " + json);
        }
        return Path.of(m.group(1));
    }

    public static void deleteTree(Path root) throws java.io.IOException {
        try (var walk = java.nio.file.Files.walk(root)) {
            for (Path p : walk.sorted(java.util.Comparator.reverseOrder()).toList()) {
                p.toFile().setWritable(true);
                java.nio.file.Files.deleteIfExists(p);
            }
        }
    }

    public static Result run(Duration timeout, String... args) {
        return run(timeout, null, args);
    }

    /** Runs the CLI with {@code stdin} (or nothing) as its standard input. */
    public static Result run(Duration timeout, byte[] stdin, String... args) {
        return runWith(java.util.Map.of(), timeout, stdin, args);
    }

    /**
     * Runs the CLI with {@code env} added to its environment (and so to a daemon it starts): the crash walk's
     * {@code KOSA8_TEST_CRASH}.
     */
    public static Result runWith(java.util.Map<String, String> env, Duration timeout, byte[] stdin, String... args) {
        try {
            Files.createDirectories(HOME);
            ProcessBuilder pb = builder(args);
            pb.environment().putAll(env);
            Process p = pb.start();
            ByteArrayOutputStream out = new ByteArrayOutputStream();
            ByteArrayOutputStream err = new ByteArrayOutputStream();
            Thread o = Thread.ofVirtual().start(() -> copy(p.getInputStream(), out));
            Thread e = Thread.ofVirtual().start(() -> copy(p.getErrorStream(), err));
            Thread.ofVirtual().start(() -> {
                try (var in = p.getOutputStream()) {
                    if (stdin != null) {
                        in.write(stdin);
                    }
                } catch (IOException ignored) {
                    // the CLI did not read its stdin
                }
            });
            if (!p.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
                p.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
                o.join(2000);
                e.join(2000);
                throw new AssertionError("kosa8 " + String.join(" ", args) + " did not finish within "
                        + timeout.toSeconds() + " s\n--- stdout ---\n" + tail(out.toString(StandardCharsets.UTF_8))
                        + "\n--- stderr ---\n" + tail(err.toString(StandardCharsets.UTF_8)) + consoles());
            }
            o.join();
            e.join();
            return new Result(p.exitValue(), out.toByteArray(), err.toString(StandardCharsets.UTF_8));
        } catch (IOException | InterruptedException ex) {
            throw new AssertionError("cannot run kosa8: " + ex, ex);
        }
    }

    /** Runs and requires exit 0, else fails with everything the CLI printed and the sandboxes' consoles. */
    public static Result ok(Duration timeout, String... args) {
        Result r = run(timeout, args);
        if (r.exitCode() != 0) {
            throw new AssertionError("kosa8 " + String.join(" ", args) + " failed: " + r + consoles());
        }
        return r;
    }

    /** The last lines of every sandbox's console, for failure messages. */
    public static String consoles() {
        StringBuilder sb = new StringBuilder();
        Path boxes = HOME.resolve("data/sandboxes");
        if (Files.isDirectory(boxes)) {
            try (var s = Files.list(boxes)) {
                for (Path d : s.toList()) {
                    sb.append("\n--- console of ").append(d.getFileName()).append(" ---\n")
                            .append(dev.kosa8.vm.Tail.of(d.resolve("console.log"), 15));
                }
            } catch (IOException ignored) {
                // nothing more to show
            }
        }
        return sb.toString();
    }

    private static String tail(String s) {
        return s.length() > 4000 ? "…" + s.substring(s.length() - 4000) : s;
    }

    private static void copy(InputStream in, ByteArrayOutputStream out) {
        try {
            in.transferTo(out);
        } catch (IOException ignored) {
            // the process is gone
        }
    }
}
