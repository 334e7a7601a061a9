package dev.kosa8.egress;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@link AuditLog}: however much a guest makes the broker log, the log's files stay within twice its limit. */
class AuditLogTest {
    @TempDir
    Path dir;

    @Test
    void aGuestMakingTheBrokerLogWithoutEndLeavesAtMostTwoFilesOfTheLimit() throws Exception {
        Path file = dir.resolve("net.log");
        List<String> problems = new ArrayList<>();
        long written = 0;
        try (AuditLog log = new AuditLog(file, problems::add)) {
            for (int i = 0; written < 2.5 * AuditLog.MAX_BYTES; i++) {
                AuditEvent e = new AuditEvent(Instant.now(), "http", "host-" + i + ".example", 80, "GET",
                        "/" + "p".repeat(200), "203.0.113.7", "deny", "not on the allow-list", null, null, null);
                log.write(e);
                written += AuditLog.JSON.writeValueAsBytes(e).length + 1;
                if (i % 20_000 == 0) {
                    assertThat(kept(file)).isLessThanOrEqualTo(2 * AuditLog.MAX_BYTES);
                }
            }
            log.write(new AuditEvent(Instant.now(), "dns", "the-last.example", 53, null, null, null, "deny", "last",
                    null, null, null));
        }
        assertThat(kept(file)).as("net.log and net.log.1").isLessThanOrEqualTo(2 * AuditLog.MAX_BYTES)
                .isGreaterThan(AuditLog.MAX_BYTES);
        assertThat(Files.readAllLines(file).getLast()).contains("the-last.example");
        assertThat(problems).isEmpty();
    }

    @Test
    void aLogThatCannotBeWrittenSaysSoOnceNotOncePerEvent() throws Exception {
        Path blocked = dir.resolve("not-a-folder");
        Files.writeString(blocked, "a file where the log's folder should be");
        List<String> problems = new ArrayList<>();
        try (AuditLog log = new AuditLog(blocked.resolve("net.log"), problems::add)) {
            for (int i = 0; i < 1000; i++) {
                log.write(new AuditEvent(Instant.now(), "dns", "x.example", 53, null, null, null, "deny", "r", null,
                        null, null));
            }
        }
        assertThat(problems).singleElement().asString().contains("cannot write the network audit log")
                .contains("dropped until it can be written again");
    }

    private static long kept(Path file) throws Exception {
        Path older = file.resolveSibling("net.log.1");
        return Files.size(file) + (Files.exists(older) ? Files.size(older) : 0);
    }
}
