package dev.kosa8.cli;

import dev.kosa8.client.Json;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.kosa8.protocol.Message;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** What the CLI sends for kept processes, and how it reads durations, ids and states. */
class ProcessCallsTest {
    @Test
    void aStartIsTheCommandItsVariablesAndHowToKeepIt() throws Exception {
        var spec = new Message.ExecSpec(List.of("sh", "-c", "echo \"$A\""), Map.of("A", "1 2"), "/tmp", "nobody",
                false, 0, 0);
        Object body = Json.parse(ProcessCalls.startBody(spec, "build", 90, true));
        assertThat(body).isEqualTo(Map.of("command", List.of("sh", "-c", "echo \"$A\""), "env", Map.of("A", "1 2"),
                "cwd", "/tmp", "user", "nobody", "tag", "build", "timeoutSeconds", 90L, "stdin", true));
    }

    @Test
    void durationsAreSecondsMinutesOrHours() {
        assertThat(ProcessCalls.seconds("90")).isEqualTo(90);
        assertThat(ProcessCalls.seconds("90s")).isEqualTo(90);
        assertThat(ProcessCalls.seconds("5m")).isEqualTo(300);
        assertThat(ProcessCalls.seconds("2h")).isEqualTo(7200);
        assertThatThrownBy(() -> ProcessCalls.seconds("0")).hasMessage("'0' is not a duration");
        assertThatThrownBy(() -> ProcessCalls.seconds("1d")).hasMessage("'1d' is not a duration");
    }

    @Test
    void processIdsAreCheckedBeforeTheyGoIntoAPath() {
        assertThat(ProcessCalls.checkProcess("p12")).isEqualTo("p12");
        assertThatThrownBy(() -> ProcessCalls.checkProcess("../x")).hasMessage("'../x' is not a process id");
    }

    @Test
    void aStatusSaysHowTheProcessEnded() {
        assertThat(ProcsCommand.status(Map.of("state", "running"))).isEqualTo("running");
        assertThat(ProcsCommand.status(Map.of("state", "exited", "exitCode", 0L, "signal", 0L, "reason", "")))
                .isEqualTo("exited 0");
        assertThat(ProcsCommand.status(Map.of("state", "exited", "exitCode", 137L, "signal", 9L,
                "reason", "timed out after 5 s"))).isEqualTo("exited 137 (SIGKILL) timed out");
        assertThat(ProcsCommand.status(Map.of("state", "failed"))).isEqualTo("failed");
    }
}
