package dev.kosa8.it;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;

/**
 * {@code kosa8 mcp} driven by the official MCP TypeScript SDK's client (from npm, pinned by
 * src/test/mcp-client/package-lock.json) against real microVMs: the tools listed, a sandbox created and seen as
 * the client's in {@code kosa8 ls}, {@code python3 -c 'print(6*7)'} answering 42, a background process read and
 * killed, stdin to another, files written and read, listed, stat'ed, renamed and removed, a checkpoint, a fork
 * from it, a rewind to it (the file written after it gone), the sandbox removed; a malformed request, an unknown
 * tool, an oversized argument and a path escape each an MCP error with the server still serving; progress
 * notifications during a long call; and the fork, not kept, removed when the client closes the session. The steps
 * are in mcp-it.mjs; one sandbox and its fork.
 */
class McpIT {
    static final Path SOURCES = Path.of("src", "test", "mcp-client");
    static final Path CLIENT = Path.of("target", "mcp-client").toAbsolutePath();
    private static final Pattern MADE = Pattern.compile("(?m)^made ([0-9a-f]{12})$");
    private static final List<String> made = new ArrayList<>();

    @AfterAll
    static void removeLeftovers() {
        for (String id : made) {
            Kosa.run(Duration.ofMinutes(1), "rm", "-f", id);
        }
    }

    /**
     * Skips the test when surefire runs it (a unit-test filter such as {@code -Dtest='Mcp*'} names this class too):
     * it boots VMs, so it runs only under failsafe, whose main classes are the packaged jar, and through it-slot.
     */
    static void onlyAsAnIntegrationTest() {
        String where = String.valueOf(dev.kosa8.host.HostPaths.class.getProtectionDomain().getCodeSource()
                .getLocation());
        org.junit.jupiter.api.Assumptions.assumeTrue(where.endsWith(".jar"),
                "an integration test (it boots VMs): run it with -Dit.test, not -Dtest");
    }

    /** The client's package, installed with `npm ci` from its lock file; again only when the lock changed. */
    static void installClient() throws Exception {
        Files.createDirectories(CLIENT);
        Path lock = SOURCES.resolve("package-lock.json");
        Path installedLock = CLIENT.resolve("node_modules/.kosa8-installed-lock.json");
        for (String f : List.of("package.json", "package-lock.json", "mcp-it.mjs", "mcp-http-it.mjs")) {
            Files.copy(SOURCES.resolve(f), CLIENT.resolve(f), StandardCopyOption.REPLACE_EXISTING);
        }
        if (Files.exists(installedLock) && Arrays.equals(Files.readAllBytes(lock), Files.readAllBytes(installedLock))) {
            return;
        }
        Process npm = new ProcessBuilder("npm", "ci", "--no-audit", "--no-fund").directory(CLIENT.toFile())
                .redirectErrorStream(true).start();
        String out = new String(npm.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(npm.waitFor(5, TimeUnit.MINUTES)).as("npm ci finished").isTrue();
        assertThat(npm.exitValue()).as("npm ci: %s", out).isZero();
        Files.copy(lock, installedLock, StandardCopyOption.REPLACE_EXISTING);
    }

    @Test
    void theOfficialTypeScriptClientDrivesEveryToolAndTheServerOutlivesBadRequests() throws Exception {
        onlyAsAnIntegrationTest();
        installClient();
        ProcessBuilder pb = new ProcessBuilder("node", CLIENT.resolve("mcp-it.mjs").toString(),
                new ObjectMapper().writeValueAsString(Kosa.command()));
        pb.environment().putAll(Kosa.builder().environment());
        pb.directory(Kosa.CWD.toFile()).redirectErrorStream(true);
        Process p = pb.start();
        StringBuilder out = new StringBuilder();
        Thread reader = Thread.ofVirtual().start(() -> {
            try {
                p.getInputStream().transferTo(new java.io.OutputStream() {
                    @Override
                    public void write(int b) {
                        write(new byte[] {(byte) b}, 0, 1);
                    }

                    @Override
                    public void write(byte[] b, int off, int len) {
                        String s = new String(b, off, len, StandardCharsets.UTF_8);
                        synchronized (out) {
                            out.append(s);
                        }
                        System.out.print(s);
                    }
                });
            } catch (IOException ignored) {
                // the client ended
            }
        });
        boolean done = p.waitFor(20, TimeUnit.MINUTES);
        if (!done) {
            p.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
        }
        reader.join(5000);
        String log;
        synchronized (out) {
            log = out.toString();
        }
        Matcher m = MADE.matcher(log);
        while (m.find()) {
            made.add(m.group(1));
        }
        assertThat(done).as("the client finished within 20 minutes:\n%s%s", log, Kosa.consoles()).isTrue();
        assertThat(p.exitValue()).as("the client's steps:\n%s%s", log, Kosa.consoles()).isZero();
        for (String step : List.of("list-tools", "policy-refused", "create", "listed-as-mcp", "run 42",
                "run-stdin-exit-timeout", "progress", "background-read-killed", "background-stdin", "write-read",
                "file-operations", "checkpoint", "list-checkpoints", "fork", "rewind", "malformed", "unknown-tool",
                "oversized", "path-escape", "remove", "closed")) {
            assertThat(log).as("step %s", step).containsPattern("(?m)^ok " + Pattern.quote(step));
        }
        assertThat(made).hasSize(2);

        // the session's end removed the fork it made and did not keep
        List<String> left = made;
        long deadline = System.nanoTime() + Duration.ofMinutes(1).toNanos();
        while (System.nanoTime() < deadline) {
            String ls = Kosa.ok(Duration.ofMinutes(1), "ls", "-q").stdout();
            left = made.stream().filter(ls::contains).toList();
            if (left.isEmpty()) {
                break;
            }
            Thread.sleep(1000);
        }
        assertThat(left).as("sandboxes the MCP session made, still there after it ended").isEmpty();
    }
}
