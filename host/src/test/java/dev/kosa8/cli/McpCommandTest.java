package dev.kosa8.cli;

import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.kosa8.host.KosaException;
import org.junit.jupiter.api.Test;

class McpCommandTest {
    @Test
    void theHttpServerListensOnTheLoopbackAloneAndSaysWhyWhenAskedForMore() {
        assertThatCode(() -> McpCommand.checkBind(null)).doesNotThrowAnyException();
        assertThatCode(() -> McpCommand.checkBind("127.0.0.1")).doesNotThrowAnyException();
        assertThatCode(() -> McpCommand.checkBind("localhost")).doesNotThrowAnyException();
        for (String other : new String[] {"0.0.0.0", "::", "192.168.1.2", "127.0.0.2", "example.com"}) {
            assertThatThrownBy(() -> McpCommand.checkBind(other)).as(other).isInstanceOf(KosaException.class)
                    .hasMessageContaining("127.0.0.1 only, not " + other)
                    .hasMessageContaining("run commands on this machine")
                    .satisfies(e -> org.assertj.core.api.Assertions.assertThat(((KosaException) e).suggestion())
                            .contains("ssh -L"));
        }
    }
}
