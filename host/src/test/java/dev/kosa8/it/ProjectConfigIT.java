package dev.kosa8.it;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.json.JsonMapper;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/**
 * A project's {@code .kosa8/config.toml} (docs/cli.md, "Per-project settings"): its allow-list and memory
 * apply to a sandbox made in the folder, an option on the command line overrides the file, a mistake in the file
 * is an error naming its line, and the sandbox cannot rewrite the file for the next run.
 */
class ProjectConfigIT {
    static final Duration T = Duration.ofMinutes(3);

    @Test
    void aProjectsSettingsApplyTheCommandLineOverridesThemAndAMistakeNamesItsLine() throws Exception {
        Path folder = Kosa.HOME.resolveSibling("it-workspaces").resolve("ProjectConfigIT");
        if (Files.exists(folder)) {
            Kosa.deleteTree(folder);
        }
        Files.createDirectories(folder.resolve(".kosa8"));
        Path file = folder.resolve(".kosa8/config.toml");
        Files.writeString(file, """
                # this project's sandboxes
                memory = "256M"
                allow = ["example.test"]
                """);
        String ws = folder.toRealPath().toString();

        Kosa.Result show = Kosa.ok(T, "config", "show", "--workspace", ws, "--memory", "320M");
        assertThat(show.stdout()).containsPattern("memory +320M +command line")
                .containsPattern("allow +example.test +" + java.util.regex.Pattern.quote(file.toRealPath().toString()))
                .containsPattern("cpus +2 +default");

        String id = Kosa.ok(T, "create", "--workspace", ws).stdout().strip();
        try {
            JsonNode inspect = JsonMapper.builder().build().readTree(Kosa.ok(T, "inspect", id).stdout());
            assertThat(inspect.path("memoryMiB").asInt()).isEqualTo(256);
            assertThat(Kosa.ok(T, "net", id).stdout()).contains("example.test");
            long memTotalKiB = Long.parseLong(Kosa.ok(T, "exec", id, "--", "sh", "-c",
                    "awk '/MemTotal/ {print $2}' /proc/meminfo").stdout().strip());
            assertThat(memTotalKiB / 1024).isBetween(180L, 256L);

            // the sandbox cannot widen the next sandbox's policy: its write to the file is held, not applied
            Kosa.Result widen = Kosa.run(T, "exec", id, "--", "sh", "-c",
                    "printf 'memory = \"384M\"\\nallow = [\"*.evil.test\"]\\n' > " + ws + "/.kosa8/config.toml");
            assertThat(widen.exitCode()).as(widen.toString()).isZero();
            assertThat(file).content().contains("example.test").doesNotContain("evil");
            assertThat(Kosa.ok(T, "config", "show", "--workspace", ws).stdout()).doesNotContain("evil");
        } finally {
            Kosa.run(Duration.ofMinutes(1), "rm", "-f", id);
        }

        Files.writeString(file, "memory = \"2G\"\ncpu = 4\n");
        Kosa.Result bad = Kosa.run(T, "create", "--workspace", ws);
        assertThat(bad.exitCode()).isEqualTo(2);
        assertThat(bad.stderr()).contains(".kosa8/config.toml line 2: has no setting 'cpu'", "cpus");
    }
}
