package dev.kosa8.it;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * {@code kosa8 agent codex} and {@code kosa8 agent gemini}: the real Codex CLI and Gemini CLI from the real npm
 * registry, each built into its image from its definition (the Node step is Claude Code's, so a home that built
 * that one takes it from the cache), each printing its own version from inside the guest, on a folder of its own;
 * then the folder's sandbox removed.
 */
@Tag("long") // builds two agent images (a few minutes each under TCG): ./run-tests long
class OtherAgentsIT {
    static final Duration BUILD = Duration.ofMinutes(40);
    static final Duration T = Duration.ofMinutes(5);

    @BeforeAll
    static void setUp() throws Exception {
        Kosa.useNpmRegistrySettings(T);
    }

    @AfterAll
    static void tearDown() throws Exception {
        Kosa.dropNetworkSettings(T);
    }

    @ParameterizedTest(name = "{0}")
    @CsvSource({"codex, '(?m)^codex-cli (\\d+\\.\\d+\\.\\d+)'", "gemini, '(?m)^(\\d+\\.\\d+\\.\\d+)\\s*$'"})
    void theAgentBuildsRunsInTheGuestAndPrintsItsVersion(String agent, String version) throws Exception {
        Path project = Kosa.HOME.resolveSibling("it-" + agent).resolve("project");
        if (Files.exists(project)) {
            Kosa.deleteTree(project);
        }
        Files.createDirectories(project);
        Kosa.run(T, "agent", "rm", "--workspace", project.toString(), agent); // what a failed run left
        try {
            long t0 = System.nanoTime();
            Kosa.Result r = Kosa.run(BUILD, "agent", "--workspace", project.toString(), agent, "--", "--version");
            long millis = (System.nanoTime() - t0) / 1_000_000;
            assertThat(r.exitCode()).as(r.toString()).isZero();
            Matcher m = Pattern.compile(version).matcher(r.stdout());
            assertThat(m.find()).as(r.toString()).isTrue();
            assertThat(r.stderr()).contains("is " + agent + "'s for " + project);
            // the version came from the guest: the agent's program is in the image, not on this host
            String ls = Kosa.ok(T, "agent", "ls").stdout();
            Matcher s = Pattern.compile("(?m)^" + agent + "-[0-9a-f]{12}\\s+" + agent + "\\s+([0-9a-f]{12})\\s").matcher(ls);
            assertThat(s.find()).as(ls).isTrue();
            assertThat(Kosa.ok(T, "exec", s.group(1), "--", "sh", "-c", "command -v " + agent).stdout())
                    .startsWith("/usr/local/bin/" + agent);
            System.out.printf("OtherAgentsIT: first `kosa8 agent %s -- --version` %d ms, %s%n", agent, millis,
                    m.group(0).strip());
        } finally {
            Kosa.run(T, "agent", "rm", "--workspace", project.toString(), agent);
        }
    }
}
