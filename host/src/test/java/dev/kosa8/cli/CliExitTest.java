package dev.kosa8.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * {@link CliExit#halt} in a JVM of its own (it ends the process): what was
 * registered to run at exit runs, once, and what was printed without a line
 * end is not lost; a cancelled action does not run; the exit code is kept.
 */
class CliExitTest {
    /** The child: two actions registered, one cancelled, output without a line end, then the halt. */
    static final class Child {
        public static void main(String[] args) {
            CliExit.atExit(() -> System.out.print(" [ran at exit]"), "test-kept");
            CliExit.cancel(CliExit.atExit(() -> System.out.print(" [cancelled, yet ran]"), "test-cancelled"));
            System.out.print("printed without a line end");
            System.err.print("and on stderr");
            CliExit.halt(7);
        }
    }

    @Test
    void haltRunsWhatWasRegisteredOnceFlushesAndKeepsTheCode() throws Exception {
        ProcessBuilder pb = new ProcessBuilder(List.of(ProcessHandle.current().info().command().orElse("java"), "-cp",
                System.getProperty("java.class.path"), Child.class.getName()));
        pb.environment().remove("JAVA_TOOL_OPTIONS"); // the JVM would say on stderr that it picked them up
        pb.environment().remove("JDK_JAVA_OPTIONS");
        Process p = pb.start();
        assertThat(p.waitFor(60, TimeUnit.SECONDS)).isTrue();
        assertThat(new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8))
                .isEqualTo("printed without a line end [ran at exit]");
        assertThat(new String(p.getErrorStream().readAllBytes(), StandardCharsets.UTF_8)).isEqualTo("and on stderr");
        assertThat(p.exitValue()).isEqualTo(7);
    }
}
