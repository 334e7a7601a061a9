package dev.kosa8.image;

import dev.kosa8.host.KosaException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** {@link BuilderVm#run} and {@link BuilderConsole} with a shell script standing in for QEMU's console. */
class BuilderConsoleTest {
    private static List<String> sh(String script) {
        return List.of("sh", "-c", script);
    }

    @Test
    void aBuildThatSaysOkSucceedsItsStepsAreTheProgressAndTheLogHasEachLineTimed(@TempDir Path dir) throws Exception {
        Path log = dir.resolve("build.log");
        List<String> progress = new ArrayList<>();
        BuilderVm.run(sh("printf 'kernel noise\\n\\033[32mI: extracting archives...\\033[0m\\nkosa8-builder: mke2fs\\n"
                + BuilderVm.OK + "\\n'"), log, progress::add, Duration.ofSeconds(30));
        assertThat(progress).containsExactly("builder VM: extracting archives...", "builder VM: mke2fs");
        assertThat(Files.readString(log)).containsPattern("\\[ +[0-9.]+ s\\] kernel noise").contains(BuilderVm.OK)
                .doesNotContain("\u001B");
    }

    @Test
    void aFailedMarkerWinsOverAnOkAndTheErrorNamesTheLastLines(@TempDir Path dir) {
        assertThatThrownBy(() -> BuilderVm.run(sh("echo 'KOSA8-BUILDER-FAILED: mke2fs'; echo " + BuilderVm.OK),
                dir.resolve("log"), l -> { }, Duration.ofSeconds(30)))
                .isInstanceOf(KosaException.class).hasMessageContaining("stopped without finishing")
                .hasMessageContaining("KOSA8-BUILDER-FAILED: mke2fs");
        assertThatThrownBy(() -> BuilderVm.run(sh("echo almost; exit 3"), dir.resolve("log"), l -> { },
                Duration.ofSeconds(30))).isInstanceOf(KosaException.class).hasMessageContaining("exit status 3")
                .hasMessageContaining("almost");
    }

    @Test
    void aBuilderStillRunningAtTheTimeoutIsKilled(@TempDir Path dir) {
        long t = System.nanoTime();
        assertThatThrownBy(() -> BuilderVm.run(sh("echo started; exec sleep 60"), dir.resolve("log"), l -> { },
                Duration.ofSeconds(1))).isInstanceOf(KosaException.class).hasMessageContaining("did not finish within");
        assertThat(Duration.ofNanos(System.nanoTime() - t)).isLessThan(Duration.ofSeconds(30));
    }

    @Test
    void anEndlessLineIsCutAndControlSequencesNeverReachTheTerminal(@TempDir Path dir) throws Exception {
        Path log = dir.resolve("log");
        List<String> progress = new ArrayList<>();
        // 3 MB without a newline, then a title-setting escape and a bell in a progress line
        BuilderVm.run(sh("head -c 3000000 /dev/zero | tr '\\0' x; printf '\\nkosa8-builder: \\033]0;pwned\\007ok\\a\\b\\n"
                + BuilderVm.OK + "\\n'"), log, progress::add, Duration.ofSeconds(30));
        assertThat(Files.readString(log).lines().mapToInt(String::length).max().orElseThrow())
                .isLessThan(BuilderConsole.MAX_LINE + 20);
        assertThat(progress).containsExactly("builder VM: ok");
        assertThat(BuilderConsole.clean("a\u001B[?25lb\u001B[2Jc\u009Bd\te")).isEqualTo("abcd\te");
    }
}
