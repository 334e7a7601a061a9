package dev.kosa8.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assumptions.assumeThat;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/** Commands in one running sandbox, through the real CLI, daemon, QEMU and agent. */
@ExtendWith(SharedSandbox.class)
class ExecIT {

    /**
     * The commands an agent calls all day, started by the real launcher as a
     * user starts them, never read the 47 MB jar (its central directory alone
     * is about 20 ms of each start: docs/performance.md): every class comes
     * from the AOT cache, and nothing opens the jar for its manifest or its
     * service files. Each line as it prints, with the JVM's class log.
     */
    @Test
    void theHotCommandsThroughTheLauncherNeverReadTheJar(SharedSandbox.Booted box, @TempDir Path logs)
            throws Exception {
        Path repo = Path.of("").toAbsolutePath().getParent();
        Path launcher = repo.resolve("kosa8");
        Path jar = repo.resolve("host/target/kosa8.jar");
        Path aot = repo.resolve("host/target/kosa8.aot");
        try (var sources = Files.walk(repo.resolve("host/src/main"))) {
            long newer = Files.getLastModifiedTime(jar).toMillis();
            assumeThat(sources.noneMatch(p -> p.toFile().lastModified() > newer))
                    .as("a source newer than the jar: the launcher would rebuild it under the running suite").isTrue();
        }
        Kosa.ok(Duration.ofMinutes(2), "ls"); // a daemon of this build, so no line below starts one
        launch(launcher, null, "--version"); // the launcher's full check; the cache trained when missing
        if (Files.size(aot) == 0) { // the JDK crashed writing it (rare, the launcher says): train once more
            Files.delete(aot);
            launch(launcher, null, "--version");
        }
        assertThat(Files.size(aot)).as("the launcher's AOT cache").isPositive();
        String[][] lines = {{"--version"}, {"ls"}, {"exec", box.id(), "--", "true"}, {"run", "--", "true"}};
        for (String[] line : lines) {
            Path log = logs.resolve(line[0] + ".log");
            launch(launcher, log, line);
            List<String> read = Files.readAllLines(log).stream().filter(l -> l.contains("source: file:")
                    || l.contains("java/util/zip/ZipFile$Source'")).toList();
            assertThat(read).as("kosa8 %s: classes from the jar, or the jar opened", String.join(" ", line)).isEmpty();
            assertThat(Files.readString(log)).as("the log is there").contains("source: shared objects file");
        }
    }

    /** The launcher with the tests' environment; with {@code log}, the JVM's class log written there. */
    private static void launch(Path launcher, Path log, String... args) throws Exception {
        List<String> argv = new ArrayList<>(List.of(launcher.toString()));
        argv.addAll(List.of(args));
        ProcessBuilder pb = Kosa.builder(args).command(argv).redirectErrorStream(true); // the tests' environment
        if (log != null) {
            pb.environment().put("JDK_JAVA_OPTIONS", "-Xlog:class+load=info,class+init=info:file=" + log);
        }
        Process p = pb.start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(p.waitFor(5, TimeUnit.MINUTES)).isTrue();
        assertThat(p.exitValue()).as("kosa8 %s: %s", String.join(" ", args), out).isZero();
    }

    @Test
    void echoesAndReturnsTheCommandsExitCode(SharedSandbox.Booted box) {
        Kosa.Result r = box.exec("sh", "-c", "echo out; echo err >&2; exit 7");
        assertThat(r.exitCode()).as(r.toString()).isEqualTo(7);
        assertThat(r.stdout()).isEqualTo("out\n");
        assertThat(r.stderr()).isEqualTo("err\n");
    }

    @Test
    void runsRealProgramsOfTheImage(SharedSandbox.Booted box) {
        Kosa.Result py = box.exec("python3", "-c", "print(6*7)");
        assertThat(py.stdout()).as(py.toString()).isEqualTo("42\n");
        Kosa.Result git = box.exec("git", "--version");
        assertThat(git.stdout()).as(git.toString()).startsWith("git version 2.");
        Kosa.Result kernel = box.exec("uname", "-r");
        assertThat(kernel.stdout()).as("the guest runs its own kernel").contains("amd64");
    }

    @Test
    void theGuestKeepsTimeByACounterNotByTicks(SharedSandbox.Booted box) {
        // jiffies lose the ticks a loaded host delivers late: under TCG the guest's clock ran at 0.6 of the host's
        Kosa.Result r = box.exec("cat", "/sys/devices/system/clocksource/clocksource0/current_clocksource");
        assertThat(r.stdout().strip()).as(r.toString()).isIn("tsc", "kvm-clock");
    }

    @Test
    void aCommandKilledByASignalExitsWith128PlusTheSignal(SharedSandbox.Booted box) {
        Kosa.Result r = box.exec("sh", "-c", "kill -KILL $$");
        assertThat(r.exitCode()).as(r.toString()).isEqualTo(137);
    }

    @Test
    void guestProcessesInheritNoDescriptorOfTheAgent(SharedSandbox.Booted box) {
        // 0, 1, 2 and the descriptor ls itself opens to list the directory
        Kosa.Result r = box.exec("ls", "/proc/self/fd");
        assertThat(r.stdout().split("\\s+")).as(r.toString()).containsExactlyInAnyOrder("0", "1", "2", "3");
    }

    @Test
    void aMissingProgramExitsWith127AndSaysSo(SharedSandbox.Booted box) {
        Kosa.Result r = box.exec("no-such-program-here");
        assertThat(r.exitCode()).isEqualTo(127);
        assertThat(r.stderr()).contains("no-such-program-here: command not found");
    }

