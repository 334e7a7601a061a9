package dev.kosa8.vm;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;

class QemuProcessTest {
    /**
     * A restarted daemon reads which directory a running QEMU keeps its
     * sockets in from its command line, whose monitor comes last; the JDK's
     * own reading stops after a page on Linux.
     */
    @Test
    void aLongCommandLineIsReadWholeAndItsMonitorFound() throws Exception {
        String longArgument = "x".repeat(6000);
        Process p = new ProcessBuilder("sh", "-c", "sleep 600; :", "sh", "-append", longArgument, "-qmp",
                "unix:/run/k,,1/alt/qmp.sock,server=on,wait=off").start();
        try {
            String[] arguments = QemuProcess.arguments(p.pid()).orElseThrow();
            assertThat(arguments).containsSubsequence("-append", longArgument, "-qmp");
            assertThat(QemuCommandLine.qmpSocket(arguments)).contains(Path.of("/run/k,1/alt/qmp.sock"));
        } finally {
            p.destroyForcibly().waitFor();
        }
        assertThat(QemuProcess.arguments(p.pid())).as("a process that is gone").isEmpty();
        assertThat(List.of(QemuProcess.arguments(ProcessHandle.current().pid()).orElseThrow())).isNotEmpty();
    }

    @Test
    void aProcessAboutToEndIsPutAtTheLowestPriority() throws Exception {
        Process p = new ProcessBuilder("sh", "-c", "sleep 600; :").start();
        try {
            QemuProcess q = QemuProcess.attach(p.pid(), p.toHandle().info().startInstant().orElseThrow(), null)
                    .orElseThrow();
            assertThat(q.lowerPriority()).isEqualTo(1);
            String stat = java.nio.file.Files.readString(Path.of("/proc", Long.toString(p.pid()), "stat"));
            String[] fields = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
            assertThat(fields[16]).as("nice, field 19 of /proc/PID/stat").isEqualTo("19");
        } finally {
            p.destroyForcibly().waitFor();
        }
    }

    /**
     * The start a daemon records and the one the next daemon reads are each the kernel's boot time in whole
     * seconds plus the process's start since boot; a clock adjusted by milliseconds between the two moves the
     * boot time across a second. The same QEMU must still be found; a start a few seconds away is another process.
     */
    @Test
    void aQemuIsFoundWhenTheBootTimeMovedASecondBetweenTwoDaemonsAndNotWhenItStartedElsewhen() throws Exception {
        Process p = new ProcessBuilder("sh", "-c", "sleep 600; :").start();
        try {
            java.time.Instant recorded = p.toHandle().info().startInstant().orElseThrow();
            assertThat(QemuProcess.attach(p.pid(), recorded.minusSeconds(1), null)).as("boot time one second on")
                    .isPresent();
            assertThat(QemuProcess.attach(p.pid(), recorded.plusSeconds(1).plusMillis(10), null))
                    .as("one second back, and a tick").isPresent();
            assertThat(QemuProcess.attach(p.pid(), recorded.plusSeconds(3), null)).as("another start").isEmpty();
            assertThat(QemuProcess.attach(p.pid(), null, null)).as("no start recorded").isEmpty();
        } finally {
            p.destroyForcibly().waitFor();
        }
    }
}
