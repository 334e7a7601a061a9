package dev.kosa8.vm;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@link ConsoleLog}: a guest writing without end keeps the host's log within its limit, the latest lines readable. */
class ConsoleLogTest {
    static final long LIMIT = 64L << 10;

    @TempDir
    Path dir;

    @Test
    void tenMegabytesOfOutputKeepTheLogWithinItsLimitAndTheLatestLinesReadable() throws Exception {
        Path file = dir.resolve("console.log");
        try (ConsoleLog log = ConsoleLog.open(file, LIMIT)) {
            for (int i = 0; i < 200_000; i++) {
                log.write(ByteBuffer.wrap(("line " + i + " of the guest's console output\n")
                        .getBytes(StandardCharsets.UTF_8)));
                if (i % 5000 == 0) {
                    assertThat(bytesKept(file)).as("after %d lines", i).isLessThanOrEqualTo(LIMIT);
                }
            }
        }
        assertThat(bytesKept(file)).isLessThanOrEqualTo(LIMIT).isGreaterThan(LIMIT / 4);
        String tail = ConsoleLog.tail(file, 3);
        assertThat(tail.lines().toList()).containsExactly("line 199997 of the guest's console output",
                "line 199998 of the guest's console output", "line 199999 of the guest's console output");
        assertThat(Files.readString(file).lines().findFirst().orElseThrow()).as("what was dropped is said")
                .contains("earlier output is in console.log.1").containsPattern("\\d+ bytes older than that were dropped")
                .contains("consoleLimit");
    }

    @Test
    void theLatestLinesComeFromTheOlderFileWhenTheNewOneHasFewer() throws Exception {
        Path file = dir.resolve("console.log");
        try (ConsoleLog log = ConsoleLog.open(file, LIMIT)) {
            byte[] line = "x".repeat(99).concat("\n").getBytes(StandardCharsets.UTF_8);
            for (int i = 0; i <= (LIMIT / 2) / line.length; i++) { // one more than half the limit holds
                log.write(ByteBuffer.wrap(line));
            }
            log.write(ByteBuffer.wrap("the last line\n".getBytes(StandardCharsets.UTF_8)));
        }
        assertThat(ConsoleLog.older(file)).exists();
        assertThat(ConsoleLog.tail(file, 4).lines().toList()).hasSize(4).endsWith("the last line")
                .contains("x".repeat(99));
    }

    @Test
    void writersInTurnShareOneLogAndNotesAreMarkedAsKosa8s() throws Exception {
        Path file = dir.resolve("console.log");
        ConsoleLog first = ConsoleLog.open(file, LIMIT);
        ConsoleLog second = ConsoleLog.open(file, LIMIT);
        assertThat(second).isSameAs(first);
        first.write(ByteBuffer.wrap("old machine\n".getBytes(StandardCharsets.UTF_8)));
        first.close();
        second.note("the daemon stopped");
        second.write(ByteBuffer.wrap("new machine\n".getBytes(StandardCharsets.UTF_8)));
        second.close();
        assertThat(Files.readString(file)).startsWith("old machine\n").contains("[kosa8: ")
                .contains(": the daemon stopped]\n").endsWith("new machine\n");
        try (ConsoleLog third = ConsoleLog.open(file, LIMIT)) {
            assertThat(third).as("a log closed by all is opened afresh").isNotSameAs(first);
        }
    }

    private static long bytesKept(Path file) throws Exception {
        Path older = ConsoleLog.older(file);
        return Files.size(file) + (Files.exists(older) ? Files.size(older) : 0);
    }
}