    @Test
    void pipesStdinThrough(SharedSandbox.Booted box) {
        byte[] input = new byte[3 * 1024 * 1024 + 17];
        new Random(7).nextBytes(input);
        Kosa.Result r = Kosa.run(Duration.ofMinutes(3), input, "exec", "-i", box.id(), "--", "sha256sum");
        assertThat(r.exitCode()).as(r.toString()).isZero();
        assertThat(r.stdout()).startsWith(sha256(input));
    }

    @Test
    void hundredMegabytesOfOutputArriveIntact(SharedSandbox.Booted box) throws Exception {
        // a deterministic 100 MB stream: its checksum is computed in the guest and compared with what arrived
        Kosa.Result sum = box.exec(Duration.ofMinutes(5), "sh", "-c", "head -c 104857600 /dev/zero | tr '\\0' 'k' | sha256sum");
        Kosa.Result r = box.exec(Duration.ofMinutes(5), "sh", "-c", "head -c 104857600 /dev/zero | tr '\\0' 'k'");
        assertThat(r.exitCode()).isZero();
        assertThat(r.stdoutBytes()).hasSize(104857600);
        assertThat(sum.stdout()).startsWith(sha256(r.stdoutBytes()));
    }

    @Test
    void keepsStdoutAndStderrApart(SharedSandbox.Booted box) {
        Kosa.Result r = box.exec("sh", "-c", "for i in 1 2 3 4 5; do echo o$i; echo e$i >&2; done");
        assertThat(r.stdout()).isEqualTo("o1\no2\no3\no4\no5\n");
        assertThat(r.stderr()).isEqualTo("e1\ne2\ne3\ne4\ne5\n");
    }

    @Test
    void twentyExecsAtOnce(SharedSandbox.Booted box) throws Exception {
        List<Process> running = new ArrayList<>();
        for (int i = 0; i < 20; i++) {
            running.add(Kosa.builder("exec", box.id(), "--", "sh", "-c", "sleep 1; echo n" + i).start());
        }
        for (int i = 0; i < 20; i++) {
            Process p = running.get(i);
            assertThat(p.waitFor(5, TimeUnit.MINUTES)).as("exec %d finished", i).isTrue();
            String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            assertThat(p.exitValue()).as(new String(p.getErrorStream().readAllBytes(), StandardCharsets.UTF_8)).isZero();
            assertThat(out).isEqualTo("n" + i + "\n");
        }
    }

    @Test
    void aPtyShellCanBeDrivenByAScript(SharedSandbox.Booted box) {
        String script = "stty size\ntty\necho $((6*7))\nexit 3\n";
        Kosa.Result r = Kosa.run(Duration.ofMinutes(2), script.getBytes(StandardCharsets.UTF_8),
                "exec", "-t", box.id(), "--", "bash", "--norc", "-i");
        assertThat(r.exitCode()).as(r.toString()).isEqualTo(3);
        assertThat(r.stdout()).contains("24 80").contains("/dev/pts/").contains("42");
    }

    @Test
    void aSignalToTheCliReachesTheCommand(SharedSandbox.Booted box) throws Exception {
        ProcessBuilder b = Kosa.builder("exec", box.id(), "--", "sh", "-c",
                "trap 'echo got-int; exit 42' INT; echo ready; while :; do sleep 0.2; done");
        // a test run started as a background job inherits SIGINT ignored (POSIX), and so would the CLI, rightly
        // deaf to Ctrl-C then; env (which execs, keeping the pid) gives it the default disposition a terminal has
        b.command().addAll(0, List.of("env", "--default-signal=INT"));
        Process p = b.start();
        var out = new java.io.BufferedReader(new java.io.InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8));
        assertThat(out.readLine()).isEqualTo("ready");
        new ProcessBuilder("kill", "-INT", String.valueOf(p.pid())).start().waitFor();
        assertThat(p.waitFor(2, TimeUnit.MINUTES)).isTrue();
        assertThat(out.readLine()).isEqualTo("got-int");
        assertThat(p.exitValue()).isEqualTo(42);
    }

    @Test
    void copiesFilesInAndOutIntact(SharedSandbox.Booted box, @TempDir Path tmp) throws Exception {
        byte[] data = new byte[5 * 1024 * 1024 + 3];
        new Random(11).nextBytes(data);
        Path src = tmp.resolve("in.bin");
        Files.write(src, data);
        Kosa.ok(Duration.ofMinutes(3), "cp", src.toString(), box.id() + ":/root/in.bin");
        assertThat(box.exec("sha256sum", "/root/in.bin").stdout()).startsWith(sha256(data));
        Path back = tmp.resolve("out.bin");
        Kosa.ok(Duration.ofMinutes(3), "cp", box.id() + ":/root/in.bin", back.toString());
        assertThat(sha256(Files.readAllBytes(back))).isEqualTo(sha256(data));
        Kosa.Result missing = Kosa.run(Duration.ofMinutes(1), "cp", box.id() + ":/no/such/file", back.toString());
        assertThat(missing.exitCode()).isNotZero();
        assertThat(missing.stderr()).contains("does not exist");
        assertThat(sha256(Files.readAllBytes(back))).as("a failed copy leaves the old file alone").isEqualTo(sha256(data));
    }

    static String sha256(byte[] b) {
        try {
            return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(b));
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }
}
