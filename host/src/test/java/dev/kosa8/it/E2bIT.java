package dev.kosa8.it;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;

/**
 * The official E2B JS SDK, pinned by host/src/test/e2b-client's lockfile, running an ordinary E2B script
 * (e2b-test.mjs: nothing of kosa8 in it) against the daemon's E2B listener and real microVMs: two sandboxes,
 * commands, stdin, kill, files, pause and resume, kill then connect. The script prints its counts; all must pass.
 */
class E2bIT {
    static final Duration T = Duration.ofMinutes(2);
    static final Path CLIENT = Path.of("src/test/e2b-client").toAbsolutePath();
    /** The checks e2b-test.mjs makes. */
    static final int CHECKS = 22;

    @AfterAll
    static void stopListener() {
        Kosa.run(T, "e2b", "stop");
    }

    static Map<String, String> e2bEnv() {
        Kosa.ok(Duration.ofMinutes(20), "e2b", "start", "--port", "0"); // builds the image on first use
        Map<String, String> env = new LinkedHashMap<>();
        for (String line : Kosa.ok(T, "e2b", "env").stdout().split("\n")) {
            if (line.startsWith("export ")) {
                int eq = line.indexOf('=');
                env.put(line.substring(7, eq), line.substring(eq + 1));
            }
        }
        assertThat(env).containsKeys("E2B_API_URL", "E2B_SANDBOX_URL", "E2B_API_KEY", "E2B_DOMAIN");
        assertThat(env.get("E2B_API_KEY")).matches("e2b_[0-9a-f]{40}");
        assertThat(env.get("E2B_API_URL")).startsWith("http://127.0.0.1:");
        return env;
    }

    static void npmCi() throws Exception {
        if (Files.isDirectory(CLIENT.resolve("node_modules/e2b"))) {
            return;
        }
        Process p = new ProcessBuilder("npm", "ci", "--no-audit", "--no-fund").directory(CLIENT.toFile())
                .redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(p.waitFor(5, TimeUnit.MINUTES)).isTrue();
        assertThat(p.exitValue()).as("npm ci: " + out).isZero();
    }

    @Test
    void theE2bSdkRunsAnOrdinaryScriptAgainstMicroVms() throws Exception {
        npmCi();
        Map<String, String> env = e2bEnv();
        ProcessBuilder pb = new ProcessBuilder("node", "e2b-test.mjs").directory(CLIENT.toFile())
                .redirectErrorStream(true);
        pb.environment().putAll(env);
        Process p = pb.start();
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        Thread copy = Thread.ofVirtual().start(() -> {
            try {
                p.getInputStream().transferTo(out);
            } catch (java.io.IOException ignored) {
                // the process went
            }
        });
        boolean ended = p.waitFor(15, TimeUnit.MINUTES);
        if (!ended) {
            p.destroyForcibly();
        }
        copy.join(5000);
        String printed = out.toString(StandardCharsets.UTF_8);
        System.out.println(printed);
        assertThat(ended).as("the script did not end within 15 minutes:\n" + printed).isTrue();
        assertThat(printed).as(printed + Kosa.consoles()).contains(CHECKS + " passed, 0 failed");
        assertThat(p.exitValue()).isZero();
    }
}
