package dev.kosa8.daemon;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.kosa8.host.KosaException;
import dev.kosa8.vm.JailProbe;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@link Settings}: defaults without a file, sizes as people write them, every bad value named. */
class SettingsTest {
    @TempDir
    Path dir;

    @Test
    void withoutAFileEveryBoundHasItsDefault() {
        Settings s = Settings.load(dir);
        assertThat(s).isEqualTo(Settings.DEFAULTS);
        assertThat(s.jail()).isEqualTo(JailProbe.Mode.AUTO);
        assertThat(s.streams()).isEqualTo(64);
        assertThat(s.budget()).isEqualTo(new Budget(32L << 30, 64, 0, 4L << 20));
    }

    @Test
    void valuesAreReadAsWritten() throws Exception {
        Files.writeString(dir.resolve("settings.json"), """
                {"jail": "required", "consoleLimit": "1M", "streams": 8, "diskBudget": "20G",
                 "checkpointCount": 10, "checkpointBytes": 1073741824, "processes": 3, "processOutput": "64K",
                 "processRecords": 5}
                """);
        Settings s = Settings.load(dir);
        assertThat(s.processes()).isEqualTo(new dev.kosa8.processes.ProcessLimits(3, 64L << 10, 5));
        assertThat(s.jail()).isEqualTo(JailProbe.Mode.REQUIRED);
        assertThat(s.streams()).isEqualTo(8);
        assertThat(s.budget()).isEqualTo(new Budget(20L << 30, 10, 1L << 30, 1L << 20));
    }

    @Test
    void everyBadValueAndUnknownNameIsNamed() throws Exception {
        Files.writeString(dir.resolve("settings.json"), """
                {"jail": "sometimes", "consoleLimit": "1K", "streams": 0, "diskBudget": "lots", "colour": "blue",
                 "processes": 0, "processOutput": "10"}
                """);
        assertThatThrownBy(() -> Settings.load(dir)).isInstanceOf(KosaException.class)
                .hasMessageContaining("unknown jail setting 'sometimes'")
                .hasMessageContaining("\"consoleLimit\" must be at least 65536 bytes")
                .hasMessageContaining("\"streams\" must be a whole number from 1 to 4096")
                .hasMessageContaining("\"diskBudget\" must be a size such as 4M")
                .hasMessageContaining("unknown setting \"colour\"")
                .hasMessageContaining("\"processes\" must be a whole number from 1 to 4096")
                .hasMessageContaining("\"processOutput\" must be at least 1024 bytes");
        Files.writeString(dir.resolve("settings.json"), "[1, 2]");
        assertThatThrownBy(() -> Settings.load(dir)).hasMessageContaining("must be one JSON object");
    }

    @Test
    void sizesAreReadInPowersOf1024() {
        assertThat(Settings.parseBytes("4096")).isEqualTo(4096);
        assertThat(Settings.parseBytes("64K")).isEqualTo(64L << 10);
        assertThat(Settings.parseBytes("4MiB")).isEqualTo(4L << 20);
        assertThat(Settings.parseBytes("20g")).isEqualTo(20L << 30);
        assertThatThrownBy(() -> Settings.parseBytes("-1M")).isInstanceOf(ArithmeticException.class);
        assertThatThrownBy(() -> Settings.parseBytes("")).isInstanceOf(NumberFormatException.class);
    }
}
