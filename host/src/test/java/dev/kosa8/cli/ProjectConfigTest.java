package dev.kosa8.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.kosa8.host.KosaException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

/** .kosa8/config.toml: read, checked line by line, and overridden by the command line (docs/cli.md). */
class ProjectConfigTest {
    @TempDir
    Path folder;

    private Path write(String toml) throws Exception {
        Files.createDirectories(folder.resolve(".kosa8"));
        return Files.writeString(folder.resolve(ProjectConfigFile.PATH), toml);
    }

    private EffectiveSettings effective(String... args) {
        SandboxOptions o = new SandboxOptions();
        new CommandLine(o).parseArgs(args);
        o.workspace = folder.toString();
        return o.effective();
    }

    @Test
    void everySettingIsReadAndTheCommandLineReplacesEachItGives() throws Exception {
        Path file = write("""
                # the project's sandbox
                image = "tools:1"
                cpus = 4
                memory = "2G"
                net = "closed"
                allow = ["@pypi", "api.github.com"]
                passthrough = ["pinned.example"]
                secrets = ["OPENAI_API_KEY"]
                """);
        EffectiveSettings fromFile = effective();
        assertThat(fromFile.value("image")).isEqualTo("tools:1");
        assertThat(fromFile.value("cpus")).isEqualTo("4");
        assertThat(fromFile.list("allow")).containsExactly("@pypi", "api.github.com");
        assertThat(fromFile.settings().values()).extracting(EffectiveSettings.Setting::source).containsOnly(file.toString());

        EffectiveSettings overridden = effective("--memory", "512M", "--allow", "example.org");
        assertThat(overridden.value("memory")).isEqualTo("512M");
        assertThat(overridden.settings().get("memory").source()).isEqualTo(EffectiveSettings.COMMAND_LINE);
        assertThat(overridden.list("allow")).as("a list given replaces the file's whole").containsExactly("example.org");
        assertThat(overridden.value("cpus")).isEqualTo("4");
    }

    @Test
    void withoutAFileEverySettingIsKosa8sDefault() {
        EffectiveSettings e = effective();
        assertThat(e.value("cpus")).isEqualTo("2");
        assertThat(e.value("memory")).isEqualTo("1G");
        assertThat(e.value("net")).isEqualTo("closed");
        assertThat(e.value("image")).isEmpty();
        assertThat(e.list("allow")).isEmpty();
        assertThat(e.settings().values()).extracting(EffectiveSettings.Setting::source)
                .containsOnly(EffectiveSettings.DEFAULT);
    }

    @Test
    void eachMistakeIsAnErrorNamingTheFileAndItsLine() throws Exception {
        record Case(String toml, String message) {
        }
        List<Case> cases = List.of(
                new Case("memory = \"2G\"\ncpu = 4\n", "line 2: has no setting 'cpu'"),
                new Case("\n\ncpus = \"four\"\n", "line 3: cpus must be a whole number from 1 to 64"),
                new Case("cpus = 0\n", "line 1: cpus must be a whole number"),
                new Case("memory = \"lots\"\n", "line 1: memory 'lots' is not a size"),
                new Case("image = 3\n", "line 1: image must be a string"),
                new Case("net = \"half\"\n", "line 1: net 'half' is not closed, open or none"),
                new Case("allow = \"@pypi\"\n", "line 1: allow must be a list of strings"),
                new Case("allow = [\"@pypi\", 3]\n", "line 1: allow must be a list of non-empty strings"),
                new Case("image = \"a\"\nmemory = \"2G\n", "line 2: is not valid TOML"),
                new Case("cpus = 2\ncpus = 3\n", "line 2: sets cpus again (first on line 1)"));
        for (Case c : cases) {
            Path file = write(c.toml());
            assertThatThrownBy(() -> effective()).as(c.toml()).isInstanceOf(KosaException.class)
                    .hasMessageStartingWith(file.toString()).hasMessageContaining(c.message());
        }
    }

    @Test
    void aFileThatIsNotARegularFileOrIsHugeIsRefused() throws Exception {
        Files.createDirectories(folder.resolve(".kosa8"));
        Files.createSymbolicLink(folder.resolve(ProjectConfigFile.PATH), Path.of("/etc/passwd"));
        assertThatThrownBy(this::effective).hasMessageContaining("is not a regular file");
        Files.delete(folder.resolve(ProjectConfigFile.PATH));
        write("# " + "x".repeat(70_000) + "\n");
        assertThatThrownBy(this::effective).hasMessageContaining("larger than 64 KiB");
    }

    @Test
    void lineOfFindsTheKeyHoweverItIsQuoted() {
        assertThat(ProjectConfigFile.lineOf("a = 1\n  \"memory\" = \"2G\"\n", "memory")).isEqualTo(2);
        assertThat(ProjectConfigFile.lineOf("memoryx = 1\n", "memory")).isZero();
    }
}
