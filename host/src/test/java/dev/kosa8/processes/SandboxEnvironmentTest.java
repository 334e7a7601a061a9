package dev.kosa8.processes;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class SandboxEnvironmentTest {
    @Test
    void variablesSetAreKeptOnDiskAndUnsetOnesGo(@TempDir Path dir) {
        assertThat(SandboxEnvironment.read(dir)).isEmpty();
        SandboxEnvironment.change(dir, Map.of("A", "1", "B", "two words"), List.of());
        assertThat(SandboxEnvironment.change(dir, Map.of("C", "3"), List.of("A"))).containsExactly(
                Map.entry("B", "two words"), Map.entry("C", "3"));
        assertThat(SandboxEnvironment.read(dir)).containsOnlyKeys("B", "C");
    }

    @Test
    void aForkGetsItsParentsVariablesAndNoFileWhenItHadNone(@TempDir Path parent, @TempDir Path fork,
                                                           @TempDir Path other, @TempDir Path otherFork)
            throws Exception {
        SandboxEnvironment.change(parent, Map.of("A", "1"), List.of());
        SandboxEnvironment.copy(parent, fork);
        assertThat(SandboxEnvironment.read(fork)).containsExactly(Map.entry("A", "1"));
        SandboxEnvironment.copy(other, otherFork);
        assertThat(Files.exists(otherFork.resolve(SandboxEnvironment.FILE))).isFalse();
    }

    @Test
    void badNamesAndValuesAreAllNamedAndNothingIsWritten(@TempDir Path dir) {
        assertThatThrownBy(() -> SandboxEnvironment.change(dir, Map.of("1X", "a", "Y", "b\0c"), List.of()))
                .hasMessageContaining("'1X' is not a variable name").hasMessageContaining("Y's value must have no NUL");
        assertThat(Files.exists(dir.resolve(SandboxEnvironment.FILE))).isFalse();
    }

    @Test
    void aDamagedFileIsRefusedSayingWhatToDo(@TempDir Path dir) throws Exception {
        SandboxEnvironment.change(dir, Map.of("A", "1"), List.of());
        Path f = dir.resolve(SandboxEnvironment.FILE);
        Files.writeString(f, Files.readString(f).replace("\"1\"", "\"2\""));
        assertThatThrownBy(() -> SandboxEnvironment.read(dir)).hasMessageContaining(SandboxEnvironment.FILE)
                .satisfies(e -> assertThat(((dev.kosa8.host.KosaException) e).suggestion())
                        .contains("kosa8 env"));
    }
}
